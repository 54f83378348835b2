"""The queue of hand-ins, in the database: jobs are made here (a hand-in's by ``service.uploads``, a
regrade's by ``regrade``) and claimed, renewed and ended here. A worker claims the oldest queued job in a transaction
(PostgreSQL skips rows another worker holds; SQLite lets one writer at a time) with a lease, renews
the lease while it grades (``Lease``), and records the grade and ends the job in one transaction
(``service.worker``). A job whose worker died is claimed again once its lease expires; after
``MAX_ATTEMPTS`` it ends as failed, which its student sees."""

from __future__ import annotations

import threading
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from .models import Job

LEASE = timedelta(seconds=60)
RENEW_EVERY = 15.0  # seconds: a lease is renewed well before it expires
MAX_ATTEMPTS = 3
GAVE_UP = "the grader stopped during every attempt"


def latest_graded(assignment: str, student_id: str | None = None) -> list[Job]:
    """Each student's latest graded job of the assignment (or that one student's): what a regrade of
    the whole assignment grades again."""
    latest: dict[int, Job] = {}
    jobs = Job.objects.filter(assignment=assignment, state=Job.GRADED).order_by("id")
    if student_id is not None:
        jobs = jobs.filter(student__student_id=student_id)
    for job in jobs:
        latest[job.student_id] = job
    return list(latest.values())


def regrade(originals: list[Job], question: str = "") -> list[Job]:
    """Queue each job's file to be graded again (even a file graded before): of every question, or of
    ``question`` alone (its hidden tests, the other results kept). Each is a job like any other."""
    from .wakeup import announce

    received = timezone.now()
    with transaction.atomic():  # the jobs, and one wake-up for the workers when they are committed
        made = [
            Job.objects.create(
                student=job.student,
                assignment=job.assignment,
                file=job.file,
                question=question,
                original_name=job.original_name,
                size=job.size,
                sha256=job.sha256,
                regrade=True,
                received_at=received,
            )
            for job in originals
        ]
        announce()
    return made


def claim(worker: str, woken_by: str = "") -> Job | None:
    """The oldest queued job, now leased to this worker, or None. ``woken_by``: what woke the
    worker for this look (service/wakeup.py), kept with the job."""
    with transaction.atomic():
        _free_expired()
        jobs = Job.objects.filter(state=Job.QUEUED).order_by("id")
        if connection.features.has_select_for_update_skip_locked:
            jobs = jobs.select_for_update(skip_locked=True)
        job = jobs.first()
        if job is None:
            return None
        now = timezone.now()
        job.state, job.worker, job.claimed_at, job.lease_expires_at = Job.GRADING, worker, now, now + LEASE
        job.woken_by = woken_by
        job.attempts += 1
        job.save(update_fields=["state", "worker", "claimed_at", "woken_by", "lease_expires_at", "attempts"])
        return job


def _free_expired() -> None:
    expired = Job.objects.filter(state=Job.GRADING, lease_expires_at__lt=timezone.now())
    expired.filter(attempts__gte=MAX_ATTEMPTS).update(state=Job.FAILED, finished_at=timezone.now(), error=GAVE_UP)
    expired.filter(attempts__lt=MAX_ATTEMPTS).update(state=Job.QUEUED, worker="", lease_expires_at=None)


def renew(job: Job) -> bool:
    """Extend the lease; False when the job is no longer this worker's."""
    return bool(
        Job.objects.filter(id=job.id, worker=job.worker, state=Job.GRADING).update(
            lease_expires_at=timezone.now() + LEASE
        )
    )


def finish(job: Job, submission_id: int | None, error: str = "") -> None:
    """End the job (inside the transaction that records its grade, when there is one). The time its
    grading started (``job.started_at``, in memory) is written here, with its end: one write less
    on the student's wait."""
    Job.objects.filter(id=job.id).update(
        state=Job.FAILED if error else Job.GRADED,
        submission_id=submission_id,
        error=error,
        started_at=job.started_at,
        finished_at=timezone.now(),
        lease_expires_at=None,
    )


def release(job: Job) -> None:
    """Give a job back to the queue at once (its worker is stopping, or the grader failed), and wake
    another worker for it."""
    from .wakeup import announce

    with transaction.atomic():
        Job.objects.filter(id=job.id, worker=job.worker).update(state=Job.QUEUED, worker="", lease_expires_at=None)
        announce()


class Lease:
    """Renews a job's lease from a thread of its own while the job is graded."""

    def __init__(self, job: Job):
        self.job = job
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"lease-{job.id}", daemon=True)

    def __enter__(self) -> Lease:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        self.thread.join()

    def _run(self) -> None:
        try:
            while not self.stopped.wait(RENEW_EVERY):
                renew(self.job)
        finally:
            connection.close()  # this thread's own connection
