"""Moodle's grade import CSV (Grades > Import > CSV file): one row per student, identified by the
``ID number`` or ``Email address`` column (mapped, on Moodle's import page, to the user field of that
name: ``useridnumber`` or ``useremail``), one column per grade item, named after the assignment.

What Moodle does with it (grade/import/csv/classes/load_data.php): a value matching no user stops
the whole import, so a student without an SIS id gets an empty ID number, never an id of ours. A row
whose mapped field is empty is given to the student of the row above it (the import keeps the last
student it found), or, first in the file, stops the import. So every row written can be matched by
one field, and the rows empty in the other come first, where an import mapped by it stops at once
instead of giving their grades to someone else: when some students have no SIS id, the file is for
mapping by Email address (their rows first; students without an email left out); else for mapping
by ID number (the rows without an email first). A student with neither is left out. An empty grade
cell (or ``-``) is imported as "no grade": it clears the grade Moodle has for that student.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from course.private_files import private_text
from course.wording import plural, shown_score
from untrusted import spreadsheet
from untrusted.text import one_line

if TYPE_CHECKING:
    from .table import GradesTable, StudentRow

HEADER = ["ID number", "Email address", "Full name"]


class Plan(NamedTuple):
    rows: list[StudentRow]  # in the order written
    by: str  # the column to map the import by, on Moodle's import page
    left_out: list[str]  # students Moodle could not match by that column


def plan(table: GradesTable) -> Plan:
    no_id = [row for row in table.students if row.email and not row.sis_id]
    no_email = [row for row in table.students if row.sis_id and not row.email]
    both = [row for row in table.students if row.sis_id and row.email]
    kept = {id(row) for row in [*no_id, *no_email, *both]}
    neither = [row.student_id for row in table.students if id(row) not in kept]
    if no_id:
        return Plan([*no_id, *both], "Email address", sorted(neither + [row.student_id for row in no_email]))
    return Plan([*no_email, *both], "ID number", neither)


def write(table: GradesTable, out: Path) -> Path:
    with private_text(out, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow([*HEADER, *(title or name for name, title, _ in table.assignments)])
        for row in plan(table).rows:
            writer.writerow(
                [row.sis_id, row.email, row.name, *(shown_score(row.scores[name]) for name, _, _ in table.assignments)]
            )
    return out


def _listed(ids: list[str]) -> str:
    return one_line(", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))


def warnings(table: GradesTable) -> list[str]:
    chosen = plan(table)
    other = "ID number" if chosen.by == "Email address" else "Email address"
    if not chosen.rows:
        said: list[str] = []
        if chosen.left_out:  # the students there are, none of whom Moodle could match: a file of no rows
            said.append(
                f"the file has no rows: Moodle can match none of the {plural(len(chosen.left_out), 'student')} "
                f"(none has an sis_id or an email: {_listed(chosen.left_out)}); autograder roster import "
                "gives them an sis_id and email"
            )
        if table.skipped:
            said.append(_skipped(table))
        return said
    said = [f"map the import by {chosen.by} on Moodle's import page"]
    guard = chosen.rows[:1] and not (chosen.rows[0].sis_id if chosen.by == "Email address" else chosen.rows[0].email)
    if guard:
        other = "ID number" if chosen.by == "Email address" else "Email address"
        said[0] += f" (mapped by {other}, the import stops at the first row, whose {other} is empty)"
    no_id = [row.student_id for row in table.students if row.email and not row.sis_id]
    if no_id:
        said.append(
            f"{plural(len(no_id), 'student')} {'has' if len(no_id) == 1 else 'have'} no sis_id, so their ID number is empty ({_listed(no_id)})"
        )
    if chosen.left_out:
        said.append(
            f"{plural(len(chosen.left_out), 'student')} {'is' if len(chosen.left_out) == 1 else 'are'} left out: Moodle cannot match them by {chosen.by} "
            f"({_listed(chosen.left_out)}; autograder roster import gives them an sis_id and email)"
        )
    empty = sum(1 for row in chosen.rows for score in row.scores.values() if score is None)
    if empty:
        said.append(
            f"{plural(empty, 'grade cell')} {'is' if empty == 1 else 'are'} empty (nothing handed in): Moodle imports an empty cell as no grade, "
            "clearing any grade it has there; --missing zero writes 0, --missing skip leaves out the "
            "students who handed in none of these assignments"
        )
    if table.skipped:
        said.append(_skipped(table))
    return said


def _skipped(table: GradesTable) -> str:
    return (
        f"{plural(len(table.skipped), 'student')} handed in none of these assignments and "
        f"{'is' if len(table.skipped) == 1 else 'are'} left out "
        "(--missing skip): Moodle keeps the grades it has for them"
    )
