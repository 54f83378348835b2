"""Files written from the gradebook: ``grades.csv`` and every student's current reports (after
marks are imported, an extension granted, or a regrade), through the engine's report writers."""

from __future__ import annotations

from pathlib import Path

from autograder.assignment import Assignment as AssignmentSpec
from autograder.batch import write_reports
from course.private_files import private_text
from course.wording import shown_score
from untrusted import spreadsheet

from .book import Gradebook
from .files import MarksImport
from .grades import current_grades


def write_grades_csv(book: Gradebook, spec: AssignmentSpec, path: Path) -> Path:
    """One row per student who handed something in: per question score (marks included), the earned
    score, the late penalty, the final score."""
    questions = [q.id for q in spec.questions]
    grades = book.run(lambda: current_grades(book, spec))
    with private_text(path, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(["student", *questions, "score", "late_penalty", "final_score", "max_score"])
        for grade in grades:
            report = grade.report
            if report is None:  # nothing handed in: no row (current_grades lists none such)
                continue
            by_id = {q.id: q.score for q in report.questions}
            writer.writerow(
                [
                    grade.student_id,
                    *(shown_score(by_id.get(q)) for q in questions),
                    shown_score(report.score),
                    shown_score(report.late.points if report.late else 0.0),
                    shown_score(report.final_score),
                    shown_score(report.max_score),
                ]
            )
    return path


def write_current_reports(book: Gradebook, spec: AssignmentSpec, out: Path) -> int:
    """Every student's current report files and grades.csv into ``out``; the number of students."""
    out.mkdir(parents=True, exist_ok=True)
    grades = book.run(lambda: current_grades(book, spec))
    for grade in grades:
        if grade.report is not None:  # (current_grades lists only those who handed something in)
            write_reports(grade.report, out)
    write_grades_csv(book, spec, out / "grades.csv")
    return len(grades)


def import_marks_and_reports(book: Gradebook, spec: AssignmentSpec, sheet: Path, reports: Path | None) -> MarksImport:
    """``autograder marks import``: the sheet's marks recorded (``import_marks``), then, with
    ``reports``, every student's current reports rewritten there."""
    from .marking.marks import import_marks

    result = import_marks(book, spec, sheet)
    if reports:
        write_current_reports(book, spec, reports)
    return result
