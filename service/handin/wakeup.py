"""A waiting worker woken by the hand-in itself, not on its next look at the queue.

PostgreSQL: the transaction that queues a job sends a notification on ``CHANNEL``, which the
server delivers when, and only if, it commits; a waiting worker LISTENs on a connection of its own
and waits for one, with a deadline: the slow look at the queue stays, for what sends no
notification (a lease that expired, a similarity report the staff asked for, a notification lost
with a dropped connection, a pooler that does not pass LISTEN on). SQLite has no notifications: the
worker asks its connection's ``PRAGMA data_version`` (it changes when another connection commits; a
read of no table, no lock) every ``CHANGE_POLL`` seconds, and only when it changed whether a job is
queued (a read), so an idle worker never takes the write lock the claim needs."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections

from autograder.environment import read
from service.errors import ServiceSetupError

from .models import Job, PracticeJob

CHANNEL = "gradewright_jobs"
CHANGE_POLL = 0.02  # seconds between looks at SQLite's data version
POLL = 2.0  # seconds: the slow look at the queue, whatever woke or did not wake the worker
POLL_VARIABLE = "GRADEWRIGHT_WORKER_POLL"
NOTIFICATION, CHANGE, FALLBACK = "notification", "change", "poll"


def poll_seconds() -> float:
    """The slow look's period: ``$GRADEWRIGHT_WORKER_POLL`` seconds, or ``POLL``."""
    text = read(POLL_VARIABLE)
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 86_400:
        raise ServiceSetupError(f"${POLL_VARIABLE} is {text!r}: a number of seconds, above 0 and at most 86400")
    return seconds


def announce(using: str = DEFAULT_DB_ALIAS) -> None:
    """Tell the waiting workers a job is queued: called inside the transaction that queues it, so the
    notification goes with its commit and never for a job rolled back. On SQLite the commit itself
    is what they see."""
    if connections[using].vendor == "postgresql":
        with connections[using].cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])


class Waiter:
    """How a worker waits for the queue: made before its first look at the queue (so nothing queued
    after that look is missed), then ``wait()`` after each look that found nothing. ``woken``
    counts what ended each wait."""

    def __init__(self, poll: float | None = None):
        self.poll = poll_seconds() if poll is None else poll
        self.woken: Counter[str] = Counter()
        self.postgres = connection.vendor == "postgresql"
        self.listener: Any = None  # a psycopg connection of its own, on PostgreSQL
        self.version = -1
        if self.postgres:
            self._listen()
        else:
            self.version = self._data_version()

    @property
    def how(self) -> str:
        """What wakes this worker, in words (its first line)."""
        waking = "PostgreSQL's notifications" if self.postgres else "a look at SQLite's data version"
        return f"woken by {waking}, a look at the queue every {self.poll:g} s"

    def _listen(self) -> None:
        import psycopg

        try:
            listener = psycopg.connect(**connection.get_connection_params(), autocommit=True)
            self.listener = listener
            listener.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error:
            self.close()  # the slow look alone, until the next wait tries again

    def wait(self) -> str:
        """Until a job may be queued, or the slow look is due: what ended the wait."""
        woken = self._wait_postgres() if self.postgres else self._wait_sqlite()
        self.woken[woken] += 1
        return woken

    def _wait_postgres(self) -> str:
        import psycopg

        if self.listener is None:
            self._listen()
            return FALLBACK  # listening again, or not yet: a look at the queue now
        try:
            for _ in self.listener.notifies(timeout=self.poll, stop_after=1):
                return NOTIFICATION
        except psycopg.Error:
            self.close()  # the server went away: the next wait listens again
            time.sleep(min(self.poll, 1.0))
        return FALLBACK

    def _wait_sqlite(self) -> str:
        deadline = time.monotonic() + self.poll
        while time.monotonic() < deadline:
            time.sleep(CHANGE_POLL)
            version = self._data_version()
            if version != self.version:
                self.version = version  # before the claim that follows: a later commit changes it again
                if (
                    Job.objects.filter(state=Job.QUEUED).exists()
                    or PracticeJob.objects.filter(state=PracticeJob.QUEUED).exists()
                ):
                    return CHANGE
        self.version = self._data_version()
        return FALLBACK

    def _data_version(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA data_version")
            return int(cursor.fetchone()[0])

    def close(self) -> None:
        if self.listener is not None:
            try:
                self.listener.close()
            finally:
                self.listener = None
