"""Canvas's gradebook import CSV (Grades > Import): the columns Canvas's own export has, ``Student,
ID, SIS User ID, SIS Login ID, Section``, then one column per assignment, and a ``Points Possible``
row under the header. Canvas matches a row to a student by ``ID`` (the Canvas user id) or ``SIS User
ID``, and a column to an assignment by the ``Title (assignment id)`` its own export writes; a column
without the id is matched by its title alone, and a title Canvas does not have creates a new
assignment. The id is written wherever it is known: ``canvas_assignment_id`` in the assignment's
``assignment.toml``, else the id Canvas's own launches of the assignment gave (``remember_canvas_id``:
a link placed by deep linking asks for ``$Canvas.assignment.id`` in its custom parameters, which
Canvas fills in at each launch). A Canvas LTI line item does not give it: the line item's URL ends in
the line item's own id, ``/api/lti/courses/<course>/line_items/<id>``, which is not the assignment's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from course.private_files import private_text
from course.wording import plural, shown_score
from untrusted import spreadsheet
from untrusted.text import one_line

if TYPE_CHECKING:
    from autograder.assignment import Assignment as AssignmentSpec
    from gradebook.book import Gradebook

    from .table import GradesTable

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def remember_canvas_id(book: Gradebook, spec: AssignmentSpec, canvas_id: int) -> None:
    """What a Canvas launch of ``spec`` says its Canvas assignment id is, kept for the grade file."""
    from gradebook.models import Assignment

    if not book.objects(Assignment).filter(name=spec.name).exists():
        book.sync_assignment(spec)  # launched before anything of it was graded
    book.objects(Assignment).filter(name=spec.name).update(canvas_assignment_id=canvas_id)


def canvas_ids(book: Gradebook, specs: list[AssignmentSpec]) -> tuple[dict[str, int], list[str]]:
    """Each assignment's Canvas id where it is known (assignment.toml's, else its launches'), and a
    warning for each manifest whose id differs from the one Canvas's launches gave."""
    from gradebook.models import Assignment

    launched = dict(
        book.objects(Assignment)
        .filter(name__in=[spec.name for spec in specs], canvas_assignment_id__isnull=False)
        .values_list("name", "canvas_assignment_id")
    )
    known, said = {}, []
    for spec in specs:
        if spec.canvas_assignment_id:
            known[spec.name] = spec.canvas_assignment_id
            if launched.get(spec.name) not in (None, spec.canvas_assignment_id):
                said.append(
                    f"{spec.name}: assignment.toml's canvas_assignment_id {spec.canvas_assignment_id} is not "
                    f"the id Canvas's launches of it give ({launched[spec.name]}); the file uses "
                    "assignment.toml's"
                )
        elif spec.name in launched:
            known[spec.name] = int(launched[spec.name])
    return known, said


def column(table: GradesTable, name: str, title: str) -> str:
    shown = title or name
    known = table.canvas_ids.get(name)
    return f"{shown} ({known})" if known else shown


def write(table: GradesTable, out: Path) -> Path:
    with private_text(out, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow([*HEADER, *(column(table, name, title) for name, title, _ in table.assignments)])
        writer.writerow(
            ["Points Possible", "", "", "", "", *(shown_score(points) for _, _, points in table.assignments)]
        )
        for row in table.students:
            writer.writerow(
                [
                    row.name or row.student_id,
                    row.canvas_id,
                    row.sis_id,
                    row.email,
                    "",
                    *(shown_score(row.scores[name]) for name, _, _ in table.assignments),
                ]
            )
    return out


def warnings(table: GradesTable) -> list[str]:
    said = list(table.canvas_conflicts)
    by_title = [title or name for name, title, _ in table.assignments if name not in table.canvas_ids]
    if by_title:
        said.append(
            f"Canvas matches {plural(len(by_title), 'column')} by title only, and makes a new assignment where no title is "
            f"the same: {one_line(', '.join(by_title))} (set canvas_assignment_id in assignment.toml, or launch it "
            "once from a link placed in Canvas by deep linking, to match by id)"
        )
    unmatched = [row.student_id for row in table.students if not (row.canvas_id or row.sis_id)]
    if unmatched:
        said.append(
            f"{plural(len(unmatched), 'student')} {'has' if len(unmatched) == 1 else 'have'} no canvas_id or sis_id, so Canvas cannot match them "
            "(autograder roster import)"
        )
    return said
