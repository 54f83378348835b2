"""What a student hands in, checked before it is stored or anything runs: its size, its type (a
notebook that parses as one, or UTF-8 Python source), and the assignment's submission limits."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from autograder.assignment import Assignment as AssignmentSpec
from autograder.submissions import Unreadable, extract_bytes
from course.wording import plural
from gradebook.models import Student
from service.core.limits import full_until, hold, seconds_until
from service.errors import TooManyHandIns, UploadRefused
from service.settings import MAX_UPLOAD_BYTES

from .models import Job

SUFFIXES = (".ipynb", ".py")
UPLOADS_PER_HOUR = 30  # per student, over all assignments, whatever the manifests say: no one floods the queue


def check_content(name: str, data: bytes) -> None:
    """Refuse anything that is not a notebook or Python source, saying why in the student's words."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise UploadRefused("hand in a notebook (.ipynb) or a Python file (.py)")
    _refuse_above_limit(len(data))
    if not data.strip():
        raise UploadRefused("the file is empty")
    try:
        extract_bytes(data, suffix)  # the grader's own rule: what it could not read is refused now
    except Unreadable as unreadable:
        raise UploadRefused(str(unreadable)) from None


def _refuse_above_limit(size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise UploadRefused(f"the file is {size / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES // 1_000_000} MB")


def read_upload(upload) -> bytes:
    """An uploaded file's bytes, refused by its size before any of it is read into memory."""
    _refuse_above_limit(upload.size)
    return upload.read(MAX_UPLOAD_BYTES + 1)


def allowance(student: Student, spec: AssignmentSpec) -> str | None:
    """Why the student may not hand in another submission now, or None. Read alone it is advice
    (the pages and the API's list say it before an upload); it is the rule only inside ``store``'s
    transaction, where the student's row is held first."""
    refused = _refusal(student, spec)
    return None if refused is None else str(refused)


def _refusal(student: Student, spec: AssignmentSpec) -> UploadRefused | None:
    """``allowance``'s reason as the error ``store`` raises: an hourly limit's is TooManyHandIns
    (429 with Retry-After), the others' an UploadRefused."""
    from gradebook.models import STAFF_PREFIX

    from .models import ClosedAssignment

    if ClosedAssignment.objects.filter(name=spec.name).exists() and not student.student_id.startswith(STAFF_PREFIX):
        return UploadRefused("the instructor has closed this assignment to submissions")
    now = timezone.now()
    hour, hour_ago = timedelta(hours=1), now - timedelta(hours=1)
    # The student's own hand-ins: a regrade the staff queued is the course's work, not the student's.
    handed_in = Job.objects.filter(student=student, regrade=False)
    again = full_until(handed_in.filter(created_at__gte=hour_ago), "created_at", UPLOADS_PER_HOUR, hour)
    if again is not None:
        return TooManyHandIns(
            f"{plural(UPLOADS_PER_HOUR, 'submission')} in the last hour, the most the service takes; try again later",
            seconds_until(again, now),
        )
    jobs = handed_in.filter(assignment=spec.name).exclude(state=Job.FAILED)
    if spec.max_submissions is not None and jobs.count() >= spec.max_submissions:
        return UploadRefused(
            f"you have used {'your only submission' if spec.max_submissions == 1 else 'all ' + plural(spec.max_submissions, 'submission')} of this assignment"
        )
    if spec.submissions_per_hour is not None:
        again = full_until(jobs.filter(created_at__gte=hour_ago), "created_at", spec.submissions_per_hour, hour)
        if again is not None:
            return TooManyHandIns(
                f"{plural(spec.submissions_per_hour, 'submission')} per hour: the next one is possible at {again:%H:%M} UTC",
                seconds_until(again, now),
            )
    return None


def stored_upload(state: Path, file: str) -> Path:
    """Where a job's upload lies: its ``file`` is kept relative to the state folder (so that a state
    folder restored at another path keeps every upload); an absolute one is a job made before."""
    return state / file


def store(
    state: Path, student: Student, spec: AssignmentSpec, name: str, data: bytes, received_at: datetime | None = None
) -> Job:
    """Check and keep a hand-in, and queue it: the one place that applies the submission limits, for
    the page and the API alike. The file is stored under a name of ours (the released notebook's
    name, or submission.py), never the student's. ``received_at``: when its request arrived (the
    job's first time; by default now). The waiting workers are woken when the job is committed."""
    from .wakeup import announce

    received_at = received_at or timezone.now()
    check_content(name, data)
    refused = _refusal(student, spec)  # early, unlocked: a student already at a limit costs no disk write
    if refused is not None:
        raise refused
    suffix = Path(name).suffix.lower()
    folder = state / "uploads" / spec.name / uuid.uuid4().hex
    folder.mkdir(parents=True, mode=0o700)
    path = folder / (spec.released_notebook if suffix == ".ipynb" else "submission.py")
    path.write_bytes(data)
    try:
        # The limits are checked and the job created in one transaction, under the student's lock:
        # counted outside it, uploads sent together each saw room for one more. The file is written
        # before, so the lock is held for queries only. The job exists once its file does: the
        # student is told "handed in" only after both are kept.
        with transaction.atomic():
            hold(student)
            refused = _refusal(student, spec)
            if refused is not None:
                raise refused
            job = Job.objects.create(
                student=student,
                assignment=spec.name,
                file=str(path.relative_to(state)),  # relative: a restore at another path keeps it
                original_name=name[:300],
                size=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                received_at=received_at,
            )
            announce()  # delivered with the commit: a worker is woken for a job it can see
            return job
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
