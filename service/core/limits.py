"""How often a student may ask for something (hand-ins, runs of the practice checks, answers to
lessons' checks): the lock that orders one student's requests, so that eight sent at once are counted
one after another, and when a rolling window that is full lets one more in. Each limit's own numbers
and words are its package's; the way they are counted is this one."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import QuerySet

from gradebook.models import Student


def hold(student: Student) -> None:
    """Take the lock that orders this student's limited requests, inside the caller's transaction:
    every limit is counted after it and the row inserted before it is let go, so requests sent at
    once are counted one after another. On PostgreSQL, the student's row FOR NO KEY UPDATE (which
    waits for another request's, and lets writers that only refer to the row, a regrade's job,
    through), in READ COMMITTED, Django's default, where each count after the lock sees what the
    request before it committed. SQLite has one writer at a time, and the service's transactions
    begin IMMEDIATE (gradebook.database.SQLITE_OPTIONS): the write lock is held from the start of
    the transaction, before anything is counted, and select_for_update is a no-op there."""
    Student.objects.select_for_update(no_key=connection.features.has_select_for_no_key_update).filter(
        pk=student.pk
    ).exists()


def full_until(recent: QuerySet, at: str, most: int, window: timedelta) -> datetime | None:
    """When a full window lets one more in: ``recent`` (the rows counted, those within the window)
    holds ``most`` already, and the oldest of them (by its field ``at``) leaves the window then.
    None while there is room. One query."""
    moments = list(recent.order_by(at).values_list(at, flat=True)[:most])
    return moments[0] + window if len(moments) >= most else None


def seconds_until(moment: datetime, now: datetime) -> int:
    """Whole seconds from ``now`` to ``moment``, rounded up: a Retry-After."""
    return math.ceil((moment - now).total_seconds())
