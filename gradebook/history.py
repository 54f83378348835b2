"""A student's history: every submission they handed in, with its time, hash and scores, and the
staff's every choice of the submission that counts (with who and why), and its undoing."""

from __future__ import annotations

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec

from .book import Gradebook
from .grades import HandIn, chosen_submissions, reports_of, student_due, submissions_in_order, which_counts
from .own_values import Owners, holder_sentence


class HistoryEntry(BaseModel):
    id: int = 0  # the submission's id in the gradebook
    assignment: str
    submitted_at: str
    graded_at: str  # its latest grading (a regrade's, when it was graded again)
    sha256: str
    file: str
    questions: dict[str, float]
    score: float
    late_penalty: float
    final_score: float
    max_score: float
    current: bool  # the submission that counts for the student's grade (gradebook.grades.which_counts)
    chosen: bool = False  # it counts because the staff chose it (``choose``), not by the assignment's rule
    # A notebook of one's own whose values are not the student's: whose they are, in a sentence
    # (gradebook.own_values); empty when they are the student's, or the assignment draws none.
    not_their_values: str = ""


class ChoiceEntry(BaseModel):
    """One choice of the staff's: a submission made the one that counts, or (``submission`` None)
    the choice undone, the assignment's rule deciding again."""

    assignment: str
    chosen_at: str
    chosen_by: str
    reason: str
    submission: int | None  # the submission's id
    submitted_at: str | None  # its hand-in time


def history(book: Gradebook, student_id: str, specs: list[AssignmentSpec]) -> list[HistoryEntry]:
    """Every submission of the student to the given assignments, earliest first within each."""

    def read() -> list[HistoryEntry]:
        student = book.student(student_id)
        entries = []
        for spec in specs:
            submissions = list(submissions_in_order(book, spec.name, student))
            reports = reports_of(book, spec, submissions, student)
            owners = None  # the class's drawn values, read only where a notebook is not its student's
            chosen = chosen_submissions(book, spec.name, {student.pk}).get(student.pk)
            extension = student.extensions.using(book.alias).filter(assignment__name=spec.name).first()
            hand_ins = [
                HandIn(s.id, s.submitted_at or s.graded_at, report.final_score)
                for s, report in zip(submissions, reports, strict=True)
            ]
            counted = which_counts(
                spec.counts, hand_ins, student_due(spec, extension.until if extension else None), chosen
            )
            for submission, report in zip(submissions, reports, strict=True):
                current = counted is not None and submission.id == counted.id
                held, not_theirs = report.own_values, ""
                if held is not None and not held.matches:
                    owners = owners or Owners.of_class(book, spec)
                    not_theirs = holder_sentence(student_id, held, owners.of(held.notebook))
                entries.append(
                    HistoryEntry(
                        id=submission.id,
                        assignment=spec.name,
                        submitted_at=report.submitted_at or "",
                        graded_at=report.graded_at,
                        sha256=report.sha256,
                        file=report.submission,
                        questions={q.id: q.score for q in report.questions},
                        score=report.score,
                        late_penalty=report.late.points if report.late else 0.0,
                        final_score=report.final_score,
                        max_score=report.max_score,
                        current=current,
                        chosen=current and chosen == submission.id,
                        not_their_values=not_theirs,
                    )
                )
        return entries

    return book.run(read)


def choices(book: Gradebook, student_id: str, specs: list[AssignmentSpec]) -> list[ChoiceEntry]:
    """The staff's choices of the student's submission that counts on the given assignments, and
    their undoing, in the order they were made."""
    from .models import CountedChoice

    def read() -> list[ChoiceEntry]:
        student = book.student(student_id)
        rows = (
            book.objects(CountedChoice)
            .filter(student=student, assignment__name__in=[spec.name for spec in specs])
            .select_related("assignment", "submission")
            .order_by("id")
        )
        return [
            ChoiceEntry(
                assignment=row.assignment.name,
                chosen_at=row.chosen_at.isoformat(timespec="seconds"),
                chosen_by=row.chosen_by,
                reason=row.reason,
                submission=row.submission_id,
                submitted_at=row.submission.submitted_at.isoformat(timespec="seconds")
                if row.submission is not None and row.submission.submitted_at
                else None,
            )
            for row in rows
        ]

    return book.run(read)
