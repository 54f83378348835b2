"""A plain grades CSV: ``student_id,name,email``, then each assignment's final score by its name."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from course.private_files import private_text
from course.wording import shown_score
from untrusted import spreadsheet

if TYPE_CHECKING:
    from .table import GradesTable


def write(table: GradesTable, out: Path) -> Path:
    with private_text(out, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(["student_id", "name", "email", *(name for name, _, _ in table.assignments)])
        for row in table.students:
            writer.writerow(
                [
                    row.student_id,
                    row.name,
                    row.email,
                    *(shown_score(row.scores[name]) for name, _, _ in table.assignments),
                ]
            )
    return out
