"""Grading a batch of submissions into an output folder and a store of grades.

Jobs run on any ``concurrent.futures.Executor`` (a local process pool by default); each job grades
one submission and returns its report as plain data. Only this process writes reports and records
them in the store (the gradebook, for the commands), one submission at a time as results arrive, so
a batch killed midway keeps everything graded so far and a rerun skips it. The engine knows no
database: a store is anything with ``GradeStore``'s two methods.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from untrusted.text import bounded, storable

from .assignment import Assignment
from .errors import AssignmentError
from .pool import LocalPool, pool_job
from .references import ReferenceChoice, load_reference, resolve_reference
from .reports import PER_STUDENT
from .reports.model import QuestionResult, Report
from .sandbox.limits import Limits
from .sandbox.preflight import check_limits
from .sandbox.runners import Runner, make_runner
from .secret import grader_secret
from .submissions import Submission
from .version import grader_version

JOB_ATTEMPTS = 2


class GradeOptions(BaseModel):
    reference: ReferenceChoice = "auto"
    timeout: float | None = Field(default=None, gt=0)
    memory_mib: int | None = Field(default=None, ge=64)
    unsafe_no_sandbox: bool = False
    force: bool = False
    jobs: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)
    # Regrade this question alone (its hidden tests; the other questions' results stand as recorded).
    question: str | None = None

    def limits(self, assignment: Assignment) -> Limits:
        updates: dict = {}
        if self.timeout is not None:
            updates["call_timeout"] = self.timeout
            updates["submission_timeout"] = max(assignment.limits.submission_timeout, self.timeout)
        if self.memory_mib is not None:
            updates["memory_mib"] = self.memory_mib
        return assignment.limits.model_copy(update=updates)

    def runner(self, assignment: Assignment) -> Runner:
        """The sandbox that runs the assignment's student code in this process (one per sandbox's
        packages and safety, kept for the process: its zygote is started once)."""
        return _runner(self.unsafe_no_sandbox, tuple(assignment.sandbox_packages))


class GradeStore(Protocol):
    """Where a batch records what it grades."""

    def is_graded(self, submission: Submission) -> bool:
        """Whether this very submission (same student, same hash) is recorded already."""
        ...

    def record(self, report: Report) -> Report:
        """Record a graded submission, and give back its report as it is to be shown (with what the
        store adds: marks given by hand, a late penalty)."""
        ...


class Unrecorded:
    """A store that keeps nothing: every submission is graded, every report shown as graded."""

    def is_graded(self, submission: Submission) -> bool:
        return False

    def record(self, report: Report) -> Report:
        return report


class BatchResult(BaseModel):
    reports: list[Report] = []
    skipped: list[str] = []
    failed: list[str] = []  # students the grader itself failed on (not recorded; regraded next run)

    @property
    def all_ran(self) -> bool:
        return not self.failed and all(report.ran for report in self.reports)


def grade_batch(
    assignment: Assignment,
    submissions: list[Submission],
    out: Path,
    options: GradeOptions,
    store: GradeStore | None = None,
    executor: Executor | None = None,
    on_result: Callable[[Submission, Report | None], None] | None = None,
    job: Callable[..., dict] | None = None,
) -> BatchResult:
    """Grade ``submissions`` into ``out`` and ``store``. Jobs go to ``executor`` when one is
    given (a Dask cluster's, say), else to a local process pool of ``options.jobs`` (inline for one
    job). ``job`` replaces ``grade_job``, for tests that inject faults."""
    if options.question is not None:
        known = [question.id for question in assignment.questions]
        if options.question not in known:
            raise AssignmentError(
                f"{assignment.name}: no question {options.question!r} (its questions: {', '.join(known)})"
            )
        if store is None:
            raise AssignmentError("a regrade of one question needs the gradebook that holds the others' results")
        options = options.model_copy(update={"force": True})  # a regrade, of files graded before
    out.mkdir(parents=True, exist_ok=True)
    if executor is None:
        prepare_sandbox(assignment, options, len(submissions))
    # A hidden test that cannot be collected is the instructor's to fix: said once, before anything is
    # graded. (Collected while the sandbox starts: check_limits below waits for the zygote to be
    # ready. A grading process of its own collects it again.)
    from .suite import hidden_suite

    hidden_suite(assignment)
    if executor is None:
        # Refuse early, saying what is missing or which limit is too low, if the sandbox cannot start.
        check_limits(
            options.runner(assignment),
            options.limits(assignment),
            tuple(assignment.sandbox_packages),
        )
    reference_kind = resolve_reference(options.reference, assignment)
    store = store if store is not None else Unrecorded()
    result = BatchResult()
    todo = _not_yet_graded(submissions, options, store, result, on_result)
    job_args = (
        assignment.model_dump(mode="json"),
        options.model_dump(mode="json"),
        reference_kind,
        grader_secret(assignment),
    )
    pool = (
        executor if executor is not None else (None if grades_inline(options, len(todo)) else LocalPool(options.jobs))
    )
    try:
        for submission, future in _finished_jobs(todo, pool, job or grade_job, job_args):
            report = _record(assignment, submission, future, out, store, result)
            if on_result:
                on_result(submission, report)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): end every grading process now, and with them their sandboxes.
        if isinstance(pool, LocalPool):
            pool.kill()
        raise
    finally:
        if isinstance(pool, LocalPool):
            pool.shutdown()
    return result


def grades_inline(options: GradeOptions, submissions: int) -> bool:
    """Whether a local batch grades in this process (else in a pool of ``options.jobs`` processes)."""
    return options.jobs == 1 or submissions <= 1


def prepare_sandbox(assignment: Assignment, options: GradeOptions, submissions: int = 1) -> None:
    """Start this process's sandbox (its zygote's imports) without waiting for it: called first by
    whoever grades ``submissions`` locally, so that it gets ready while they open their gradebook
    and load the reference. Nothing is started for a batch that a pool's processes grade (each has
    its own sandbox; this one would only take a core from them while it starts, and memory after).
    Raises SandboxUnavailable, saying what is missing, as grading would."""
    runner = options.runner(assignment)
    if grades_inline(options, submissions):
        runner.prestart(options.limits(assignment))


def _not_yet_graded(
    submissions: list[Submission],
    options: GradeOptions,
    store: GradeStore,
    result: BatchResult,
    on_result: Callable[[Submission, Report | None], None] | None,
) -> list[Submission]:
    """The submissions to grade: all with ``force``, else those the store has not recorded."""
    todo = []
    for submission in submissions:
        if not options.force and store.is_graded(submission):
            result.skipped.append(submission.student)
            if on_result:
                on_result(submission, None)
        else:
            todo.append(submission)
    return todo


def _finished_jobs(
    todo: list[Submission], pool: Executor | LocalPool | None, job: Callable[..., dict], job_args: tuple
) -> Iterator[tuple[Submission, Future]]:
    """Each submission's job as it finishes: inline without a pool, else on the pool with retries."""
    if pool is None:
        return ((s, _run_inline(job, s.model_dump(mode="json"), *job_args)) for s in todo)
    submit: Callable[..., Future] = pool.submit
    resubmit: Callable[..., Future] = pool.submit_alone if isinstance(pool, LocalPool) else pool.submit
    # A failure in the shared local pool may be another job's doing (a dead process fails every
    # pending job), so the local pool allows one more try, and every retry runs alone.
    return _with_retries(
        todo,
        lambda s: submit(job, s.model_dump(mode="json"), *job_args),
        lambda s: resubmit(job, s.model_dump(mode="json"), *job_args),
        JOB_ATTEMPTS + 1 if isinstance(pool, LocalPool) else JOB_ATTEMPTS,
    )


