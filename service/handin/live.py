"""The submission page's live part (``service/handin/submission_live.html``): how often it asks again while
the job waits or is graded, when its student was first shown the result, and the job's times for
the staff (where a student's wait went)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from service.accounts.models import Member

from .models import Job

# While a job waits, the page asks for its live part again after this long: often while the
# feedback is about to come (a job just handed in, which a waiting worker claims at once, or one in
# its first seconds of grading), seldom once it waits behind others or grades for long, so that a
# deadline's queue costs the site few requests.
SOON, LATER = "200ms", "2s"
SOON_FOR = timedelta(seconds=3)  # a queued job, after its hand-in
GRADING_SOON_FOR = timedelta(seconds=15)  # a job being graded, after its claim
STAGES = (
    ("received", "received_at"),
    ("queued", "created_at"),
    ("claimed", "claimed_at"),
    ("started", "started_at"),
    ("finished", "finished_at"),
    ("shown", "shown_at"),
)


# A live part asked for while its feedback is due (see poll_every) answers when the job has
# finished, or after HOLD at most: the student sees the feedback the moment it is recorded, not at
# the next request. At most HOLDING requests of a process wait so at a time (the others answer at
# once, as a short poll would), so the site's threads stay free for everyone else.
HOLD = 1.0  # seconds
HOLD_CHECK = 0.02  # seconds between looks at the job's state meanwhile (a read of one row)
HOLDING = threading.BoundedSemaphore(2)


def finished(job: Job) -> bool:
    return job.state in {Job.GRADED, Job.FAILED}


def poll_every(job: Job, now: datetime | None = None) -> str | None:
    """The live part's next request, as htmx's ``every`` takes it; None once the job has finished."""
    if finished(job):
        return None
    now = now or timezone.now()
    if job.state == Job.GRADING:
        return SOON if job.claimed_at is None or now - job.claimed_at < GRADING_SOON_FOR else LATER
    return SOON if now - job.created_at < SOON_FOR else LATER


def held_until_finished(job: Job) -> Job:
    """The job, once it has finished, or as it is after ``HOLD`` (or at once: a job whose feedback
    is not due soon, or as many requests held already as may be)."""
    if poll_every(job) != SOON or not HOLDING.acquire(blocking=False):
        return job
    try:
        deadline = time.monotonic() + HOLD
        while time.monotonic() < deadline:
            if Job.objects.filter(id=job.id, state__in=[Job.GRADED, Job.FAILED]).exists():
                return Job.objects.select_related("student", "submission").get(id=job.id)
            time.sleep(HOLD_CHECK)
        return job
    finally:
        HOLDING.release()


def record_shown(job: Job, member: Member) -> None:
    """The first time a finished job is shown to its own student (the page, its live part, the API):
    kept once, the staff's looks aside."""
    if job.shown_at is not None or not finished(job) or member.student_id != job.student_id:
        return
    now = timezone.now()
    if Job.objects.filter(id=job.id, shown_at=None).update(shown_at=now):  # the first look, of two at once
        job.shown_at = now


def times(job: Job) -> dict[str, Any]:
    """The job's times, for the staff: each stage's moment (ISO 8601, to the millisecond, or None),
    the seconds from one stage to the next, and what woke the worker that claimed it."""
    moments = {stage: getattr(job, field) for stage, field in STAGES}
    steps: dict[str, float | None] = {}
    for (before, _), (after, _) in zip(STAGES, STAGES[1:], strict=False):
        first, then = moments[before], moments[after]
        steps[f"{before}->{after}"] = round((then - first).total_seconds(), 3) if first and then else None
    return {
        **{stage: at.isoformat(timespec="milliseconds") if at else None for stage, at in moments.items()},
        "seconds": steps,
        "woken_by": job.woken_by or None,
    }


def timeline(job: Job) -> list[tuple[str, datetime | None, float | None]]:
    """The job's times as the staff's page shows them: (stage, its moment, seconds since the stage before)."""
    seconds = times(job)["seconds"]
    rows: list[tuple[str, datetime | None, float | None]] = []
    for index, (stage, field) in enumerate(STAGES):
        step = seconds[f"{STAGES[index - 1][0]}->{stage}"] if index else None
        rows.append((stage, getattr(job, field), step))
    return rows
