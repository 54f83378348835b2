"""``autograder worker``: grade queued hand-ins, one at a time, until stopped; while none waits, run
the students' practice checks, grade the exams and compute the similarity reports queued. Workers
run the engine (the sandbox) and nothing else of the site; any number of them, on any machine that
shares the database and the course folder."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import DatabaseError

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import course_assignment
from autograder.batch import GradeOptions, grade_batch
from autograder.errors import AutograderError
from autograder.reports.model import Report
from autograder.submissions import Submission
from course.folder import CourseFolder
from gradebook.book import Gradebook
from gradebook.errors import GradebookError, LeaseLost
from gradebook.grading import store_for
from service.core.live_settings import grading_spec
from service.core.logs import job_context, job_outcome
from service.core.outage import Backoff, database_lost, forget_connections
from service.errors import UploadUnreadable
from service.exams.grading import grade_queued_exam
from service.lti.outbox import ScoreSender
from service.operations.health import gone, seen
from untrusted.text import one_line

from .models import Job
from .practice import run_queued_practice
from .queue import MAX_ATTEMPTS, Lease, claim, finish, release
from .uploads import stored_upload
from .wakeup import Waiter

if TYPE_CHECKING:
    from gradebook.models import Submission as Recorded

logger = logging.getLogger("gradewright.worker")


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class JobStore:
    """The gradebook as a store for one job: its grade is recorded and the job ended in one
    transaction, so a graded job never lacks its grade and a grade never lacks its job's end."""

    def __init__(self, book: Gradebook, spec: AssignmentSpec, job: Job):
        self.inner = store_for(book, spec)
        self.book, self.spec, self.job = book, spec, job

    def is_graded(self, submission: Submission) -> bool:
        return False  # a hand-in is graded as its own submission, whatever its bytes; a regrade, forced

    def record(self, report: Report) -> Report:
        from service.lti.scores import queue_scores

        def end_job(recorded: Recorded) -> None:
            finish(self.job, recorded.id)
            self.job.submission_id = recorded.id  # as the row now says: the job's "graded" line names it
            queue_scores(self.book, self.spec, self.job.student)  # the outbox: sent later, never on grading's time

        # A hand-in: a submission of its own, at the job's time. A regrade: the submission it grades
        # again (a regrade queued before regrades named theirs: the same file's latest).
        if self.job.regrade:
            return self.inner.record(report, then=end_job, into=self.job.submission_id or self._same_file())
        return self.inner.record(report, then=end_job, submitted_at=self.job.created_at)

    def _same_file(self) -> int | None:
        from gradebook.models import Submission as Recorded

        rows = Recorded.objects.filter(
            student=self.job.student, assignment__name=self.spec.name, sha256=self.job.sha256
        )
        return rows.order_by("-submitted_at", "-id").values_list("id", flat=True).first()


def grade_one(
    job: Job, course: CourseFolder, state: Path, options: GradeOptions, executor: Executor | None = None
) -> None:
    """Grade a claimed job into the gradebook, and end it."""
    spec = grading_spec(course, job.assignment)  # as it last read, while a typo keeps it from reading
    book = Gradebook("default", "the service's database")
    path = stored_upload(state, job.file)
    try:
        with path.open("rb"):  # the stored file, as kept: one that is gone fails the job, and replaces no grade
            pass
    except OSError as exc:
        raise UploadUnreadable(
            f"the stored upload {job.file} cannot be read ({exc.strerror or exc}); no grade was changed"
        ) from None
    # A regrade keeps its submission's hand-in time (the late penalty is the hand-in's, never the regrade's).
    handed_in = job.submission.submitted_at if job.regrade and job.submission is not None else None
    submission = Submission(
        student=job.student.student_id, path=path, sha256=job.sha256, submitted_at=handed_in or job.created_at
    )
    if job.regrade:
        options = options.model_copy(update={"force": True, "question": job.question or None})
    from django.utils import timezone

    job.started_at = timezone.now()  # written with the job's end (queue.finish)
    job_outcome(job, "claimed")
    with Lease(job):
        result = grade_batch(
            spec,
            [submission],
            state / "reports" / spec.name,
            options,
            store=JobStore(book, spec, job),
            executor=executor,
        )
    if result.failed:
        raise AutograderError("the grader failed on this submission")
    job_outcome(job, "graded", _took(job))


