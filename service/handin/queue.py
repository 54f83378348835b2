"""The queue of hand-ins, in the database: jobs are made here (a hand-in's by ``service.handin.uploads``, a
regrade's by ``regrade``) and claimed, renewed and ended here. A worker claims the queued job whose turn is first
(``fair_order``: a student's next job waits behind every other student's first) with a lease, by the
one lease rule (``gradebook.leases``), renews the lease while it grades (``Lease``), and records the
grade and ends the job with the claim's token in one transaction (``service.handin.worker``): a worker
that lost its lease meanwhile writes nothing. A job whose worker died is claimed again once its lease expires; after
``MAX_ATTEMPTS`` it ends as failed, which its student sees."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from gradebook.leases import LeaseRule, Renewer

from .models import Job

LEASE = timedelta(seconds=60)
RENEW_EVERY = 15.0  # seconds: a lease is renewed well before it expires
MAX_ATTEMPTS = 3
GAVE_UP = "the grader stopped during every attempt"


def latest_graded(assignment: str, student_id: str | None = None, counted: Collection[int] = ()) -> list[Job]:
    """Each student's latest graded hand-in of the assignment (or that one student's), and the hand-in
    of each submission in ``counted`` (the submissions that count, gradebook.grades.counted_rows,
    where the rule or the staff's choice keeps an earlier one): what a regrade of the whole
    assignment grades again."""
    latest: dict[int, Job] = {}
    also: dict[int, Job] = {}
    jobs = Job.objects.filter(assignment=assignment, state=Job.GRADED, regrade=False).order_by("id")
    if student_id is not None:
        jobs = jobs.filter(student__student_id=student_id)
    for job in jobs:
        latest[job.student_id] = job
        if job.submission_id in counted:
            also[job.id] = job
    chosen = {job.id: job for job in latest.values()} | also
    return sorted(chosen.values(), key=lambda job: job.id)


def regrade(originals: list[Job], question: str = "") -> list[Job]:
    """Queue each job's submission to be graded again: of every question, or of ``question`` alone
    (its hidden tests, the other results kept). A regrade is an event of the submission (a new
    grading of it, its hand-in time kept), never a hand-in: a job of its own, naming the submission.
    A hand-in that failed, never graded, is queued again itself (its own grading, at its own time)."""
    from .wakeup import announce

    received = timezone.now()
    made = []
    with transaction.atomic():  # the jobs, and one wake-up for the workers when they are committed
        for job in originals:
            if job.submission_id is None and not job.regrade and job.state == Job.FAILED:
                Job.objects.filter(id=job.id, state=Job.FAILED).update(
                    state=Job.QUEUED, attempts=0, error="", worker="", lease="", lease_expires_at=None
                )
                made.append(job)
                continue
            made.append(
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
                    submission_id=job.submission_id,
                )
            )
        announce()
    return made


@dataclass(frozen=True)
class RegradeProgress:
    """Where the assignment's latest regrade stands (its jobs share the moment they were queued)."""

    asked_at: datetime
    total: int
    done: int  # graded again
    failed: int
    grading: int  # being graded now
    finished_at: datetime | None  # the last of them, once none is waiting

    @property
    def waiting(self) -> int:
        return self.total - self.done - self.failed - self.grading


SHOWN_AFTER = timedelta(minutes=10)  # a finished regrade is still told on the gradebook this long


def regrade_progress(assignment: str, now: datetime | None = None) -> RegradeProgress | None:
    """The assignment's latest regrade (``regrade``'s jobs, queued at one moment), while it runs and
    for ``SHOWN_AFTER`` once done; None otherwise. Two queries."""
    latest = (
        Job.objects.filter(assignment=assignment, regrade=True, received_at__isnull=False)
        .order_by("-received_at")
        .values_list("received_at", flat=True)
        .first()
    )
    if latest is None:
        return None
    counts = dict(
        Job.objects.filter(assignment=assignment, regrade=True, received_at=latest)
        .order_by()
        .values("state")
        .annotate(n=Count("id"))
        .values_list("state", "n")
    )
    finished = None
    if not counts.get(Job.QUEUED) and not counts.get(Job.GRADING):
        finished = (
            Job.objects.filter(assignment=assignment, regrade=True, received_at=latest).aggregate(
                last=Max("finished_at")
            )["last"]
            or latest
        )
        if (now or timezone.now()) - finished > SHOWN_AFTER:
            return None
    return RegradeProgress(
        asked_at=latest,
        total=sum(counts.values()),
        done=counts.get(Job.GRADED, 0),
        failed=counts.get(Job.FAILED, 0),
        grading=counts.get(Job.GRADING, 0),
        finished_at=finished,
    )


# How far back a student's claimed jobs count against their next one (fair claiming, below).
RECENT = timedelta(hours=1)
LOOK_AT = 20  # queued jobs considered by one claim, in their fair order (a claim skips those taken meanwhile)
JOBS = LeaseRule(Job, LEASE, what="job")


def fair_order(now=None) -> list[int]:
    """The queued jobs' ids in the order they are claimed: fewest turns first, then oldest. A job's
    turn is the number of its student's jobs claimed within ``RECENT`` plus the number of their
    jobs queued before it; so a student's next job waits behind every other student's first, and
    one student's flood of hand-ins delays no one else by more than one job per free worker."""
    from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value, Window
    from django.db.models.functions import Coalesce, RowNumber

    since = (now or timezone.now()) - RECENT
    claimed = (
        Job.objects.filter(student=OuterRef("student"), claimed_at__gte=since)
        .order_by()
        .values("student")
        .annotate(n=Count("id"))
        .values("n")
    )
    queued = Job.objects.filter(state=Job.QUEUED).annotate(
        place=Window(RowNumber(), partition_by=[F("student")], order_by=F("id").asc()),
        recent=Coalesce(Subquery(claimed, output_field=IntegerField()), Value(0)),
    )
    ranked = sorted(queued.values_list("id", "place", "recent"), key=lambda row: (row[1] + row[2], row[0]))
    return [pk for pk, _, _ in ranked[:LOOK_AT]]


def claim(worker: str, woken_by: str = "") -> Job | None:
    """The queued job whose turn is first (``fair_order``), now leased to this worker, or None.
    ``woken_by``: what woke the worker for this look (service/handin/wakeup.py), kept with the job."""
    _free_expired()
    now = timezone.now()

    def taken(job: Job) -> dict:
        return {
            "state": Job.GRADING,
            "worker": worker,
            "claimed_at": now,
            "woken_by": woken_by,
            "attempts": job.attempts + 1,
        }

    while True:
        order = fair_order(now)
        if not order:
            return None
        claimed = JOBS.claim(Job.objects.filter(state=Job.QUEUED), order=order, changes=taken)
        if claimed:
            return claimed[0]


def _free_expired() -> None:
    with transaction.atomic():
        expired = Job.objects.filter(state=Job.GRADING, lease_expires_at__lt=timezone.now())
        expired.filter(attempts__gte=MAX_ATTEMPTS).update(
            state=Job.FAILED, finished_at=timezone.now(), error=GAVE_UP, lease="", lease_expires_at=None
        )
        expired.filter(attempts__lt=MAX_ATTEMPTS).update(state=Job.QUEUED, worker="", lease="", lease_expires_at=None)


def renew(job: Job) -> bool:
    """Extend the lease; False (logged) when the job is no longer this claim's."""
    return JOBS.renew(job)


def finish(job: Job, submission_id: int | None, error: str = "", strict: bool = True) -> bool:
    """End the job with the claim's token (inside the transaction that records its grade, when there
    is one: without the lease, ``LeaseLost`` rolls the grade back too). The time its grading started
    (``job.started_at``, in memory) is written here, with its end: one write less on the student's
    wait."""
    return JOBS.finish(
        job,
        strict=strict,
        state=Job.FAILED if error else Job.GRADED,
        submission_id=submission_id,
        error=error,
        started_at=job.started_at,
        finished_at=timezone.now(),
    )


def release(job: Job, charged: bool = True) -> None:
    """Give a job back to the queue at once (its worker is stopping, or the grader failed), and wake
    another worker for it. Not ``charged``: this attempt does not count against the job's
    ``MAX_ATTEMPTS`` (the machine's fault: the database went away while it was graded)."""
    from .wakeup import announce

    uncounted = {} if charged else {"attempts": max(0, job.attempts - 1)}
    with transaction.atomic():
        if JOBS.finish(job, state=Job.QUEUED, worker="", **uncounted):
            announce()


def Lease(job: Job) -> Renewer:  # noqa: N802 - read as a class: ``with Lease(job):``
    """Renews a job's lease from a thread of its own while the job is graded; its ``lost`` is set
    (and renewing stops) once another worker holds the job."""
    return Renewer(JOBS, job, lambda: RENEW_EVERY)
