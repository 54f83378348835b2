"""Exam answers written in batches: the saves that arrive together share one commit.

A class saving at once is bound by the database's commit, not by the server's work: each commit waits
for the disk (SQLite's ``synchronous=FULL``; PostgreSQL's WAL flush), and SQLite lets one writer in at
a time, so 300 students' saves queued behind each other's flushes (docs/benchmarks.md, "Exams taken
online"). One writer thread takes every save waiting when it is free and writes them in one
transaction: one flush for all of them. A save is answered only once its commit is done, so an answer
reported saved is on disk; none is acknowledged and then lost.

The writer also settles the race between a save and the attempt's end: inside its transaction it locks
the attempts it writes to and refuses the saves of any that ended meanwhile (a submit, or the time
limit noticed by another request), so no answer is kept after its attempt's end.

And the race between two pages of one attempt (an exam open in two tabs, or on two devices): a save
carries the version of the answer its page last read (``version_of``: when it was saved), and one
whose version is not the answer's now is refused (StaleAnswer, with the newer answer), never
overwriting what the other page saved unseen. A save without a version (a script of its own) is
not compared: the last save wins.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from datetime import datetime

from django.db import DatabaseError, close_old_connections, transaction
from django.db.models import Count

from service.errors import ExamRefused, StaleAnswer

from .models import ExamAnswer, ExamAttempt, ExamLogEntry

MOST_IN_ONE_COMMIT = 500
ANSWER_WITHIN = 30.0  # seconds a save waits for its commit before the student is told to try again

log = logging.getLogger(__name__)


@dataclass
class Save:
    attempt: ExamAttempt
    position: int
    value: str  # empty: the answer is cleared
    at: datetime
    address: str
    shown: str  # what the attempt's log says of it
    version: str | None = None  # the answer's version as the page read it ("" none yet); None: not compared
    done: threading.Event = field(default_factory=threading.Event)
    refused: str = ""
    answered: int = 0  # saved: how many of the attempt's questions have an answer, counted in its commit
    newer: tuple[str, str] | None = None  # refused as stale: the answer saved meanwhile and its version


def version_of(saved_at: datetime | None) -> str:
    """An answer's version, as a page holds it and a save sends it back: when it was saved ("" for
    no answer)."""
    return saved_at.isoformat(timespec="microseconds") if saved_at else ""


_waiting: queue.Queue[Save] = queue.Queue()
_writer: threading.Thread | None = None
_starting = threading.Lock()


def save(one: Save) -> int:
    """Write one answer (with its log line); return once it is committed, or raise ExamRefused. How
    many of the attempt's questions have an answer now (the page shows it)."""
    from service.operations.metrics import EXAM_SAVES

    _ensure_writer()
    _waiting.put(one)
    if not one.done.wait(ANSWER_WITHIN):
        EXAM_SAVES.labels("refused").inc()
        raise ExamRefused("the server could not save this answer in time; your page keeps it and sends it again")
    if one.refused:
        EXAM_SAVES.labels("refused").inc()
        if one.newer is not None:
            raise StaleAnswer(one.refused, *one.newer)
        raise ExamRefused(one.refused)
    EXAM_SAVES.labels("saved").inc()
    return one.answered


def _ensure_writer() -> None:
    global _writer
    with _starting:
        if _writer is None or not _writer.is_alive():
            _writer = threading.Thread(target=_write_forever, name="exam-saves", daemon=True)
            _writer.start()


def _write_forever() -> None:
    while True:
        batch = [_waiting.get()]
        while len(batch) < MOST_IN_ONE_COMMIT:
            try:
                batch.append(_waiting.get_nowait())
            except queue.Empty:
                break
        try:
            close_old_connections()  # as a request does: a connection the database dropped is opened again
            _write_together(batch)
        except DatabaseError:
            # One commit for all failed: each on its own, so one bad save (an attempt deleted meanwhile)
            # costs the others nothing and says what went wrong for itself.
            for one in batch:
                try:
                    _write_together([one])
                except DatabaseError as error:
                    log.warning("an exam answer could not be saved: %s", error)
                    one.refused = "the server could not save this answer; your page keeps it and sends it again"
        except Exception:  # the writer must outlive anything: every waiting student would hang on it
            log.exception("the exam answers' writer failed")
            for one in batch:
                one.refused = (
                    one.refused or "the server could not save this answer; your page keeps it and sends it again"
                )
        finally:
            for one in batch:
                one.done.set()


def _write_together(batch: list[Save]) -> None:
    with transaction.atomic():
        ids = {one.attempt.pk for one in batch}
        open_ = set(
            ExamAttempt.objects.select_for_update()
            .filter(pk__in=ids, ended_at__isnull=True)
            .values_list("pk", flat=True)
        )
        last: dict[tuple[int, int], Save] = {}  # the last save of a question wins, as they arrived
        kept: list[Save] = []
        compared = [one for one in batch if one.version is not None and one.attempt.pk in open_]
        now = (
            {  # each answer a save compares with, as saved, and its version: what its page must have read
                (attempt, position): (value, version_of(saved_at))
                for attempt, position, value, saved_at in ExamAnswer.objects.filter(
                    attempt_id__in={one.attempt.pk for one in compared}, position__in={one.position for one in compared}
                ).values_list("attempt_id", "position", "value", "saved_at")
            }
            if compared
            else {}
        )
        for one in batch:
            if one.attempt.pk not in open_:
                one.refused = "the exam ended before this answer reached the server; it was not saved"
                continue
            there = now.get((one.attempt.pk, one.position), ("", ""))
            if one.version is not None and one.version != there[1]:
                one.refused = (
                    f"question {one.position} was changed in another tab or on another device since this page "
                    "read it; it was not overwritten"
                )
                one.newer = there
                continue
            now[(one.attempt.pk, one.position)] = (one.value, version_of(one.at) if one.value.strip() else "")
            last[(one.attempt.pk, one.position)] = one
            kept.append(one)
        answers = [
            ExamAnswer(attempt_id=a, position=p, value=one.value, saved_at=one.at)
            for (a, p), one in last.items()
            if one.value.strip()
        ]
        if answers:
            ExamAnswer.objects.bulk_create(
                answers,
                update_conflicts=True,
                unique_fields=["attempt", "position"],
                update_fields=["value", "saved_at"],
            )
        for (attempt, position), one in last.items():
            if not one.value.strip():
                ExamAnswer.objects.filter(attempt_id=attempt, position=position).delete()
        ExamLogEntry.objects.bulk_create(
            [
                ExamLogEntry(
                    attempt_id=one.attempt.pk,
                    at=one.at,
                    action="save",
                    address=one.address,
                    detail=f"q{one.position}: {one.shown or 'cleared'}",
                )
                for one in kept
            ]
        )
        # How many answers each attempt has now, for every save's reply: one query for the batch, not one a save.
        counts = dict(
            ExamAnswer.objects.filter(attempt_id__in={one.attempt.pk for one in kept})
            .values("attempt_id")
            .annotate(answers=Count("id"))
            .values_list("attempt_id", "answers")
        )
        for one in kept:
            one.answered = counts.get(one.attempt.pk, 0)
        refused = [one for one in batch if one.refused]
        if refused:
            ExamLogEntry.objects.bulk_create(
                [
                    ExamLogEntry(
                        attempt_id=one.attempt.pk,
                        at=one.at,
                        action="refused",
                        address=one.address,
                        detail=f"q{one.position}: {one.refused}",
                    )
                    for one in refused
                ]
            )
