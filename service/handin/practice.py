"""A student's runs of their practice checks (autograder.practice: hidden tests marked ``practice``,
which they may run but never read). The site never runs them: the page or the API queues a
``PracticeJob`` (``request_practice``: on the student's latest hand-in, or a notebook sent for the
run alone), under the assignment's ``practice_per_hour`` counted with the student's row held, as a
hand-in's limits are (``service.core.limits``); a worker with no hand-in waiting claims it by the one lease rule
(``gradebook.leases``), runs the checks in the sandbox, and keeps what the student may read of each:
its question, its sentence and whether it passed. A run counts in no score and in none of the
hand-in limits."""

from __future__ import annotations

import hashlib
import logging
import shutil
import uuid
from concurrent.futures import Executor
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from autograder.assignment import Assignment as AssignmentSpec
from autograder.batch import GradeOptions
from autograder.errors import AutograderError
from autograder.practice import practice_checks, practice_job
from autograder.references import resolve_reference
from autograder.secret import grader_secret
from autograder.submissions import Submission
from course.folder import CourseFolder
from course.wording import plural
from gradebook.leases import LeaseRule, Renewer
from gradebook.models import Student
from service.core.limits import full_until, hold, seconds_until
from service.core.live_settings import grading_spec
from service.errors import TooManyHandIns, UploadRefused

from .live import LATER, SOON
from .models import Job, PracticeJob
from .uploads import check_content, stored_upload

LEASE = timedelta(seconds=60)
RENEW_EVERY = 15.0  # seconds
MAX_ATTEMPTS = 3
RUNS = LeaseRule(PracticeJob, LEASE, what="practice run")
FOLDER = "practice"  # under the state folder: the notebooks sent for one run, removed once it has run
SOON_FOR = timedelta(seconds=15)  # the page asks again often this long after the request, then seldom
COULD_NOT = "the practice checks could not be run this time; try again later"
logger = logging.getLogger("gradewright.jobs")


def practice_count(spec: AssignmentSpec) -> int:
    """How many practice checks the assignment has (0: nothing to run)."""
    return len(practice_checks(spec))


def _recent(student: Student, spec: AssignmentSpec):
    """The student's runs of the assignment's practice checks within the rolling hour (a run the
    grader failed on is the machine's fault: not counted)."""
    since = timezone.now() - timedelta(hours=1)
    return PracticeJob.objects.filter(student=student, assignment=spec.name, created_at__gte=since).exclude(
        state=PracticeJob.FAILED
    )


def _refusal(student: Student, spec: AssignmentSpec) -> UploadRefused | None:
    if not practice_count(spec):
        return UploadRefused("this assignment has no practice checks")
    again = full_until(_recent(student, spec), "created_at", spec.practice_per_hour, timedelta(hours=1))
    if again is not None:
        return TooManyHandIns(
            f"{plural(spec.practice_per_hour, 'run')} of the practice checks per hour: "
            f"the next one is possible at {again:%H:%M} UTC",
            seconds_until(again, timezone.now()),
        )
    return None


def practice_allowance(student: Student, spec: AssignmentSpec) -> str | None:
    """Why the student may not run the practice checks now, or None (advice: the rule is
    ``request_practice``'s, counted with the student's row held)."""
    refused = _refusal(student, spec)
    return None if refused is None else str(refused)


def runs_left(student: Student, spec: AssignmentSpec) -> int:
    return max(0, spec.practice_per_hour - _recent(student, spec).count())


