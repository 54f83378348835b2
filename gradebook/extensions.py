"""Extensions: a student's own due time for an assignment (and late_until, when earlier)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec
from autograder.lateness import extended_due

from .book import Gradebook, who
from .errors import GradebookError

if TYPE_CHECKING:
    from . import models


def extend(book: Gradebook, student_id: str, spec: AssignmentSpec, until: datetime) -> None:
    """Record (or replace) the student's extension on the assignment."""
    from .models import Extension

    if until.tzinfo is None:
        raise GradebookError(f"--until {until.isoformat()}: give a time zone, as in 2026-12-08T23:59:00+01:00")
    if spec.due is None:
        raise GradebookError(f"{spec.name}: has no due time (due in assignment.toml), so nothing to extend")

    def record() -> None:
        student = book.student(student_id)
        assignment = book.sync_assignment(spec)
        book.objects(Extension).update_or_create(
            student=student, assignment=assignment,
            defaults={"until": until, "granted_at": datetime.now(UTC), "granted_by": who()},
        )  # fmt: skip

    book.run(record)


def due_for(book: Gradebook, spec: AssignmentSpec, student: models.Student) -> datetime | None:
    """The student's due time for the assignment: its own, moved by their extension; None without one."""
    from .models import Extension

    if spec.due is None:
        return None
    extension = book.objects(Extension).filter(student=student, assignment__name=spec.name).first()
    return extended_due(spec.due, extension.until if extension else None)
