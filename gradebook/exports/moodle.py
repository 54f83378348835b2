"""Moodle's grade import CSV (Grades > Import > CSV file): one row per student, identified by the
``ID number`` or ``Email address`` column (mapped to the user field of that name on Moodle's import
page), one column per grade item, named after the assignment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from untrusted import spreadsheet

from ..reports import number

if TYPE_CHECKING:
    from . import GradesTable

HEADER = ["ID number", "Email address", "Full name"]


def write(table: GradesTable, out: Path) -> Path:
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow([*HEADER, *(title or name for name, title, _ in table.assignments)])
        for row in table.students:
            writer.writerow(
                [row.sis_id or row.student_id, row.email, row.name,
                 *(number(row.scores[name]) for name, _, _ in table.assignments)]
            )  # fmt: skip
    return out