def _record(
    assignment: Assignment, submission: Submission, future: Future, out: Path, store: GradeStore, result: BatchResult
) -> Report:
    """Record a finished job in the store and write its reports, unless the grader itself failed
    (then it says so, records nothing, and the next run grades it again)."""
    try:
        report = Report.model_validate(future.result())
    except Exception as exc:  # the grader failed, not the student
        result.failed.append(submission.student)
        report = failure_report(assignment, submission, exc)
        write_reports(report, out)
        return report
    # The gradebook gives the report back with its marks and lateness; the values of a notebook of
    # one's own are this grading's (the gradebook keeps their sentence, in the report's errors).
    report = store.record(report).model_copy(update={"own_values": report.own_values})
    write_reports(report, out)
    result.reports.append(report)
    return report


def _with_retries(
    todo: list[Submission],
    submit: Callable[[Submission], Future],
    resubmit: Callable[[Submission], Future],
    tries: int,
) -> Iterator[tuple[Submission, Future]]:
    """Each submission's finished job, as it finishes. A job whose future failed (a killed worker, a
    broken pool: grade_job itself never raises for anything a student did) is submitted again with
    ``resubmit``, up to ``tries`` in all, so a job that kills every worker it lands on ends after
    bounded tries while the jobs it took down with it are graded. A retry runs alone, once nothing
    else is running: a job that kills every worker takes no other job's retry down with it (on a
    cluster, a job lost with a worker its neighbour killed would otherwise spend its tries so)."""
    pending = {submit(submission): submission for submission in todo}
    attempts = dict.fromkeys((submission.student for submission in todo), 1)
    retries: deque[tuple[Submission, Future]] = deque()  # each with the failure to report if it cannot go again
    while pending or retries:
        if not pending:
            submission, failed = retries.popleft()
            try:
                pending[resubmit(submission)] = submission
            except Exception:  # cannot resubmit: report the failure before
                yield submission, failed
            continue
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            submission = pending.pop(future)
            if future.exception() is not None and attempts[submission.student] < tries:
                attempts[submission.student] += 1
                retries.append((submission, future))
                continue
            yield submission, future


