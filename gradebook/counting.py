"""The staff's choice of the submission that counts: ``choose`` makes any of a student's
submissions the one their grade is, or (``submission`` None) undoes the choice, the assignment's
rule (``counts`` in assignment.toml) deciding again. Each is a new ``CountedChoice`` row, with who
and why, never an edit: the history shows every one, and the grade is derived from the latest
(``gradebook.grades.which_counts``)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec

from .book import Gradebook, who
from .errors import BadEdit, NotFound

if TYPE_CHECKING:
    from . import models


def choose(
    book: Gradebook,
    spec: AssignmentSpec,
    student_id: str,
    submission: int | None,
    reason: str,
    by: str | None = None,
) -> models.CountedChoice:
    """Make the student's ``submission`` (its id in the gradebook) the one that counts on the
    assignment, or with None undo the standing choice; ``reason`` is kept, and shown with it. A
    submission of another student or assignment is NotFound; no reason, or an undo with no choice
    standing, is a BadEdit. Nothing is written then."""
    from .grades import chosen_submissions
    from .models import CountedChoice, Submission

    reason = " ".join(reason.split())
    if not reason:
        raise BadEdit("say why (--reason): it is kept with the choice and shown in the student's history")

    def record() -> models.CountedChoice:
        student = book.student(student_id)
        assignment = book.sync_assignment(spec)
        row = None
        if submission is not None:
            row = book.objects(Submission).filter(id=submission, student=student, assignment=assignment).first()
            if row is None:
                raise NotFound(f"{student_id} has no submission {submission} of {spec.name}")
        elif chosen_submissions(book, spec.name, {student.pk}).get(student.pk) is None:
            raise BadEdit(f"{student_id}: no choice of the staff's stands on {spec.name}; the rule decides already")
        return book.objects(CountedChoice).create(
            student=student,
            assignment=assignment,
            submission=row,
            chosen_at=datetime.now(UTC),
            chosen_by=who() if by is None else by,
            reason=reason[:2000],
        )

    return book.run(record)


def hand_in_warnings(
    book: Gradebook, spec: AssignmentSpec, student: models.Student, now: datetime, scores_shown: bool = True
) -> list[str]:
    """What a student is told before a hand-in now, in whole sentences: that it is late (and what
    that costs), and whether it would replace the grade that counts now (a better one may be lost,
    an on-time one replaced by a late one), or not count at all, by the assignment's rule or the
    staff's choice. The site's hand-in page, the API's list (``hand_in_warnings``), ``submit()``
    and ``autograder submit`` all say these. ``scores_shown``: the student may see their scores
    (the assignment's ``feedback``); else the grade is named without its number."""
    from course.wording import plural, shown_score

    from .grades import (
        COUNTS_HELP,
        HandIn,
        chosen_submissions,
        reports_of,
        student_due,
        submissions_in_order,
        which_counts,
    )
    from .models import Extension

    def read() -> list[str]:
        extension = book.objects(Extension).filter(student=student, assignment__name=spec.name).first()
        due = student_due(spec, extension.until if extension else None)
        warnings = []
        late = due is not None and now > due
        if late and due is not None:
            policy = spec.late_policy
            assert policy is not None
            cost = policy.penalty(now, 1.0, extension.until if extension else None)
            if cost.after_late_until:
                what = "earns nothing: late work is no longer accepted"
            elif cost.percent >= 100:
                what = "is late and earns nothing"
            else:
                what = f"is late and loses {cost.percent:g}% of its score"
            warnings.append(f"The due time ({_when(due)}) has passed: a hand-in now {what}.")
        # The rule itself (which_counts) says what a hand-in now would do: one scoring nothing, and
        # one scoring more than any could.
        submissions = list(submissions_in_order(book, spec.name, student))
        if not submissions:
            return warnings
        reports = reports_of(book, spec, submissions, student)
        hand_ins = [
            HandIn(s.id, s.submitted_at or s.graded_at, r.final_score)
            for s, r in zip(submissions, reports, strict=True)
        ]
        chosen = chosen_submissions(book, spec.name, {student.pk}).get(student.pk)
        counted = which_counts(spec.counts, hand_ins, due, chosen)
        assert counted is not None
        report = reports[hand_ins.index(counted)]
        grade = (
            f"your current grade, {shown_score(report.final_score)} of {plural(spec.max_score, 'point')} "
            f"(your hand-in of {_when(counted.at)})"
            if scores_shown
            else f"your current grade (your hand-in of {_when(counted.at)})"
        )

        def counts_if(score: float) -> bool:
            new = HandIn(0, now, score)
            return which_counts(spec.counts, [*hand_ins, new], due, chosen) == new

        rule = f"on this assignment {COUNTS_HELP[spec.counts]}"
        if chosen is not None and not counts_if(math.inf):
            warnings.append(
                f"The staff chose which of your hand-ins counts: a new hand-in leaves {grade} as it is, "
                "until they undo that choice."
            )
        elif not counts_if(math.inf):
            warnings.append(f"A hand-in now does not count, {rule}: {grade} is kept.")
        elif counts_if(0.0) and late and (due is None or counted.at <= due):
            warnings.append(
                f"A hand-in now replaces {grade}, which was on time, with a late one, even if it scores lower: {rule}."
            )
        elif counts_if(0.0) and (report.final_score > 0 or not scores_shown):
            warnings.append(f"A hand-in now replaces {grade}, even if it scores lower: {rule}.")
        return warnings

    return book.run(read)


def _when(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"
