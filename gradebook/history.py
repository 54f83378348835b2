"""A student's history: every submission they handed in, with its time, hash and scores."""

from __future__ import annotations

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec

from .book import Gradebook
from .grades import reports_of, submissions_in_order


class HistoryEntry(BaseModel):
    assignment: str
    submitted_at: str
    graded_at: str
    sha256: str
    file: str
    questions: dict[str, float]
    score: float
    late_penalty: float
    final_score: float
    max_score: float
    current: bool  # the submission the student's grade comes from (their latest)


def history(book: Gradebook, student_id: str, specs: list[AssignmentSpec]) -> list[HistoryEntry]:
    """Every submission of the student to the given assignments, earliest first within each."""

    def read() -> list[HistoryEntry]:
        student = book.student(student_id)
        entries = []
        for spec in specs:
            submissions = list(submissions_in_order(book, spec.name, student))
            for submission, report in zip(submissions, reports_of(book, spec, submissions, student), strict=True):
                entries.append(
                    HistoryEntry(
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
                        current=submission.id == submissions[-1].id,
                    )
                )
        return entries

    return book.run(read)
