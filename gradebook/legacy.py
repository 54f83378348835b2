"""``autograder gradebook upgrade``: a gradebook of the older format (two SQLite tables,
``submissions`` and ``grades``, one row per student, assignment and question) converted in place to
today's, every row kept. The old file is kept beside it as ``<name>.old``."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from .book import Gradebook
from .database import LEGACY_TABLES
from .errors import GradebookError, GradebookUnavailable


class Upgrade(BaseModel):
    submissions: int
    kept_as: Path


def upgrade(path: Path) -> Upgrade:
    """Convert the older gradebook at ``path``; nothing changes if it is not one."""
    rows, grades = _read_legacy(path)
    fresh = path.with_name(path.name + ".upgrading")
    fresh.unlink(missing_ok=True)
    try:
        with Gradebook.open(fresh) as book:
            book.run(lambda: _copy(book, rows, grades))
        kept = path.with_name(path.name + ".old")
        os.replace(path, kept)
        os.replace(fresh, path)
    finally:
        fresh.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            Path(str(fresh) + suffix).unlink(missing_ok=True)
    return Upgrade(submissions=len(rows), kept_as=kept)


def _read_legacy(path: Path) -> tuple[list[tuple], list[tuple]]:
    if not path.is_file():
        raise GradebookError(f"{path}: no such gradebook")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "django_migrations" in tables:
                raise GradebookError(f"{path}: already in today's format; nothing to upgrade")
            if not LEGACY_TABLES <= tables:
                raise GradebookUnavailable(f"{path}: not a gradebook of the older format; nothing was changed")
            rows = connection.execute(
                "SELECT student, assignment, sha256, max_score, ran, graded_at FROM submissions"
            ).fetchall()
            grades = connection.execute(
                "SELECT student, assignment, question, score, max_score, status FROM grades"
            ).fetchall()
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        raise GradebookUnavailable(f"{path}: not a gradebook, or a damaged one ({exc}); nothing was changed") from None
    return rows, grades


def _copy(book: Gradebook, rows: list[tuple], grades: list[tuple]) -> None:
    from .models import Assignment, Question, Result, Student, Submission

    results: dict[tuple[str, str], list[tuple]] = {}
    for student, assignment, question, score, max_score, status in grades:
        results.setdefault((student, assignment), []).append((question, score, max_score, status))
    for student_id, name, sha256, max_score, ran, graded_at in rows:
        student = book.objects(Student).get_or_create(student_id=student_id)[0]
        assignment, _ = book.objects(Assignment).get_or_create(name=name, defaults={"max_score": max_score})
        when = _moment(graded_at)
        submission = book.objects(Submission).create(
            student=student,
            assignment=assignment,
            sha256=sha256,
            graded_at=when,
            submitted_at=when,
            ran=bool(ran),
            file="(from the older gradebook)",
        )
        for position, (question, score, points, status) in enumerate(results.get((student_id, name), [])):
            book.objects(Question).get_or_create(
                assignment=assignment,
                question_id=question,
                defaults={"points": points, "manual": status == "manual", "position": position},
            )
            book.objects(Result).create(
                submission=submission,
                question_id=question,
                score=score,
                max_score=points,
                status=status,
                feedback="(graded before the upgrade; its feedback was not kept)",
            )


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return datetime.now(UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
