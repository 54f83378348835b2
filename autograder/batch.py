"""Grading a batch of submissions into an output folder and the gradebook.

Jobs run on any ``concurrent.futures.Executor`` (a local process pool by default); each job grades
one submission and returns its report as plain data. Only this process writes reports and the
gradebook, one submission at a time as results arrive, so a batch killed midway keeps everything
graded so far and a rerun skips it.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Literal

from pydantic import BaseModel, Field

from .assignment import Assignment
from .errors import AssignmentError
from .gradebook import Gradebook
from .grading import grade_submission, grader_version
from .report import QuestionResult, Report
from .reports import PER_STUDENT
from .sandbox.process import Limits
from .sandbox.runners import Runner, make_runner
from .submissions import Submission

ReferenceChoice = Literal["auto", "numpy", "torch"]


class GradeOptions(BaseModel):
    reference: ReferenceChoice = "auto"
    timeout: float | None = Field(default=None, gt=0)
    memory_mib: int | None = Field(default=None, ge=64)
    unsafe_no_sandbox: bool = False
    force: bool = False
    jobs: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)

    def limits(self, assignment: Assignment) -> Limits:
        updates: dict = {}
        if self.timeout is not None:
            updates["call_timeout"] = self.timeout
            updates["submission_timeout"] = max(assignment.limits.submission_timeout, self.timeout)
        if self.memory_mib is not None:
            updates["memory_mib"] = self.memory_mib
        return assignment.limits.model_copy(update=updates)


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
    gradebook_path: Path | None = None,
    executor: Executor | None = None,
    on_result: Callable[[Submission, Report | None], None] | None = None,
) -> BatchResult:
    out.mkdir(parents=True, exist_ok=True)
    make_runner(options.unsafe_no_sandbox)  # refuse early, with what is missing, if the sandbox cannot start
    reference_kind = resolve_reference(options.reference, assignment)
    gradebook = Gradebook(gradebook_path or out / "gradebook.db")
    result = BatchResult()
    try:
        todo = []
        for submission in submissions:
            if not options.force and gradebook.graded_hash(submission.student, assignment.name) == submission.sha256:
                result.skipped.append(submission.student)
                if on_result:
                    on_result(submission, None)
            else:
                todo.append(submission)
        job_args = (assignment.model_dump(mode="json"), options.model_dump(mode="json"), reference_kind)
        own_executor = executor is None and options.jobs > 1 and len(todo) > 1
        # forkserver: a pool forked from this process would inherit whatever it initialised
        # (torch's thread pools deadlock in a forked child).
        pool = (
            ProcessPoolExecutor(max_workers=options.jobs, mp_context=multiprocessing.get_context("forkserver"))
            if own_executor
            else executor
        )
        try:
            if pool is None:
                outcomes = ((s, _run_inline(grade_job, s.model_dump(mode="json"), *job_args)) for s in todo)
            else:
                futures = {pool.submit(grade_job, s.model_dump(mode="json"), *job_args): s for s in todo}
                outcomes = ((futures[f], f) for f in as_completed(futures))
            for submission, future in outcomes:
                try:
                    report = Report.model_validate(future.result())
                except Exception as exc:  # the grader failed, not the student: say so, record nothing
                    result.failed.append(submission.student)
                    report = failure_report(assignment, submission, exc)
                    _write_reports(report, out)
                else:
                    _write_reports(report, out)
                    gradebook.record(report)
                    result.reports.append(report)
                if on_result:
                    on_result(submission, report)
        finally:
            if own_executor and pool is not None:
                pool.shutdown(cancel_futures=True)
        gradebook.write_csv(assignment.name, [q.id for q in assignment.questions], out / "grades.csv")
    finally:
        gradebook.close()
    return result


def grade_job(submission: dict, assignment: dict, options: dict, reference_kind: str) -> dict:
    """One submission, graded in whichever process runs the job; plain data in and out."""
    assignment_model = Assignment.model_validate(assignment)
    grade_options = GradeOptions.model_validate(options)
    report = grade_submission(
        assignment_model,
        Submission.model_validate(submission),
        _runner(grade_options.unsafe_no_sandbox),
        load_reference(assignment_model, reference_kind),
        grade_options.limits(assignment_model),
    )
    return report.model_dump(mode="json")


def resolve_reference(choice: ReferenceChoice, assignment: Assignment) -> str:
    """``auto`` is torch where torch sees a GPU, numpy elsewhere."""
    if choice != "auto":
        load_reference(assignment, choice)  # fail now, with a clear message, if it cannot load
        return choice
    try:
        import torch
    except ImportError:
        return "numpy"
    return "torch" if torch.cuda.is_available() else "numpy"


@cache
def _reference_from(folder: str, kind: str) -> ModuleType:
    path = Path(folder) / f"{kind}_reference.py"
    spec = importlib.util.spec_from_file_location(f"module10_{kind}_reference", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise AssignmentError(f"{path}: no {kind} reference for this assignment")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise AssignmentError(
            f"the {kind} reference needs {exc.name}: install it (pip install '.[gpu]' for torch)"
        ) from None
    return module


def load_reference(assignment: Assignment, kind: str) -> ModuleType:
    return _reference_from(str(assignment.references_path), kind)


@cache
def _runner(unsafe: bool) -> Runner:
    return make_runner(unsafe)


def failure_report(assignment: Assignment, submission: Submission, exc: BaseException) -> Report:
    reason = (
        f"the grader failed on this submission ({type(exc).__name__}: {exc}); it was not recorded and will be regraded"
    )
    return Report(
        student=submission.student,
        assignment=assignment.name,
        score=0.0,
        max_score=assignment.max_score,
        questions=[
            QuestionResult(id=q.id, score=0.0, max_score=q.points, status="error", feedback=reason)
            for q in assignment.questions
        ],
        errors=[reason],
        submission=str(submission.path),
        sha256=submission.sha256,
        reference="none",
        sandbox="none",
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        grader_version=grader_version(),
        ran=False,
    )


def _write_reports(report: Report, out: Path) -> None:
    for write in PER_STUDENT.values():
        write(report, out)


def _run_inline(function, *args) -> Future:
    future: Future = Future()
    try:
        future.set_result(function(*args))
    except Exception as exc:  # noqa: BLE001 - delivered like a pool's failure
        future.set_exception(exc)
    return future
