"""An exam's open questions marked by hand, and its results, in the gradebook: ``course exam marks
export|import`` and ``course exam grade --gradebook``. An exam is known by its title (key.json's)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from course.exams.grade import OPEN_POINTS, ExamGradeResult, OpenMark, grade_exam, load_key
from course.exams.variants import ExamKey
from course.private_files import private_text
from untrusted import spreadsheet

from .book import Gradebook
from .errors import BadEdit
from .files import MarksImport, marks_sheet, scored_rows

if TYPE_CHECKING:
    from .models import ExamMark

COLUMNS = [
    "exam",
    "student_id",
    "name",
    "position",
    "question",
    "points",
    "text",
    "marked_score",
    "marked_comment",
    "score",
    "comment",
]
REQUIRED = ["exam", "student_id", "question", "score", "comment"]


def export_exam_marks(book: Gradebook, exam: Path, out: Path) -> int:
    """One row per student and open question of the exam in ``exam`` (answered on the paper sheet)."""
    title = load_key(exam).title
    answers = open_answers(book, exam)
    out.parent.mkdir(parents=True, exist_ok=True)
    with private_text(out, newline="") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(COLUMNS)
        for answer in answers:
            writer.writerow(
                [
                    title,
                    answer.student_id,
                    answer.name,
                    f"q{answer.position}",
                    answer.question,
                    f"{OPEN_POINTS:g}",
                    answer.text,
                    "" if answer.score is None else f"{answer.score:g}",
                    answer.comment,
                    "",
                    "",
                ]
            )
    return len(answers)


def import_exam_marks(book: Gradebook, exam: Path, path: Path) -> MarksImport:
    """Record a filled-in sheet; a sheet of another exam changes nothing, a bad row is reported."""
    from .models import ExamMark

    key = load_key(exam)
    rows = marks_sheet(path, REQUIRED, "exam", key.title, "exam")
    open_questions = _open_questions(key)
    result = MarksImport()

    def points_of(row: dict[str, str]) -> float | str:
        questions = open_questions.get(row["student_id"])
        if questions is None:
            return f"student_id {row['student_id']!r} has no variant in this exam"
        if row["question"] not in questions:
            return f"{row['question']!r} is not an open question of {row['student_id']!r}'s variant"
        return OPEN_POINTS

    def record() -> None:
        now = datetime.now(UTC)
        for row, score in scored_rows(path, rows, result, points_of):
            book.objects(ExamMark).update_or_create(
                exam=key.title,
                student=_student(book, key, row["student_id"]),
                question=row["question"],
                defaults={"score": score, "max_score": OPEN_POINTS, "comment": row["comment"], "marked_at": now},
            )

    book.run(record)
    return result


class OpenAnswer(BaseModel):
    """One student's answer to one open question of an exam, on their paper sheet, and its mark."""

    student_id: str
    name: str
    position: int  # where the question is on this student's variant (q3)
    question: str
    text: str  # the question's text
    score: float | None = None
    comment: str = ""
    marked_at: datetime | None = None


def open_answers(book: Gradebook, exam: Path) -> list[OpenAnswer]:
    """Every open question's answer of the exam in ``exam``, in the order of the variants (the
    roster's), with its mark so far.

    Once the sheets were graded into the gradebook (``course exam grade --gradebook``), a student
    whose sheet was not among them handed none in: their answers are left out, unless one was
    marked already. Before that, no sheet has been read, and every student is listed."""

    key = load_key(exam)
    given = _marks_given(book, key)
    sheets = sheets_graded(book, key.title)
    answers = []
    for variant in key.variants:
        for question in variant.questions:
            if question.kind != "open":
                continue
            mark = given.get((variant.student.student_id, question.question))
            if sheets and variant.student.student_id not in sheets and mark is None:
                continue
            answers.append(
                OpenAnswer(
                    student_id=variant.student.student_id,
                    name=variant.student.name,
                    position=question.position,
                    question=question.question,
                    text=key.questions[question.question].stem,
                    score=None if mark is None else mark.score,
                    comment="" if mark is None else mark.comment,
                    marked_at=None if mark is None else mark.marked_at,
                )
            )
    return answers


