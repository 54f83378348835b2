"""The database gone for a while (a restart, a failover, a dropped connection, SQLite's lock held by
another writer), in one place: which errors mean it (``database_lost``), how long a worker waits
before it tries again (``Backoff``), and what the site answers meanwhile (``RETRY_AFTER``: the
error pages' 503, service/core/boundary.py). Such a fault is the machine's, never a student's or a bug:
said as one warning line, with no traceback, and ridden out.

A worker that meets it closes its connections (a broken one is never reused), waits, and looks at
the queue again; the job it was grading is given back to the queue with the job's own lease
(gradebook/leases.py), so it is neither lost (its lease expires if it cannot be given back) nor
graded twice (a grade and its job's end are one transaction: either both were written, and giving it
back changes nothing, or neither)."""

from __future__ import annotations

import contextlib
import sqlite3

from django.db import DatabaseError, InterfaceError, OperationalError, connections

RETRY_AFTER = 5  # seconds a client is asked to wait (a 503's Retry-After) while the database is away
# PostgreSQL's SQLSTATE classes of a server going or gone: 08 connection exceptions; 57P01 admin
# shutdown ("terminating connection due to administrator command"), 57P02 crash shutdown, 57P03
# cannot connect now ("the database system is starting up"); 53300 too many connections.
LOST_STATES = ("08", "57P", "53300")


def database_lost(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an error it was raised from or while handling, such as the gradebook's
    one-line GradebookUnavailable) is the database being away rather than a query it refused."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, InterfaceError):
            return True  # the connection is closed: only a new one helps
        if isinstance(exc, OperationalError):
            cause = exc.__cause__
            if isinstance(cause, sqlite3.Error):
                return "locked" in str(cause) or "busy" in str(cause)
            state = getattr(cause, "sqlstate", None)
            return state is None or state.startswith(LOST_STATES)  # None: the driver's own (no connection)
        exc = exc.__cause__ or exc.__context__
    return False


def forget_connections() -> None:
    """Close this thread's database connections, whatever state they are in: the next query opens a
    new one (Django reconnects on demand)."""
    for connection in connections.all(initialized_only=True):
        with contextlib.suppress(DatabaseError):
            connection.close()


class Backoff:
    """How long to wait before the next try: ``FIRST`` seconds, doubled after each failed try, at most
    ``MOST``; ``reset()`` once a try succeeds."""

    FIRST = 0.5
    MOST = 30.0

    def __init__(self, first: float = FIRST, most: float = MOST):
        self.first, self.most = first, most
        self.tries = 0

    def next(self) -> float:
        delay = min(self.most, self.first * 2**self.tries)
        self.tries += 1
        return delay

    def reset(self) -> None:
        self.tries = 0