def _took(job: Job) -> float:
    """Seconds from the hand-in to now: what the student waited."""
    from django.utils import timezone

    return (timezone.now() - job.created_at).total_seconds()


def run_worker(
    course: CourseFolder, state: Path, options: GradeOptions, once: bool = False, executor: Executor | None = None
) -> int:
    """Grade jobs as they come; with ``once``, until the queue is empty. The number graded. With an
    ``executor`` (a Dask cluster's), the sandbox runs there and this process keeps the queue."""
    name = worker_name()
    if executor is None and not once:
        warm_up(course, options)
    # The scores for the course platforms go from a thread of their own, never from this loop: a
    # platform that hangs or is down holds no grading. With ``once``, the outbox is left for a
    # running worker or `autograder lti send-scores`.
    sender = None if once else ScoreSender().start()
    try:
        return _grade_jobs(name, course, state, options, once, executor)
    finally:
        if sender is not None:
            sender.stop()
        if not once:
            with contextlib.suppress(DatabaseError):
                gone(name)


def _grade_jobs(
    name: str, course: CourseFolder, state: Path, options: GradeOptions, once: bool, executor: Executor | None
) -> int:
    graded = 0
    # Made before the first look at the queue, so that a job queued after any look ends the wait that
    # follows it (service/handin/wakeup.py). `once` never waits.
    waiter = None if once else Waiter()
    woken_by, said = "", False
    retry = Backoff()
    in_flight: Job | None = None  # a job whose grading the database's going away interrupted
    while True:
        try:
            if in_flight is not None:
                # With its lease (if another worker took it meanwhile, nothing changes), and without
                # counting the attempt: the database's fault, not the submission's.
                release(in_flight, charged=False)
                in_flight = None
            if not once:
                seen(name)  # alive, for /readyz and the metrics (service/operations/health.py)
            job = claim(name, woken_by)
            retry.reset()
        except Exception as exc:
            if not database_lost(exc):
                raise
            _ride_out(name, exc, retry)
            continue
        woken_by = ""  # a look straight after a job, or after a similarity report, was woken by nothing
        try:
            if job is None:
                # No hand-in waits: a student's practice checks (a student waits for them too, but a
                # hand-in's grade comes first), an exam to grade, then a similarity report the staff
                # asked for, which stops for the hand-ins that come while it runs (a report may take a minute).
                if run_queued_practice(name, course, state, options, executor):
                    continue
                if grade_queued_exam(name):  # an online exam the staff asked to grade
                    continue
                first = GradeFirst(name, course, state, options, executor)
                if similarity_queued(course, name, first):
                    graded += first.graded
                    continue
                if waiter is None:
                    return graded
                if not said:  # said once: the worker is ready and waits (what an operator or a test waits for)
                    print(f"worker {name}: waiting for hand-ins ({waiter.how})", flush=True)
                    said = True
                woken_by = waiter.wait()
                continue
            graded += grade_claimed(job, course, state, options, executor)
        except DatabaseAway as away:
            in_flight = away.job
            _ride_out(name, away.__cause__, retry)
        except Exception as exc:
            if not database_lost(exc):
                raise
            _ride_out(name, exc, retry)


class DatabaseAway(Exception):
    """The database went away while ``job`` was graded (``grade_claimed``): the worker's loop gives
    the job back to the queue once the database is there again."""

    def __init__(self, job: Job):
        super().__init__(f"job {job.pk}: the database went away")
        self.job = job


