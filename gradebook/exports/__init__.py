"""Grade files for course platforms, from the gradebook: ``grades_table`` gathers each student's
final score per assignment (marks included, late penalty taken off); each module here writes one
platform's import file from it, ``write(table, out) -> Path``, registered in ``FORMATS``, and says
what the platform will make of it, ``warnings(table) -> list[str]`` (in ``WARNINGS``)."""

from __future__ import annotations

from functools import partial
from importlib import import_module
from pathlib import Path

from autograder.assignment import Assignment as AssignmentSpec
from gradebook.book import Gradebook
from gradebook.formats import GRADE_FORMATS
from gradebook.grades import current_grades
from gradebook.publishing import published_state

from .canvas import canvas_ids
from .table import GradesTable, Missing, StudentRow

__all__ = ["FORMATS", "WARNINGS", "GradesTable", "Missing", "StudentRow", "export_grades", "grades_table"]

_WRITERS = {name: import_module(f"{__name__}.{module}") for name, module in GRADE_FORMATS.items()}
FORMATS = {name: writer.write for name, writer in _WRITERS.items()}
WARNINGS = {name: writer.warnings for name, writer in _WRITERS.items() if hasattr(writer, "warnings")}


def grades_table(
    book: Gradebook, specs: list[AssignmentSpec], missing: Missing = "empty", unpublished: bool = False
) -> GradesTable:
    """Every student on the roster or with a submission, with a final score per assignment: empty
    where nothing was handed in, or zero with ``missing="zero"``; with ``missing="skip"``, the
    students who handed in none of these assignments are left out. Students who left the course
    (dropped by its platform) are left out: their grades are kept in the gradebook. An assignment
    whose grades the staff have not published (gradebook.publishing) is written only when asked
    (``unpublished``); else its column is left out, and ``held`` names it."""
    rows: dict[str, StudentRow] = {}
    held = [spec.name for spec in specs if not unpublished and not published_state(book, spec).assignment]
    specs = [spec for spec in specs if spec.name not in held]
    for spec in specs:
        for grade in book.run(partial(current_grades, book, spec, everyone=True)):
            if grade.dropped:
                continue
            row = rows.setdefault(
                grade.student_id,
                StudentRow(
                    **grade.model_dump(include={"student_id", "name", "email", "canvas_id", "moodle_id", "sis_id"}),
                    scores={},
                ),
            )
            row.scores[spec.name] = grade.final_score
    skipped = []
    for row in list(rows.values()):
        for spec in specs:
            if row.scores.get(spec.name) is None:
                row.scores[spec.name] = 0.0 if missing == "zero" else None
        if missing == "skip" and all(score is None for score in row.scores.values()):
            skipped.append(row.student_id)
            del rows[row.student_id]
    known, said = book.run(partial(canvas_ids, book, specs))
    return GradesTable(
        assignments=[(spec.name, spec.title, spec.max_score) for spec in specs],
        students=sorted(rows.values(), key=lambda row: row.student_id),
        canvas_ids=known,
        canvas_conflicts=said,
        skipped=sorted(skipped),
        held=held,
    )


def export_grades(
    book: Gradebook,
    specs: list[AssignmentSpec],
    format: str,
    out: Path,
    missing: Missing = "empty",
    unpublished: bool = False,
) -> tuple[Path, GradesTable]:
    table = grades_table(book, specs, missing, unpublished)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = FORMATS[format](table, out)
    return path, table.model_copy(update={"warnings": WARNINGS[format](table) if format in WARNINGS else []})
