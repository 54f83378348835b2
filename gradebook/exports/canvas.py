"""Canvas's gradebook import CSV (Grades > Import): the columns Canvas's own export has, ``Student,
ID, SIS User ID, SIS Login ID, Section``, then one column per assignment, and a ``Points Possible``
row under the header. Canvas matches a row to a student by ``ID`` (the Canvas user id) or ``SIS User
ID``, and a column to an assignment by the ``Title (assignment id)`` its own export writes; a column
without the id is matched by its title alone, and a title Canvas does not have creates a new
assignment. The id is written wherever it is known: ``canvas_assignment_id`` in the assignment's
``assignment.toml``. (A Canvas LTI line item does not give it: the line item's URL ends in the line
item's own id, ``/api/lti/courses/<course>/line_items/<id>``, which is not the assignment's.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from untrusted import spreadsheet
from untrusted.text import one_line

from ..reports import number

if TYPE_CHECKING:
    from . import GradesTable

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def column(table: GradesTable, name: str, title: str) -> str:
    shown = title or name
    known = table.canvas_ids.get(name)
    return f"{shown} ({known})" if known else shown


def write(table: GradesTable, out: Path) -> Path:
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow([*HEADER, *(column(table, name, title) for name, title, _ in table.assignments)])
        writer.writerow(["Points Possible", "", "", "", "", *(number(points) for _, _, points in table.assignments)])
        for row in table.students:
            writer.writerow(
                [row.name or row.student_id, row.canvas_id, row.sis_id, row.email, "",
                 *(number(row.scores[name]) for name, _, _ in table.assignments)]
            )  # fmt: skip
    return out


def warnings(table: GradesTable) -> list[str]:
    said = []
    by_title = [title or name for name, title, _ in table.assignments if name not in table.canvas_ids]
    if by_title:
        said.append(
            f"Canvas matches {len(by_title)} column(s) by title only, and makes a new assignment where no title is "
            f"the same: {one_line(', '.join(by_title))} (set canvas_assignment_id in assignment.toml to match by id)"
        )
    unmatched = [row.student_id for row in table.students if not (row.canvas_id or row.sis_id)]
    if unmatched:
        said.append(f"{len(unmatched)} students have no canvas_id or sis_id, so Canvas cannot match them "
                    "(autograder roster import)")  # fmt: skip
    return said
