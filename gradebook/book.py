"""A gradebook, opened: the object every command (and the service) reads and writes grades through."""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from autograder.assignment import Assignment as AssignmentSpec
from autograder.submissions import Submission as SubmissionFile

from .database import close_database, open_database
from .errors import GradebookError, NotFound, dependency_error

if TYPE_CHECKING:
    from . import models

T = TypeVar("T")


def who() -> str:
    """The account running the command, recorded with what it writes."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


class Gradebook:
    """``Gradebook.open(path)`` or ``Gradebook.open(url=...)``; a context manager that closes it."""

    def __init__(self, alias: str, where: str):
        self.alias = alias
        self.where = where

    @classmethod
    def open(cls, path: Path | None = None, url: str | None = None) -> Gradebook:
        return cls(*open_database(path, url))

    def close(self) -> None:
        close_database(self.alias)

    def __enter__(self) -> Gradebook:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # Every read and write goes through these two: a database error becomes one line naming the gradebook.
    def objects(self, model: type[T]) -> Any:
        return model.objects.using(self.alias)  # type: ignore[attr-defined]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        from django.db import transaction

        try:
            with transaction.atomic(using=self.alias):
                yield
        except GradebookError:
            raise
        except Exception as exc:
            said = dependency_error(exc, self.where)
            if said is None:
                raise
            raise said from None

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction: all of it is written, or none."""
        with self.transaction():
            return work()

    # Students and assignments.
    def student(self, student_id: str) -> models.Student:
        from .models import Student

        found = self.objects(Student).filter(student_id=student_id).first()
        if found is None:
            raise NotFound(f"{student_id}: no such student in the gradebook ({self.where})")
        return found

    def assignment(self, name: str) -> models.Assignment:
        from .models import Assignment

        found = self.objects(Assignment).filter(name=name).first()
        if found is None:
            raise NotFound(f"{name}: nothing of this assignment is in the gradebook ({self.where}) yet; grade it first")
        return found

    def sync_assignment(self, spec: AssignmentSpec) -> models.Assignment:
        """The assignment's row and its questions' rows, as its manifest has them now."""
        from .models import Assignment, Question

        row, _ = self.objects(Assignment).update_or_create(
            name=spec.name, defaults={"title": spec.title, "max_score": spec.max_score}
        )
        for position, question in enumerate(spec.questions):
            self.objects(Question).update_or_create(
                assignment=row,
                question_id=question.id,
                defaults={
                    "title": question.title,
                    "points": question.points,
                    "manual": question.manual,
                    "position": position,
                },
            )
        self.objects(Question).filter(assignment=row).exclude(question_id__in=[q.id for q in spec.questions]).delete()
        return row

    def student_for(self, submission: SubmissionFile) -> models.Student:
        """The student a submission belongs to: the roster's student with its platform id, else
        the one with its name (created when new)."""
        from .models import Student

        if submission.lms and submission.lms_id:
            field = f"{submission.lms}_id"
            found = self.objects(Student).filter(**{field: submission.lms_id}).first()
            if found is not None:
                return found
        student, created = self.objects(Student).get_or_create(student_id=submission.student)
        if created and submission.lms and submission.lms_id:
            setattr(student, f"{submission.lms}_id", submission.lms_id)
            student.save(using=self.alias)
        return student

    def has_roster(self) -> bool:
        from .models import Student

        return self.objects(Student).filter(on_roster=True).exists()
