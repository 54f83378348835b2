"""Hand grading: ``give_mark`` is the one writer of a ``Mark`` (the marking page, the staff's
override and the marks sheet all record through it, and it checks the score's bounds); from a
spreadsheet, ``autograder marks export`` writes one row per student and hand-graded question with the
answer to read, and ``marks import`` records the scores and comments filled in. A mark belongs to the submission it was given for: a regrade of the same file keeps it, and a new
submission whose answer differs shows it flagged "answer changed since marked" until it is marked again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from course.private_files import private_text
from gradebook.book import Gradebook, who
from gradebook.errors import BadEdit
from gradebook.files import MarksImport, marks_sheet, score_problem, scored_rows
from gradebook.grades import counted_rows, current_grades
from untrusted import spreadsheet

if TYPE_CHECKING:
    from gradebook import models

COLUMNS = [
    "assignment",
    "student",
    "name",
    "question",
    "points",
    "status",
    "marked_score",
    "marked_comment",
    "answer",
    "score",
    "comment",
]
REQUIRED = ["assignment", "student", "question", "score", "comment"]


def give_mark(
    book: Gradebook,
    submission: models.Submission,
    question: Question,
    score: float,
    comment: str,
    by: str,
    rubric: list[str] | None = None,
    adjustment: float = 0.0,
    at: datetime | None = None,
    group: str = "",
) -> models.Mark:
    """Record the mark of ``question`` on ``submission`` (the last one given wins: one mark per
    student and question, kept with the submission it was given for). ``score`` is the points given
    (0 with rubric items: they and ``adjustment`` make the score, see grades.mark_score); a score
    outside 0..the question's points is refused (BadEdit) and nothing is written. ``group``: the key
    of the answer group it was given through (service/marking/groups.py), the same for every member."""
    from gradebook.models import Mark

    problem = score_problem(score, question.points)
    if problem is not None:
        raise BadEdit(problem)

    def write() -> models.Mark:
        mark, _ = book.objects(Mark).update_or_create(
            student=submission.student,
            assignment=submission.assignment,
            question_id=question.id,
            defaults={
                "submission": submission,
                "score": score,
                "comment": comment,
                "rubric": rubric or [],
                "adjustment": adjustment,
                "marked_at": at or datetime.now(UTC),
                "marked_by": by,
                "group": group,
            },
        )
        return mark

    return book.run(write)


def replaced_notice(marked_at: datetime | None, seen: str, by: str = "", what: str = "this answer") -> str | None:
    """The one rule for a save that replaced another grader's mark (the last save wins, and its
    grader is told): the mark there now, made at ``marked_at`` by ``by``, is not the one the page
    showed (``seen``: that mark's time as the page had it, "" for none). The notice, or None."""
    if marked_at is None or marked_at.isoformat() == seen:
        return None
    return f"{by or 'another grader'} had marked {what} at {marked_at:%H:%M:%S}; your mark replaced theirs"


def remove_mark(book: Gradebook, submission: models.Submission, question_id: str) -> None:
    """Take back the mark given for ``question_id`` on ``submission`` (the staff's override emptied)."""
    from gradebook.models import Mark

    def delete() -> None:
        book.objects(Mark).filter(
            student=submission.student, assignment=submission.assignment, question_id=question_id, submission=submission
        ).delete()

    book.run(delete)


def manual_questions(spec: AssignmentSpec) -> dict[str, float]:
    return {q.id: q.points for q in spec.questions if q.manual}


def export_marks(book: Gradebook, spec: AssignmentSpec, out: Path) -> int:
    """The marks sheet of an assignment (each student's submission that counts); the number of rows."""
    manual = manual_questions(spec)
    rows = 0
    grades = book.run(lambda: current_grades(book, spec))
    out.parent.mkdir(parents=True, exist_ok=True)
    with private_text(out, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(COLUMNS)
        for grade in grades:
            if grade.report is None:  # nothing handed in: no answer to mark (current_grades lists none such)
                continue
            for question in grade.report.questions:
                if question.id not in manual:
                    continue
                mark = question.mark
                status = (
                    "unmarked" if mark is None else "answer changed since marked" if mark.answer_changed else "marked"
                )
                answer = "\n\n".join(text for _, text in sorted(question.answers.items())) or "(no written answer)"
                writer.writerow(
                    [
                        spec.name,
                        grade.student_id,
                        grade.name,
                        question.id,
                        f"{manual[question.id]:g}",
                        status,
                        "" if mark is None else f"{mark.score:g}",
                        "" if mark is None else mark.comment,
                        answer,
                        "",
                        "",
                    ]
                )
                rows += 1
    return rows


def import_marks(book: Gradebook, spec: AssignmentSpec, path: Path) -> MarksImport:
    """Record the marks of a filled-in sheet, for each student's submission that counts. A sheet of another
    assignment changes nothing (BadFile); a row with an unknown student or question, or a score
    outside 0..points, is reported with its number and the other rows are recorded."""
    rows = marks_sheet(path, REQUIRED, "assignment", spec.name, "assignment")
    manual = manual_questions(spec)
    questions = {q.id: q for q in spec.questions}
    by = who()
    result = MarksImport()

    def record() -> None:
        latest = {row.student.student_id: row for row in counted_rows(book, spec)}
        now = datetime.now(UTC)

        def points_of(row: dict[str, str]) -> float | str:
            if row["question"] not in manual:
                known = ", ".join(manual) or "none"
                return f"{row['question']!r} is not a question graded by hand (those of this assignment: {known})"
            if row["student"] not in latest:
                return f"no submission of {row['student']!r} is in the gradebook"
            return manual[row["question"]]

        for row, score in scored_rows(path, rows, result, points_of):
            question = questions[row["question"]]
            give_mark(book, latest[row["student"]], question, score, row["comment"], by, at=now)

    book.run(record)
    return result
