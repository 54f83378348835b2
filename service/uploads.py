"""What a student hands in, checked before it is stored or anything runs: its size, its type (a
notebook that parses as one, or UTF-8 Python source), and the assignment's submission limits."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from datetime import timedelta
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from autograder.assignment import Assignment as AssignmentSpec
from autograder.submissions import Unreadable, extract_bytes
from gradebook.models import Student

from .errors import UploadRefused
from .models import Job
from .settings import MAX_UPLOAD_BYTES

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
    """Why the student may not hand in another submission now, or None."""
    from gradebook.models import STAFF_PREFIX

    from .models import ClosedAssignment

    if ClosedAssignment.objects.filter(name=spec.name).exists() and not student.student_id.startswith(STAFF_PREFIX):
        return "the instructor has closed this assignment to submissions"
    hour_ago = timezone.now() - timedelta(hours=1)
    if Job.objects.filter(student=student, created_at__gte=hour_ago).count() >= UPLOADS_PER_HOUR:
        return f"{UPLOADS_PER_HOUR} submissions in the last hour, the most the service takes; try again later"
    jobs = Job.objects.filter(student=student, assignment=spec.name).exclude(state=Job.FAILED)
    if spec.max_submissions is not None and jobs.count() >= spec.max_submissions:
        return f"you have used all {spec.max_submissions} submissions of this assignment"
    if spec.submissions_per_hour is not None:
        recent = jobs.filter(created_at__gte=hour_ago).order_by("created_at")
        if recent.count() >= spec.submissions_per_hour:
            again = recent[0].created_at + timedelta(hours=1)
            return (f"{spec.submissions_per_hour} submissions per hour: the next one is possible at "
                    f"{again:%H:%M} UTC")  # fmt: skip
    return None


def store(state: Path, student: Student, spec: AssignmentSpec, name: str, data: bytes) -> Job:
    """Check and keep a hand-in, and queue it. The file is stored under a name of ours (the
    released notebook's name, or submission.py), never the student's."""
    check_content(name, data)
    refused = allowance(student, spec)
    if refused:
        raise UploadRefused(refused)
    suffix = Path(name).suffix.lower()
    folder = state / "uploads" / spec.name / uuid.uuid4().hex
    folder.mkdir(parents=True, mode=0o700)
    path = folder / (spec.released_notebook if suffix == ".ipynb" else "submission.py")
    path.write_bytes(data)
    try:
        # The job exists once its file does: the student is told "handed in" only after both are kept.
        with transaction.atomic():
            return Job.objects.create(
                student=student, assignment=spec.name, file=str(path), original_name=name[:300], size=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )  # fmt: skip
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
