"""Extensions: a student's own due time for an assignment (and late_until, when earlier), and their
own terms on an exam taken online (more minutes, a later close, more attempts: accommodations)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec
from autograder.lateness import extended_due
from course.wording import plural

from .book import Gradebook, who
from .errors import BadEdit, GradebookError

if TYPE_CHECKING:
    from . import models


def extend(book: Gradebook, student_id: str, spec: AssignmentSpec, until: datetime, by: str | None = None) -> None:
    """Record (or replace) the student's extension on the assignment, granted ``by`` an account (the
    site's signed-in member; None: the account running the command)."""
    from .models import Extension

    if until.tzinfo is None:
        raise GradebookError(f"--until {until.isoformat()}: give a time zone, as in 2026-12-08T23:59:00+01:00")
    if spec.due is None:
        raise GradebookError(f"{spec.name}: has no due time (due in assignment.toml), so nothing to extend")

    def record() -> None:
        student = book.student(student_id)
        assignment = book.sync_assignment(spec)
        book.objects(Extension).update_or_create(
            student=student,
            assignment=assignment,
            defaults={"until": until, "granted_at": datetime.now(UTC), "granted_by": who() if by is None else by},
        )

    book.run(record)


def revoke(book: Gradebook, student_id: str, spec: AssignmentSpec) -> bool:
    """Take back the student's extension on the assignment (their due time is the assignment's
    again); whether there was one."""
    from .models import Extension

    def remove() -> bool:
        deleted, _ = book.objects(Extension).filter(student__student_id=student_id, assignment__name=spec.name).delete()
        return deleted > 0

    return book.run(remove)


def due_for(book: Gradebook, spec: AssignmentSpec, student: models.Student) -> datetime | None:
    """The student's due time for the assignment: its own, moved by their extension; None without one."""
    from .models import Extension

    if spec.due is None:
        return None
    extension = book.objects(Extension).filter(student=student, assignment__name=spec.name).first()
    return extended_due(spec.due, extension.until if extension else None)


MOST_EXTRA_MINUTES = 60 * 24 * 7  # a week: more is a typo, not an accommodation
MOST_ATTEMPTS = 100


def extend_exam(
    book: Gradebook,
    student_id: str,
    exam: str,
    *,
    extra_minutes: float | None = None,
    until: datetime | None = None,
    attempts: int | None = None,
    by: str | None = None,
) -> models.ExamExtension:
    """Record (or change) the student's terms on an exam taken online: what is given replaces what
    they had, what is not given stays. ``exam`` is the exam's name in course.toml; ``by``: the
    account granting it (the site's signed-in member; None: the account running the command)."""
    from .models import ExamExtension

    if extra_minutes is None and until is None and attempts is None:
        raise BadEdit(f"{exam}: give more minutes, a later close or more attempts")
    if until is not None and until.tzinfo is None:
        raise BadEdit(f"{until.isoformat()}: give a time zone, as in 2026-12-08T23:59:00+01:00")
    if extra_minutes is not None and not 0 <= extra_minutes <= MOST_EXTRA_MINUTES:
        raise BadEdit(f"{plural(extra_minutes, 'more minute')}: give 0 to {MOST_EXTRA_MINUTES}")
    if attempts is not None and not 1 <= attempts <= MOST_ATTEMPTS:
        raise BadEdit(f"{plural(attempts, 'attempt')}: give 1 to {MOST_ATTEMPTS}")

    def record() -> models.ExamExtension:
        student = book.student(student_id)
        # Locked, and made once even when two grants for a student with none come at the same moment
        # (get_or_create takes the other's row when its insert meets the unique constraint).
        given, _ = (
            book.objects(ExamExtension)
            .select_for_update()
            .get_or_create(exam=exam, student=student, defaults={"granted_at": datetime.now(UTC)})
        )
        if extra_minutes is not None:
            given.extra_minutes = extra_minutes
        if until is not None:
            given.until = until
        if attempts is not None:
            given.attempts = attempts
        given.granted_at, given.granted_by = datetime.now(UTC), who() if by is None else by
        given.save(using=book.alias)
        return given

    return book.run(record)


def grant(
    book: Gradebook,
    student_id: str,
    name: str,
    *,
    course: Path | None = None,
    until: datetime | None = None,
    extra_minutes: float | None = None,
    attempts: int | None = None,
) -> str:
    """``autograder extend``: an extension of an assignment (``until``) or of an exam taken online
    (more minutes, a later close, more attempts), by the name course.toml gives it; what was
    recorded, in words."""
    from autograder.assignment import find_assignment
    from course.errors import CourseError
    from course.folder import find_course

    try:
        exams = find_course(course).exam_folders
    except CourseError:
        exams = {}  # an assignment folder outside any course: find_assignment says what it needs
    if name in exams:
        given = extend_exam(book, student_id, name, extra_minutes=extra_minutes, until=until, attempts=attempts)
        later = f", their own close {given.until.isoformat()}" if given.until else ""
        return f"{name}: {plural(given.extra_minutes, 'more minute', 'more minutes')}, {plural(given.attempts, 'attempt')}{later}"
    if extra_minutes is not None or attempts is not None:
        raise BadEdit(
            f"{name}: --extra-minutes and --attempts are for an exam taken online; an assignment takes --until"
        )
    if until is None:
        raise BadEdit(f"{name}: give --until, the student's own due time")
    spec = find_assignment(name, course)
    extend(book, student_id, spec, until)
    return f"{spec.name} due {until.isoformat()}"