def request_practice(
    state: Path,
    student: Student,
    spec: AssignmentSpec,
    upload: tuple[str, bytes] | None = None,
    question: str = "",
) -> PracticeJob:
    """Queue a run of the practice checks (``question``'s alone, if given) on ``upload`` (a notebook
    sent for this run: (its name, its bytes)), else on the student's latest hand-in. Raises
    UploadRefused saying why (TooManyHandIns, with its Retry-After, over the hourly limit)."""
    from .wakeup import announce

    if question and question not in {q.id for q in spec.questions}:
        raise UploadRefused(f"no question {question!r} in {spec.name}")
    refused = _refusal(student, spec)  # early, unlocked: a student at the limit costs no disk write
    if refused is not None:
        raise refused
    folder: Path | None = None
    handed_in: Job | None = None
    if upload is None:
        handed_in = (
            Job.objects.filter(student=student, assignment=spec.name, regrade=False)
            .exclude(state=Job.FAILED)
            .order_by("-id")
            .first()
        )
        if handed_in is None:
            raise UploadRefused("hand in your notebook first, or choose one to run the practice checks on")
        kept = {"file": handed_in.file, "original_name": handed_in.original_name, "sha256": handed_in.sha256}
    else:
        name, data = upload
        check_content(name, data)
        folder = state / FOLDER / spec.name / uuid.uuid4().hex
        folder.mkdir(parents=True, mode=0o700)
        path = folder / (spec.released_notebook if Path(name).suffix.lower() == ".ipynb" else "submission.py")
        path.write_bytes(data)
        kept = {
            "file": str(path.relative_to(state)),
            "original_name": name[:300],
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    try:
        with transaction.atomic():  # counted under the student's lock: eight requests at once are counted in turn
            hold(student)
            refused = _refusal(student, spec)
            if refused is not None:
                raise refused
            run = PracticeJob.objects.create(
                student=student, assignment=spec.name, handed_in=handed_in, question=question, **kept
            )
            announce()
            return run
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def latest_run(student: Student, spec: AssignmentSpec) -> PracticeJob | None:
    return PracticeJob.objects.filter(student=student, assignment=spec.name).order_by("-id").first()


def finished(run: PracticeJob) -> bool:
    return run.state in {PracticeJob.DONE, PracticeJob.FAILED}


def poll_every(run: PracticeJob) -> str | None:
    """How soon the page asks again for the run (htmx's ``every``); None once it has finished."""
    if finished(run):
        return None
    return SOON if timezone.now() - run.created_at < SOON_FOR else LATER


def shown(run: PracticeJob) -> dict[str, Any]:
    """The run as its student reads it, on the page and through the API alike."""
    result = run.result or {}
    return {
        "id": run.id,
        "assignment": run.assignment,
        "state": run.state,
        "question": run.question or None,
        "notebook": f"your hand-in {run.handed_in_id}" if run.handed_in_id else run.original_name,
        "requested_at": run.created_at.isoformat(timespec="seconds"),
        "finished_at": run.finished_at.isoformat(timespec="seconds") if run.finished_at else None,
        "checks": result.get("checks", []),
        "passed": sum(1 for check in result.get("checks", []) if check.get("passed")),
        "problem": result.get("problem"),
        "error": COULD_NOT if run.state == PracticeJob.FAILED else "",
        "page": reverse("assignment", args=[run.assignment]) + "#practice",
    }


# The worker's side.


def _claim(worker: str, state: Path) -> PracticeJob | None:
    # A read first: an idle worker's look takes no write lock (on SQLite, the claim's transaction does).
    if not PracticeJob.objects.filter(state__in=[PracticeJob.QUEUED, PracticeJob.RUNNING]).exists():
        return None
    now = timezone.now()
    gave_up = PracticeJob.objects.filter(
        state=PracticeJob.RUNNING, lease_expires_at__lt=now, attempts__gte=MAX_ATTEMPTS
    )
    for run in gave_up:
        _end(run, state, lease_held=False, state=PracticeJob.FAILED, error="the worker stopped every time")
    waiting = PracticeJob.objects.filter(
        Q(state=PracticeJob.QUEUED) | Q(state=PracticeJob.RUNNING, lease_expires_at__lt=now)
    ).order_by("id")
    claimed = RUNS.claim(
        waiting, changes=lambda row: {"state": PracticeJob.RUNNING, "worker": worker, "attempts": row.attempts + 1}
    )
    return claimed[0] if claimed else None


def _end(run: PracticeJob, home: Path, lease_held: bool = True, **changes: Any) -> None:
    """End the run (with its lease, when held: a worker that lost it changes nothing), and remove the
    notebook sent for it alone: it is kept no longer than the run (a hand-in's stays)."""
    changes["finished_at"] = timezone.now()
    if lease_held:
        ended = RUNS.finish(run, **changes)
    else:
        ended = bool(
            PracticeJob.objects.filter(id=run.id, lease=run.lease).update(lease="", lease_expires_at=None, **changes)
        )
    # A worker whose lease was lost meanwhile ended nothing: the run is another's now, and so is its notebook.
    if ended and run.handed_in_id is None and run.file.startswith(f"{FOLDER}/"):
        shutil.rmtree(stored_upload(home, run.file).parent, ignore_errors=True)


def run_queued_practice(
    worker: str, course: CourseFolder, state: Path, options: GradeOptions, executor: Executor | None = None
) -> bool:
    """Claim one queued practice run (or one whose worker went silent) and run it; False when none waits.
    With an ``executor`` (a Dask cluster's), the sandbox runs there, as a hand-in's grading does."""
    run = _claim(worker, state)
    if run is None:
        return False
    started = timezone.now()
    try:
        spec = grading_spec(course, run.assignment)
        path = stored_upload(state, run.file)
        submission = Submission(student=run.student.student_id, path=path, sha256=run.sha256)
        if not path.is_file():
            submission = submission.model_copy(update={"problem": "the notebook to run is gone; send it again"})
        arguments = (
            submission.model_dump(mode="json"),
            spec.model_dump(mode="json"),
            options.model_dump(mode="json"),
            resolve_reference(options.reference, spec),
            grader_secret(spec),
            run.question or None,
        )
        with Renewer(RUNS, run, lambda: RENEW_EVERY):
            if executor is None:
                result = practice_job(*arguments)
            else:
                result = executor.submit(practice_job, *arguments).result()
    except AutograderError as exc:  # the instructor's or the machine's fault, never the student's
        logger.warning("practice run %s (%s): failed: %s", run.id, run.assignment, exc)
        _end(run, state, state=PracticeJob.FAILED, error=str(exc))
        return True
    _end(run, state, state=PracticeJob.DONE, result=result)
    seconds = (timezone.now() - started).total_seconds()
    logger.info("practice run %s (%s): ran in %.1f s", run.id, run.assignment, seconds)
    return True