def grade_job(submission: dict, assignment: dict, options: dict, reference_kind: str, secret: str = "") -> dict:
    """One submission, graded in whichever process runs the job; plain data in and out."""
    with pool_job():
        return _grade_job(submission, assignment, options, reference_kind, secret)


def _grade_job(submission: dict, assignment: dict, options: dict, reference_kind: str, secret: str) -> dict:
    # pytest comes with grading, not with this module: a command that grades launches its sandbox
    # first (prepare_sandbox), and pytest's import then overlaps the sandbox's start.
    from .grading import grade_submission

    assignment_model = Assignment.model_validate(assignment)
    grade_options = GradeOptions.model_validate(options)
    report = grade_submission(
        assignment_model,
        Submission.model_validate(submission),
        grade_options.runner(assignment_model),
        load_reference(assignment_model, reference_kind),
        grade_options.limits(assignment_model),
        secret,
        grade_options.question,
    )
    return report.model_dump(mode="json")


@cache
def _runner(unsafe: bool, packages: tuple[str, ...]) -> Runner:
    return make_runner(unsafe, packages)


def failure_report(assignment: Assignment, submission: Submission, exc: BaseException) -> Report:
    reason = (
        f"the grader failed on this submission ({type(exc).__name__}: {bounded(str(exc), 300)}); "
        "it was not recorded and will be regraded"
    )
    return Report(
        student=submission.student,
        assignment=assignment.name,
        score=0.0,
        max_score=assignment.max_score,
        questions=[
            QuestionResult(id=q.id, title=q.title, score=0.0, max_score=q.points, status="error", feedback=reason)
            for q in assignment.questions
        ],
        errors=[reason],
        submission=storable(str(submission.path)),
        sha256=submission.sha256,
        reference="none",
        sandbox="none",
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        grader_version=grader_version(),
        ran=False,
        submitted_at=submission.submitted_at.isoformat(timespec="seconds") if submission.submitted_at else None,
        feedback=assignment.feedback,
    )


def write_reports(report: Report, out: Path) -> None:
    """Every per-student file of a report (reports.PER_STUDENT) into ``out``."""
    for write in PER_STUDENT.values():
        write(report, out)


def _run_inline(function, *args) -> Future:
    future: Future = Future()
    try:
        future.set_result(function(*args))
    except Exception as exc:  # delivered like a pool's failure
        future.set_exception(exc)
    return future