def record_exam_mark(
    book: Gradebook,
    exam: Path,
    student_id: str,
    question: str,
    score: float,
    comment: str,
    by: str = "",
    group: str = "",
) -> None:
    """Record one open question's mark (the last save wins), as a filled-in sheet's row would be;
    ``by`` who gave it, ``group`` the key of the answer group it was given through, if any."""
    from .models import ExamMark

    key = load_key(exam)
    if question not in _open_questions(key).get(student_id, set()):
        raise BadEdit(f"{question!r} is not an open question of {student_id!r}'s variant of {key.title!r}")
    if not 0 <= score <= OPEN_POINTS:
        raise BadEdit(f"an open question's score is between 0 and {OPEN_POINTS:g}")
    given = {"score": score, "max_score": OPEN_POINTS, "comment": comment, "marked_at": datetime.now(UTC)}
    book.run(
        lambda: book.objects(ExamMark).update_or_create(
            exam=key.title,
            student=_student(book, key, student_id),
            question=question,
            defaults={**given, "marked_by": by, "group": group},
        )
    )


def grade_exam_with_marks(
    exam: Path, responses: Path, out: Path, gradebook: Path | None = None, url: str | None = None
) -> ExamGradeResult:
    """``course exam grade``: with a gradebook named (``gradebook``, or the database ``url`` or
    ``$GRADEWRIGHT_DATABASE_URL`` names), the open questions' marks counted and the results recorded
    there (``grade_exam_into_gradebook``); without one, the sheets alone (``grade_exam``)."""
    from .database import database_url

    if not gradebook and not database_url(url):
        return grade_exam(exam, responses, out)
    with Gradebook.open(gradebook or Path("gradebook.db"), url) as book:
        return grade_exam_into_gradebook(book, exam, responses, out)


def grade_exam_into_gradebook(book: Gradebook, exam: Path, responses: Path, out: Path) -> ExamGradeResult:
    """``course exam grade`` with the open questions' marks counted, and each result recorded."""
    from .models import ExamResult

    key = load_key(exam)
    marks = {given: OpenMark(score=mark.score, comment=mark.comment) for given, mark in _marks_given(book, key).items()}
    graded = grade_exam(exam, responses, out, marks)

    def record() -> None:
        now = datetime.now(UTC)
        for result in graded.results:
            book.objects(ExamResult).update_or_create(
                exam=key.title,
                student=_student(book, key, result.student_id),
                defaults={"score": result.score, "max_score": result.max_score, "graded_at": now},
            )

    book.run(record)
    return graded


def sheets_graded(book: Gradebook, title: str) -> set[str]:
    """The student ids whose sheet of the exam titled ``title`` was graded into the gradebook (none
    before ``course exam grade --gradebook``)."""
    from .models import ExamResult

    return set(
        book.run(
            lambda: list(book.objects(ExamResult).filter(exam=title).values_list("student__student_id", flat=True))
        )
    )


def _marks_given(book: Gradebook, key: ExamKey) -> dict[tuple[str, str], ExamMark]:
    """The exam's marks so far, by (student id, question id)."""
    from .models import ExamMark

    marks = book.run(lambda: list(book.objects(ExamMark).filter(exam=key.title).select_related("student")))
    return {(mark.student.student_id, mark.question): mark for mark in marks}


def _open_questions(key: ExamKey) -> dict[str, set[str]]:
    return {
        variant.student.student_id: {q.question for q in variant.questions if q.kind == "open"}
        for variant in key.variants
    }


def _student(book: Gradebook, key: ExamKey, student_id: str):
    from .models import Student

    variant = next(v for v in key.variants if v.student.student_id == student_id)
    student, created = book.objects(Student).get_or_create(
        student_id=student_id, defaults={"name": variant.student.name, "email": variant.student.email}
    )
    return student
