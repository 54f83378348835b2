"""Hand grading from a spreadsheet: ``autograder marks export`` writes one row per student and
hand-graded question with the answer to read; ``marks import`` records the scores and comments filled
in. A mark belongs to the submission it was given for: a regrade of the same file keeps it, and a new
submission whose answer differs shows it flagged "answer changed since marked" until it is marked again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from untrusted import spreadsheet

from .book import Gradebook, who
from .files import MarksImport, marks_sheet, scored_rows
from .grades import current_grades, latest_submissions

if TYPE_CHECKING:
    from . import models

COLUMNS = ["assignment", "student", "name", "question", "points", "status", "marked_score", "marked_comment",
           "answer", "score", "comment"]  # fmt: skip
REQUIRED = ["assignment", "student", "question", "score", "comment"]


def mark_score(mark: models.Mark, question: Question) -> float:
    """A mark's score: the points given, or with rubric items applied, their current points plus the
    adjustment, within 0..the question's points."""
    if not mark.rubric:
        return mark.score
    points = {item.id: item.points for item in question.rubric}
    return min(max(sum(points.get(item, 0.0) for item in mark.rubric) + mark.adjustment, 0.0), question.points)


def rubric_lines(mark: models.Mark, question: Question) -> list[str]:
    """The applied rubric items as the student reads them: "+1 Proposes ..."."""
    items = {item.id: item for item in question.rubric}
    lines = [f"{items[i].points:+g} {items[i].text}" for i in mark.rubric if i in items]
    if mark.rubric and mark.adjustment:
        lines.append(f"{mark.adjustment:+g} adjustment")
    return lines


def manual_questions(spec: AssignmentSpec) -> dict[str, float]:
    return {q.id: q.points for q in spec.questions if q.manual}


def export_marks(book: Gradebook, spec: AssignmentSpec, out: Path) -> int:
    """The marks sheet of an assignment (each student's latest submission); the number of rows."""
    manual = manual_questions(spec)
    rows = 0
    grades = book.run(lambda: current_grades(book, spec))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
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
                    [spec.name, grade.student_id, grade.name, question.id, f"{manual[question.id]:g}", status,
                     "" if mark is None else f"{mark.score:g}", "" if mark is None else mark.comment, answer, "", ""]
                )  # fmt: skip
                rows += 1
    return rows


def import_marks(book: Gradebook, spec: AssignmentSpec, path: Path) -> MarksImport:
    """Record the marks of a filled-in sheet, for each student's latest submission. A sheet of another
    assignment changes nothing (BadFile); a row with an unknown student or question, or a score
    outside 0..points, is reported with its number and the other rows are recorded."""
    from .models import Mark

    rows = marks_sheet(path, REQUIRED, "assignment", spec.name, "assignment")
    manual = manual_questions(spec)
    result = MarksImport()

    def record() -> None:
        latest = latest_submissions(book, spec.name)
        now = datetime.now(UTC)

        def points_of(row: dict[str, str]) -> float | str:
            if row["question"] not in manual:
                known = ", ".join(manual) or "none"
                return f"{row['question']!r} is not a question graded by hand (those of this assignment: {known})"
            if row["student"] not in latest:
                return f"no submission of {row['student']!r} is in the gradebook"
            return manual[row["question"]]

        for row, score in scored_rows(path, rows, result, points_of):
            submission = latest[row["student"]]
            book.objects(Mark).update_or_create(
                student=submission.student, assignment=submission.assignment, question_id=row["question"],
                defaults={"submission": submission, "score": score, "comment": row["comment"], "marked_at": now,
                          "marked_by": who(), "rubric": [], "adjustment": 0.0},
            )  # fmt: skip

    book.run(record)
    return result