def _ride_out(name: str, exc: BaseException | None, retry: Backoff) -> None:
    """The database is away: one warning line (no traceback), its broken connections closed, a wait."""
    delay = retry.next()
    logger.warning(
        "worker %s: the database cannot be reached (%s: %s); trying again in %g s",
        name,
        type(exc).__name__,
        one_line(str(exc))[:200],
        delay,
    )
    forget_connections()
    time.sleep(delay)


def grade_claimed(job: Job, course: CourseFolder, state: Path, options: GradeOptions, executor: Executor | None) -> int:
    """Grade a claimed job: 1 when it was graded, 0 when the grader failed (the job is then tried
    again by a later claim, or ended as failed once its attempts run out)."""
    try:
        try:
            grade_one(job, course, state, options, executor)
        except Exception as exc:
            if database_lost(exc):  # the machine's fault, not the grader's: given back, never failed
                raise DatabaseAway(job) from exc
            raise
    except LeaseLost:
        return 0  # another worker holds the job now: nothing of this grading was kept (logged by the rule)
    except UploadUnreadable as exc:  # trying again would not help: the job fails at once, with why
        finish(job, None, error=str(exc), strict=False)
        job_outcome(job, "failed", _took(job), str(exc))
        return 0
    except (AutograderError, GradebookError) as exc:
        # The grader's own failure (the student's failures are in their report): tried again
        # by the next claim until the attempts run out, then the job ends as failed.
        if job.attempts >= MAX_ATTEMPTS:
            finish(job, None, error=str(exc), strict=False)
            job_outcome(job, "failed", _took(job), str(exc))
        else:
            release(job)
            job_outcome(job, "retried", _took(job), str(exc))
        return 0
    except DatabaseAway:
        raise  # given back by the loop, once the database is there again
    except BaseException:
        # Stopped mid-job (SIGTERM, Ctrl-C): the job goes back to the queue for the next worker.
        release(job)
        job_outcome(job, "released", _took(job), "the worker stopped")
        raise
    return 1


class GradeFirst:
    """Called by a similarity report between its steps: grades the hand-ins queued meanwhile, then
    lets the report go on. Looks at the queue at most every ``EVERY`` seconds (a claim is a
    transaction; a report has thousands of steps)."""

    EVERY = 0.2

    def __init__(self, name: str, course: CourseFolder, state: Path, options: GradeOptions, executor: Executor | None):
        self.name, self.course, self.state, self.options, self.executor = name, course, state, options, executor
        self.graded = 0
        self.last = time.monotonic()

    def __call__(self) -> None:
        if time.monotonic() - self.last < self.EVERY:
            return
        seen(self.name)  # alive through a long report too
        while (job := claim(self.name)) is not None:
            with job_context(job):
                self.graded += grade_claimed(job, self.course, self.state, self.options, self.executor)
        self.last = time.monotonic()


def similarity_queued(course: CourseFolder, name: str, pause: Callable[[], None] | None = None) -> bool:
    """Compute one similarity report queued from the staff's page, if any (gradebook.similarity.report);
    ``pause`` is called between its steps (``GradeFirst``: the hand-ins queued meanwhile)."""
    from gradebook.similarity.report import work_on_queued

    book = Gradebook("default", "the service's database")
    return work_on_queued(book, lambda assignment: grading_spec(course, assignment), name, pause)


def warm_up(course: CourseFolder, options: GradeOptions) -> None:
    """Before the first job: start this worker's sandbox (the zygote's imports, and a first sandbox
    with the first assignment's limits) and collect every assignment's hidden suite, so that the
    first student a worker serves does not wait for them (0.6 to 1 s). What cannot be started or
    collected here is left for the jobs, which report it as they would have."""
    from autograder.batch import prepare_sandbox
    from autograder.suite import hidden_suite

    specs = []
    for name in course.assignment_folders:
        try:
            specs.append(course_assignment(course, name))
        except AutograderError:
            continue
    if specs:
        with contextlib.suppress(AutograderError):
            prepare_sandbox(specs[0], options)
    for spec in specs:
        with contextlib.suppress(AutograderError):
            hidden_suite(spec)
