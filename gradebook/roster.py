"""The roster: who the course's students are, and their ids on the course platforms.

``student_id,name,email`` and optionally ``canvas_id``, ``moodle_id``, ``sis_id``. A student's
``student_id`` is the name their submissions are filed under (nbgrader's folder); the platform ids
map a Canvas or Moodle download's files to them. A student graded before the roster came, under the
name a platform's file gave (``smith_john_12345``), becomes the roster's student with that id,
submissions and marks included.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from .book import Gradebook
from .errors import BadFile
from .files import RowProblem, read_table

REQUIRED = ["student_id", "name", "email"]
PLATFORM_IDS = ["canvas_id", "moodle_id", "sis_id"]


class RosterImport(BaseModel):
    added: int = 0
    updated: int = 0
    problems: list[RowProblem] = []


def import_roster(book: Gradebook, path: Path) -> RosterImport:
    """Add or update the roster's students. Repeated ids (student, Canvas or Moodle) change nothing."""
    from .models import Student

    rows = read_table(path, REQUIRED)
    for column in ("student_id", *PLATFORM_IDS[:2]):
        counts = Counter(row.get(column, "") for _, row in rows if row.get(column, ""))
        repeated = sorted(value for value, count in counts.items() if count > 1)
        if repeated:
            again = [number for number, row in rows if row.get(column) == repeated[0]][1]
            raise BadFile(f"{path}: row {again}: {column} {repeated[0]!r} is repeated; nothing was imported")
    result = RosterImport()

    def record() -> None:
        for number, row in rows:
            if not row["student_id"]:
                result.problems.append(RowProblem(file=str(path), row=number, what="no student_id"))
                continue
            fields = {"name": row["name"], "email": row["email"], "on_roster": True}
            fields |= {column: row.get(column, "") for column in PLATFORM_IDS if row.get(column, "")}
            student = book.objects(Student).filter(student_id=row["student_id"]).first()
            if student is None:
                student = _graded_under_platform_name(book, row)
            if student is None:
                book.objects(Student).create(student_id=row["student_id"], **fields)
                result.added += 1
                continue
            student.student_id = row["student_id"]
            for key, value in fields.items():
                setattr(student, key, value)
            student.save(using=book.alias)
            result.updated += 1

    book.run(record)
    return result


def _graded_under_platform_name(book: Gradebook, row: dict[str, str]):
    from .models import Student

    for column in ("canvas_id", "moodle_id"):
        if row.get(column):
            found = book.objects(Student).filter(on_roster=False, **{column: row[column]}).first()
            if found is not None:
                return found
    return None
