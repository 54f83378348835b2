"""The table every platform's writer is given: kept apart from the package's ``__init__`` (which
registers the writers) so a writer never imports the module that imports it."""

from __future__ import annotations

from pydantic import BaseModel

from gradebook.formats import Missing

__all__ = ["GradesTable", "Missing", "StudentRow"]


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
    canvas_ids: dict[str, int] = {}  # Canvas's assignment id, by assignment name, where it is known
    canvas_conflicts: list[str] = []  # assignment.toml's id is not the one Canvas's launches gave
    skipped: list[str] = []  # the students left out (missing="skip": nothing handed in)
    warnings: list[str] = []  # what the platform will make of the file, for the instructor
    held: list[str] = []  # the assignments left out: their grades are not published (gradebook.publishing)
