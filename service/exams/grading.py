"""An online exam graded by a worker, not in a web request: the staff page queues an ``ExamGrading``
(one at a time per exam), and a worker with no hand-in waiting claims it by the one lease rule
(``gradebook.leases``), renews its lease while it grades (``exam_sessions.grade_online``: the
attempts, the feedback files, the item analysis, the gradebook's results and the platforms' scores)
and ends it with the claim's token. A worker that died mid-way leaves the grading to another once its
lease expires; grading an exam again gives the same results, so a second run harms nothing."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from course.errors import CourseError
from course.wording import plural
from gradebook.errors import GradebookError
from gradebook.leases import LeaseRule, Renewer

from .models import ExamGrading

LEASE = timedelta(minutes=2)
RENEW_EVERY = 20.0  # seconds
MAX_ATTEMPTS = 3
GRADINGS = LeaseRule(ExamGrading, LEASE, what="exam grading")
logger = logging.getLogger("gradewright.jobs")


def queue_grading(exam: str, by: str) -> ExamGrading:
    """The exam's grading, queued (or the one already queued or running)."""
    waiting = ExamGrading.objects.filter(exam=exam, state__in=[ExamGrading.QUEUED, ExamGrading.RUNNING]).first()
    if waiting is not None:
        return waiting
    from service.handin.wakeup import announce

    made = ExamGrading.objects.create(exam=exam, requested_by=by)
    announce()  # a waiting worker looks now
    return made


def latest_grading(exam: str) -> ExamGrading | None:
    return ExamGrading.objects.filter(exam=exam).order_by("-id").first()


def grade_queued_exam(worker: str) -> bool:
    """Claim one queued exam grading (or one whose worker went silent) and do it; False when none waits."""
    from . import sessions as exam_sessions

    now = timezone.now()
    ExamGrading.objects.filter(state=ExamGrading.RUNNING, lease_expires_at__lt=now, attempts__gte=MAX_ATTEMPTS).update(
        state=ExamGrading.FAILED, error="the grader stopped during every attempt", finished_at=now, lease=""
    )
    waiting = ExamGrading.objects.filter(
        Q(state=ExamGrading.QUEUED) | Q(state=ExamGrading.RUNNING, lease_expires_at__lt=now)
    ).order_by("id")
    claimed = GRADINGS.claim(
        waiting, changes=lambda row: {"state": ExamGrading.RUNNING, "worker": worker, "attempts": row.attempts + 1}
    )
    if not claimed:
        return False
    grading = claimed[0]
    started = timezone.now()
    folder = exam_sessions.folders().get(grading.exam)
    try:
        if folder is None:
            raise CourseError(f"{grading.exam}: no longer an exam of the course (course.toml)")
        with Renewer(GRADINGS, grading, lambda: RENEW_EVERY):
            graded = exam_sessions.grade_online(grading.exam, folder)
    except (CourseError, GradebookError) as exc:  # ExamError is a CourseError: the exam's folder says why
        GRADINGS.finish(grading, state=ExamGrading.FAILED, error=str(exc), finished_at=timezone.now())
        logger.warning("exam grading %s (%s): failed: %s", grading.id, grading.exam, exc)
        return True
    GRADINGS.finish(grading, state=ExamGrading.DONE, graded=graded.graded, finished_at=timezone.now())
    seconds = (timezone.now() - started).total_seconds()
    logger.info(
        "exam grading %s (%s): %s graded in %.1f s", grading.id, grading.exam, plural(graded.graded, "attempt"), seconds
    )
    return True
