"""The queue of hand-ins, in the database: a worker claims the oldest queued job in a transaction
(PostgreSQL skips rows another worker holds; SQLite lets one writer at a time), grades it, and
finishes it. A job whose worker died is queued again after ``STALE_AFTER``; after
``MAX_ATTEMPTS`` it fails, and the instructor sees why."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from .models import Job

STALE_AFTER = timedelta(minutes=15)  # longer than any submission may run (its limits say 120 s)
MAX_ATTEMPTS = 3


def claim(worker: str) -> Job | None:
    """The oldest queued job, now marked as this worker's, or None."""
    with transaction.atomic():
        _requeue_stale()
        jobs = Job.objects.filter(state=Job.QUEUED).order_by("id")
        if connection.features.has_select_for_update_skip_locked:
            jobs = jobs.select_for_update(skip_locked=True)
        job = jobs.first()
        if job is None:
            return None
        job.state, job.worker, job.started_at = Job.GRADING, worker, timezone.now()
        job.attempts += 1
        job.save(update_fields=["state", "worker", "started_at", "attempts"])
        return job


def _requeue_stale() -> None:
    stale = Job.objects.filter(state=Job.GRADING, started_at__lt=timezone.now() - STALE_AFTER)
    stale.filter(attempts__gte=MAX_ATTEMPTS).update(
        state=Job.FAILED, finished_at=timezone.now(), error="the grader stopped during every attempt"
    )
    stale.filter(attempts__lt=MAX_ATTEMPTS).update(state=Job.QUEUED, worker="")


def finish(job: Job, submission_id: int | None, error: str = "") -> None:
    job.state = Job.FAILED if error else Job.GRADED
    job.submission_id = submission_id
    job.error = error
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "submission", "error", "finished_at"])
