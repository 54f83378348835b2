"""The one lease rule, for every queue kept in the database: the grading jobs (``service.handin.queue``),
the similarity runs (``gradebook.similarity.report``) and the scores for the platforms (``service.lti.outbox``).

A row is *claimed* in one transaction: it is given a new random token (its ``lease`` column) and an
expiry (its ``lease_expires_at``, or the column the queue names); PostgreSQL skips the rows another
claimer holds (``select_for_update(skip_locked=True)``), and on either database the claim is an
update that names what the row was when it was read, so two claimers never both take one row. The
holder *renews* the lease with its token while it works, and *finishes* with its token: an update
that also names the token, so a holder that lost its lease (paused past its expiry, while another
holder took the row) changes nothing. A renew or finish without the lease answers False and is
logged; a finish inside a larger transaction (a grade and its job's end) raises ``LeaseLost``
instead, so that the whole transaction, the grade too, is rolled back.

Exam saves are not a queue of this kind: they are answered in the request that makes them, by one
writer thread per site process (``service.exams.saves``), and nothing else ever takes them over.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, connections, models, transaction
from django.utils import timezone

from .errors import LeaseLost

logger = logging.getLogger("gradewright.jobs")


@dataclass(frozen=True)
class LeaseRule:
    """How one queue's rows are leased: its model, and the columns that hold the token and the expiry."""

    model: type[models.Model]
    length: timedelta
    token: str = "lease"
    expires: str = "lease_expires_at"
    what: str = "job"  # how the log names a row of this queue

    def claim(
        self,
        candidates: models.QuerySet,
        order: Sequence[int] | None = None,
        limit: int = 1,
        changes: Callable[[Any], dict[str, Any]] | None = None,
    ) -> list[Any]:
        """Up to ``limit`` rows of ``candidates`` (ordered as the queue wants them, or in the order of
        the ids in ``order``), each now leased: a new token, an expiry, and ``changes(row)`` written
        with them. The rows come back as written, each with its token."""
        using = candidates.db
        now = timezone.now()
        claimed: list[Any] = []
        with transaction.atomic(using=using):
            rows = candidates
            if order is not None:
                rows = rows.filter(pk__in=list(order))
            if connections[using].features.has_select_for_update_skip_locked:
                rows = rows.select_for_update(skip_locked=True, of=("self",))
            found = list(rows) if order is not None else list(rows[:limit])
            if order is not None:
                rank = {pk: n for n, pk in enumerate(order)}
                found.sort(key=lambda row: rank[row.pk])
            for row in found:
                if len(claimed) == limit:
                    break
                written = {**self.new_lease(), self.expires: now + self.length}
                written.update(changes(row) if changes else {})
                # The row as it was read: another claimer that took it meanwhile changed its token.
                still = candidates.filter(pk=row.pk, **{self.token: getattr(row, self.token)})
                if not still.update(**written):
                    continue
                for name, value in written.items():
                    setattr(row, name, value)
                claimed.append(row)
        return claimed

    def new_lease(self) -> dict[str, Any]:
        """A lease's columns for a row made already held (a report computed at once by a command)."""
        return {self.token: secrets.token_hex(16), self.expires: timezone.now() + self.length}

    def _held(self, row: Any) -> models.QuerySet:
        token = getattr(row, self.token)
        return self.model._default_manager.db_manager(row._state.db).filter(pk=row.pk, **{self.token: token})

    def renew(self, row: Any, length: timedelta | None = None) -> bool:
        """Extend the lease; False (logged) when the row is no longer held with this token."""
        if getattr(row, self.token) and self._held(row).update(
            **{self.expires: timezone.now() + (length or self.length)}
        ):
            return True
        logger.warning(
            "%s %s: its lease was lost (another holder took it, or it was ended); stopped renewing", self.what, row.pk
        )
        return False

    def finish(self, row: Any, strict: bool = False, also: dict[str, Any] | None = None, **changes: Any) -> bool:
        """Write ``changes`` and end the lease, only if the row is still held with this token (and still
        matches ``also``, e.g. the revision the holder worked on). Without the lease nothing changes:
        False, logged; with ``strict`` (a finish inside a larger transaction), ``LeaseLost`` is raised
        so that the whole transaction is rolled back."""
        held = (
            self._held(row).filter(**(also or {})) if getattr(row, self.token) else self.model._default_manager.none()
        )
        written: dict[str, Any] = {self.token: ""}
        if self.model._meta.get_field(self.expires).null:
            written[self.expires] = None  # no lease: nothing to expire
        if held.update(**{**written, **changes}):
            return True
        said = f"{self.what} {row.pk}: finished without its lease (another holder took it, or it was ended); nothing was changed"
        logger.warning(said)
        if strict:
            raise LeaseLost(said)
        return False


class Renewer:
    """Renews a lease from a thread of its own while its holder works. It heeds ``renew()``'s answer:
    once the lease is lost it stops, and ``lost`` is set (the holder's finish will then change nothing)."""

    def __init__(self, rule: LeaseRule, row: Any, every: Callable[[], float]):
        self.rule, self.row, self.every = rule, row, every
        self.stopped = threading.Event()
        self.lost = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"lease-{rule.what}-{row.pk}", daemon=True)

    def __enter__(self) -> Renewer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        self.thread.join()

    def _run(self) -> None:
        alias = self.row._state.db or "default"
        try:
            while not self.stopped.wait(self.every()):
                try:
                    renewed = self.rule.renew(self.row)
                except DatabaseError as exc:  # the database away for a while (a restart): try at the next turn
                    logger.warning(
                        "%s %s: its lease could not be renewed (%s); trying again in %g s",
                        self.rule.what,
                        self.row.pk,
                        " ".join(str(exc).split())[:200],
                        self.every(),
                    )
                    with contextlib.suppress(DatabaseError):
                        connections[alias].close()  # a broken connection is never reused
                    continue
                if not renewed:
                    self.lost.set()
                    return
        finally:
            with contextlib.suppress(DatabaseError):
                connections[alias].close()  # this thread's own connection


def expired(rule: LeaseRule, now: datetime | None = None) -> dict[str, Any]:
    """The filter of rows whose lease has expired (their holder went silent)."""
    return {f"{rule.expires}__lt": now or timezone.now()}
