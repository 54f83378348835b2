"""Canvas's gradebook import CSV (Grades > Import): the columns Canvas's own export has, ``Student,
ID, SIS User ID, SIS Login ID, Section``, then one column per assignment, and a ``Points Possible``
row under the header. Canvas matches a row to a student by ``ID`` (the Canvas user id) or ``SIS User
ID``; a column whose name is new creates the assignment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from untrusted import spreadsheet

from ..reports import number

if TYPE_CHECKING:
    from . import GradesTable

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def write(table: GradesTable, out: Path) -> Path:
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow([*HEADER, *(title or name for name, title, _ in table.assignments)])
        writer.writerow(["Points Possible", "", "", "", "", *(number(points) for _, _, points in table.assignments)])
        for row in table.students:
            writer.writerow(
                [row.name or row.student_id, row.canvas_id, row.sis_id, row.email, "",
                 *(number(row.scores[name]) for name, _, _ in table.assignments)]
            )  # fmt: skip
    return out
