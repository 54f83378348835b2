"""The gradebook: an SQLite file with a row per student, assignment and question.

Each submission's rows are replaced in one transaction, so a grader killed mid-batch leaves every
submission either fully recorded or not at all, and a rerun skips what is recorded with the same
submission hash.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from untrusted import spreadsheet

from .errors import dependency_error
from .reports.model import Report

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    ran INTEGER NOT NULL,
    graded_at TEXT NOT NULL,
    PRIMARY KEY (student, assignment)
);
CREATE TABLE IF NOT EXISTS grades (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    question TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    status TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    PRIMARY KEY (student, assignment, question)
);
"""


class Gradebook:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.connection = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=FULL")
            self.connection.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise (dependency_error(exc, path) or exc) from None

    def close(self) -> None:
        self.connection.close()

    def graded_hash(self, student: str, assignment: str) -> str | None:
        row = self.connection.execute(
            "SELECT sha256 FROM submissions WHERE student = ? AND assignment = ?", (student, assignment)
        ).fetchone()
        return row[0] if row else None

    def record(self, report: Report) -> None:
        """Replace the student's rows for this assignment, all at once."""
        with _transaction(self.connection):
            key = (report.student, report.assignment)
            self.connection.execute("DELETE FROM grades WHERE student = ? AND assignment = ?", key)
            self.connection.execute("DELETE FROM submissions WHERE student = ? AND assignment = ?", key)
            self.connection.execute(
                "INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, report.sha256, report.score, report.max_score, int(report.ran), report.graded_at),
            )
            self.connection.executemany(
                "INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*key, q.id, q.score, q.max_score, q.status, report.sha256, report.graded_at)
                    for q in report.questions
                ],
            )

    def scores(self, assignment: str) -> dict[str, dict[str, float]]:
        """{student: {question: score}} for an assignment."""
        table: dict[str, dict[str, float]] = {}
        for student, question, score in self.connection.execute(
            "SELECT student, question, score FROM grades WHERE assignment = ? ORDER BY student", (assignment,)
        ):
            table.setdefault(student, {})[question] = score
        return table

    def write_csv(self, assignment: str, questions: list[str], path: Path) -> Path:
        rows = self.connection.execute(
            "SELECT student, score, max_score FROM submissions WHERE assignment = ? ORDER BY student", (assignment,)
        ).fetchall()
        scores = self.scores(assignment)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = spreadsheet.writer(handle)
            writer.writerow(["student", *questions, "score", "max_score"])
            for student, score, max_score in rows:
                writer.writerow(
                    [
                        student,
                        *(_number(scores.get(student, {}).get(q)) for q in questions),
                        _number(score),
                        _number(max_score),
                    ]
                )
        return path


class _transaction:
    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __enter__(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, traceback) -> None:
        self.connection.execute("COMMIT" if kind is None else "ROLLBACK")


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"
