"""Grade files for course platforms, from the gradebook: ``grades_table`` gathers each student's
final score per assignment (marks included, late penalty taken off); each module here writes one
platform's import file from it, ``write(table, out) -> Path``, registered in ``FORMATS``."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec

from ..book import Gradebook
from ..grades import current_grades
from . import canvas, moodle, plain

FORMATS = {"canvas": canvas.write, "moodle": moodle.write, "csv": plain.write}
Missing = Literal["empty", "zero"]


class StudentRow(BaseModel):
    student_id: str
    name: str
    email: str
    canvas_id: str
    moodle_id: str
    sis_id: str
    scores: dict[str, float | None]  # by assignment name; None: nothing handed in


class GradesTable(BaseModel):
    assignments: list[tuple[str, str, float]]  # (name, title, points)
    students: list[StudentRow]


def grades_table(book: Gradebook, specs: list[AssignmentSpec], missing: Missing = "empty") -> GradesTable:
    """Every student on the roster or with a submission, with a final score per assignment: empty
    where nothing was handed in, or zero with ``missing="zero"``."""
    rows: dict[str, StudentRow] = {}
    for spec in specs:
        for grade in book.run(partial(current_grades, book, spec, everyone=True)):
            row = rows.setdefault(
                grade.student_id,
                StudentRow(**grade.model_dump(include={"student_id", "name", "email", "canvas_id", "moodle_id",
                                                       "sis_id"}), scores={}),
            )  # fmt: skip
            row.scores[spec.name] = grade.final_score
    for row in rows.values():
        for spec in specs:
            if row.scores.get(spec.name) is None:
                row.scores[spec.name] = 0.0 if missing == "zero" else None
    return GradesTable(
        assignments=[(spec.name, spec.title, spec.max_score) for spec in specs],
        students=sorted(rows.values(), key=lambda row: row.student_id),
    )


def export_grades(
    book: Gradebook, specs: list[AssignmentSpec], format: str, out: Path, missing: Missing = "empty"
) -> tuple[Path, GradesTable]:
    table = grades_table(book, specs, missing)
    out.parent.mkdir(parents=True, exist_ok=True)
    return FORMATS[format](table, out), table
