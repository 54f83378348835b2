"""A student's grade, derived each time it is asked for, never stored: their latest graded
submission's automatic results, the marks given by hand, and the late penalty (after any extension)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from autograder.reports.model import HandMark, QuestionResult, Report, TestOutcome

if TYPE_CHECKING:
    from . import models
    from .book import Gradebook


class CurrentGrade(BaseModel):
    """What one student has now on one assignment (``report`` is None: nothing handed in)."""

    student_id: str
    name: str = ""
    email: str = ""
    canvas_id: str = ""
    moodle_id: str = ""
    sis_id: str = ""
    submissions: int = 0
    report: Report | None = None

    @property
    def final_score(self) -> float | None:
        return None if self.report is None else self.report.final_score


def submissions_in_order(book: Gradebook, assignment: str, student: models.Student | None = None):
    """A student's (or every student's but the staff's own tries) submissions of an assignment,
    earliest first: by submission time, then by the order they were recorded."""
    from .models import STAFF_PREFIX, Submission

    rows = book.objects(Submission).filter(assignment__name=assignment).select_related("student", "assignment")
    if student is not None:
        rows = rows.filter(student=student)
    else:
        rows = rows.exclude(student__student_id__startswith=STAFF_PREFIX)
    return rows.order_by("submitted_at", "id")


def report_of(book: Gradebook, spec: AssignmentSpec, submission: models.Submission) -> Report:
    """A submission's report as it stands: its automatic results, the student's marks on this
    assignment (flagged when the answer changed since), and the late penalty."""
    from .rubrics import current_rubrics

    return _report(book, current_rubrics(book, spec), submission)  # marks follow the items' current points


def _report(book: Gradebook, spec: AssignmentSpec, submission: models.Submission) -> Report:
    """``report_of`` for a spec whose rubric edits are applied already (once for many reports)."""
    from .models import Extension, Mark, Result

    results = {row.question_id: row for row in book.objects(Result).filter(submission=submission)}
    marks = {
        mark.question_id: mark
        for mark in book.objects(Mark)
        .filter(student=submission.student, assignment=submission.assignment)
        .select_related("submission")  # fmt: skip
    }
    questions = []
    for question in spec.questions:
        row = results.get(question.id)
        if row is None:  # a question added to the manifest after this submission was graded
            result = QuestionResult(id=question.id, title=question.title, score=0.0, max_score=question.points, status="not_graded",
                                    feedback="not graded yet: regrade this submission")  # fmt: skip
        else:
            result = QuestionResult(
                id=row.question_id, title=question.title, score=row.score, max_score=question.points, status=row.status,
                feedback=row.feedback, tests=[TestOutcome.model_validate(t) for t in row.tests], answers=row.answers,
            )  # fmt: skip
        mark = marks.get(question.id)
        # A hand-graded question's mark; or an automatic score the staff overrode, with a reason, for
        # that very submission (a new submission is graded afresh).
        if mark is not None and (question.manual or mark.submission_id == submission.id):
            hand = _hand_mark(book, mark, question, submission, result.answers)
            result = result.model_copy(update={"score": hand.score, "mark": hand})
        questions.append(result)
    score = sum(q.score for q in questions)
    submitted_at = submission.submitted_at or submission.graded_at
    late = None
    policy = spec.late_policy
    if policy is not None:
        extension = book.objects(Extension).filter(student=submission.student, assignment=submission.assignment).first()
        late = policy.penalty(submitted_at, score, extension.until if extension else None)
    return Report(
        student=submission.student.student_id, assignment=spec.name, score=score, max_score=spec.max_score,
        questions=questions, errors=list(submission.errors), output=submission.output, submission=submission.file,
        sha256=submission.sha256, reference=submission.reference, sandbox=submission.sandbox,
        graded_at=_iso(submission.graded_at), grader_version=submission.grader_version, ran=submission.ran,
        submitted_at=_iso(submitted_at), late=late, feedback=spec.feedback, seconds=submission.seconds,
    )  # fmt: skip


def _hand_mark(
    book: Gradebook, mark: models.Mark, question: Question, submission: models.Submission, answers: dict
) -> HandMark:
    from .marks import mark_score, rubric_lines
    from .models import Result

    changed = False
    if mark.submission_id != submission.id:
        marked = book.objects(Result).filter(submission_id=mark.submission_id, question_id=mark.question_id).first()
        changed = marked is None or _text(marked.answers) != _text(answers)
    return HandMark(
        score=mark_score(mark, question), comment=mark.comment, rubric=rubric_lines(mark, question),
        marked_at=_iso(mark.marked_at), marked_by=mark.marked_by, answer_changed=changed and question.manual,
        override=not question.manual,
    )  # fmt: skip


def _text(answers: dict) -> str:
    return "\n\n".join(str(answers[key]).strip() for key in sorted(answers))


def latest_submissions(book: Gradebook, assignment: str) -> dict[str, models.Submission]:
    """Each student's latest submission of an assignment, by student id (never the staff's tries)."""
    latest: dict[str, models.Submission] = {}
    for submission in submissions_in_order(book, assignment):
        latest[submission.student.student_id] = submission
    return latest


def current_grades(book: Gradebook, spec: AssignmentSpec, everyone: bool = False) -> list[CurrentGrade]:
    """Every student's current grade on the assignment, by student id: those who handed something
    in, and with ``everyone`` also the roster's students who did not."""
    from django.db.models import Count

    from .models import Student, Submission
    from .rubrics import current_rubrics

    spec = current_rubrics(book, spec)
    latest = latest_submissions(book, spec.name)
    counts = dict(
        book.objects(Submission)
        .filter(assignment__name=spec.name)
        .values_list("student__student_id")
        .annotate(n=Count("id"))
        .values_list("student__student_id", "n")  # fmt: skip
    )
    students = book.objects(Student).filter(student_id__in=list(latest))
    if everyone:
        students = book.objects(Student).filter(on_roster=True) | students
    grades = []
    for student in students.distinct().order_by("student_id"):
        submission = latest.get(student.student_id)
        grades.append(
            CurrentGrade(
                student_id=student.student_id,
                name=student.name,
                email=student.email,
                canvas_id=student.canvas_id,
                moodle_id=student.moodle_id,
                sis_id=student.sis_id,
                submissions=counts.get(student.student_id, 0),
                report=_report(book, spec, submission) if submission is not None else None,
            )  # fmt: skip
        )
    return grades


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
