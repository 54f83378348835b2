"""Whose values a notebook of one's own holds (autograder.own_values), for the staff: a submission's
notebook whose values are not the ones drawn for its student is another's (the classmate whose
values they are), or no one's in the class (the template's, or edited). The one rule the student's
record and the similarity report name the holder by."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from autograder.assignment import Assignment as AssignmentSpec
from autograder.own_values import student_values
from autograder.reports.model import OwnValues
from course.models import ParameterValue

from .book import Gradebook


def _key(values: Mapping[str, ParameterValue]) -> str:
    return json.dumps(dict(values), sort_keys=True)


class Owners:
    """The students whose drawn values each set of values is, over a class (``students``' ids)."""

    def __init__(self, spec: AssignmentSpec, students: Iterable[str]):
        self.drawn = {student: student_values(spec, student) for student in students}
        self._owner = {_key(values): student for student, values in self.drawn.items()}

    def of(self, values: Mapping[str, ParameterValue]) -> str | None:
        """The student ``values`` were drawn for; None when no one's in the class."""
        return self._owner.get(_key(values))

    @classmethod
    def of_class(cls, book: Gradebook, spec: AssignmentSpec) -> Owners:
        """Over the gradebook's students (the roster's and everyone who handed in, staff aside)."""
        from .models import STAFF_PREFIX, Student

        ids = book.objects(Student).exclude(student_id__startswith=STAFF_PREFIX).values_list("student_id", flat=True)
        return cls(spec, list(ids))


def holder_sentence(student: str, values: OwnValues, holder: str | None) -> str:
    """What the staff read of a notebook whose values are not ``student``'s (empty when they are)."""
    if values.matches:
        return ""
    differing = ", ".join(
        f"{name} = {values.notebook[name]!r} there, {values.student[name]!r} for {student}"
        if name in values.notebook
        else f"{name} missing there"
        for name in values.differing
    )
    whose = f"{holder}'s values" if holder else "values drawn for no one in the class (the template's, or edited)"
    return (
        f"The notebook holds {whose}, not the ones drawn for {student} ({differing}); it was graded with {student}'s."
    )


def not_theirs(book: Gradebook, spec: AssignmentSpec, student: str, values: OwnValues | None) -> str:
    """``holder_sentence`` of one submission's ``own_values`` (its report's), the holder looked for
    over the class; empty when the values are the student's or the assignment draws none."""
    if values is None or values.matches:
        return ""
    return holder_sentence(student, values, Owners.of_class(book, spec).of(values.notebook))
