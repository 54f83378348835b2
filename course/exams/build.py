"""``course exam build``: a variant per student on the roster, the key, and an answer-sheet template."""

from __future__ import annotations

import io
from pathlib import Path

from pydantic import BaseModel

from untrusted import spreadsheet

from ..catalog import load_catalog
from ..errors import Problem
from ..models import Lesson
from .csvfiles import SAFE_ID, ExamError, problem, read_rows
from .definition import ExamDefinition, load_definition
from .pages import markdown, page, sheet
from .variants import ExamKey, Student, ZoneKey, bank_of, make_variant
from .zones import Pool, read_difficulty, zoned_variant

ROSTER_COLUMNS = ["student_id", "name", "email"]
DEFAULT_TITLE = "Module 10 exam: Sequences and attention"


class BuildResult(BaseModel):
    students: int
    questions: int
    problems: list[Problem] = []


def read_roster(path: Path) -> tuple[list[Student], list[Problem]]:
    _, rows = read_rows(path, ROSTER_COLUMNS)
    students: list[Student] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for row_number, row in rows:
        student_id = row["student_id"]
        if not student_id:
            problems.append(problem(path, row_number, "no student_id; row skipped"))
        elif not SAFE_ID.match(student_id):
            problems.append(
                problem(
                    path,
                    row_number,
                    f"student_id {student_id!r} may only hold letters, digits, '.', '_' and '-'; row skipped",
                )
            )
        elif student_id in seen:
            problems.append(
                problem(path, row_number, f"student_id {student_id!r} repeats row {seen[student_id]}; row skipped")
            )
        else:
            seen[student_id] = row_number
            students.append(Student(student_id=student_id, name=row["name"] or student_id, email=row["email"]))
    if not students:
        raise ExamError(f"{path}: no usable rows" + (f" ({problems[0].where}: {problems[0].what})" if problems else ""))
    return students, problems


def build_exam(
    roster: Path,
    out: Path,
    seed: int = 0,
    questions: int | None = None,
    lessons: list[Path] | None = None,
    shuffle: bool = True,
    include_open: bool = False,
    title: str | None = None,
    open_questions: int | None = None,
    force: bool = False,
    definition: Path | None = None,
    statistics: Path | None = None,
    course_title: str | None = None,
) -> BuildResult:
    """A variant per student: ``questions`` check questions (default all) and ``open_questions``
    self-check questions graded by hand (default none; ``include_open`` takes them all), the same
    numbers for everyone. With a ``definition`` (course.exams.definition), each student's questions
    are their own draw from its zones instead (``questions`` does not apply), generated questions
    drawn for them, zones asking for balance balanced by the difficulty ``statistics`` (an earlier
    grading's items.csv) measured. The title: ``title``, else the definition's, else ``course_title``.
    Refuses a folder that already holds an exam unless ``force``: grading old answer sheets against
    a new key would silently change every score."""
    _refuse_existing(out, force)
    students, problems = read_roster(roster)
    catalog = load_catalog(lessons or [Path("lesson_data")])
    if catalog.errors:
        raise ExamError(f"cannot build from these lessons: {catalog.errors[0]}")
    zoned = load_definition(definition) if definition else None
    title = title or (zoned.title if zoned else None) or course_title or DEFAULT_TITLE
    if zoned is not None:
        if questions is not None or open_questions or include_open:
            raise ExamError("an exam's definition says how many questions each zone chooses: no --questions or --open")
        return _build_zoned(students, problems, catalog.lessons, zoned, out, seed, shuffle, title, statistics)
    if statistics is not None:
        raise ExamError("--statistics balances a definition's zones: give the exam's --definition too")
    bank = bank_of(catalog.lessons, include_open or bool(open_questions))
    choice = sum(question.kind == "choice" for question in bank)
    written = len(bank) - choice
    if not choice:
        raise ExamError("the lessons hold no check questions")
    count = choice if questions is None else questions
    if not 1 <= count <= choice:
        raise ExamError(f"--questions must be between 1 and {choice}, the number of check questions in the lessons")
    open_count = written if include_open and open_questions is None else (open_questions or 0)
    if not 0 <= open_count <= written:
        raise ExamError(f"--open must be between 0 and {written}, the number of self-check questions in the lessons")
    if not out.parent.is_dir():
        raise ExamError(f"{out}: cannot write here: the folder {out.parent} does not exist")
    variants = [make_variant(student, bank, seed, count, shuffle, open_count) for student in students]
    key = ExamKey(title=title, seed=seed, shuffled=shuffle, questions={q.id: q for q in bank}, variants=variants)
    _write(key, out)
    return BuildResult(students=len(students), questions=count + open_count, problems=problems)


def _build_zoned(
    students: list[Student],
    problems: list[Problem],
    lessons: list[Lesson],
    definition: ExamDefinition,
    out: Path,
    seed: int,
    shuffle: bool,
    title: str,
    statistics: Path | None,
) -> BuildResult:
    pool = Pool(lessons, definition)
    difficulty = read_difficulty(statistics) if statistics else None
    if not out.parent.is_dir():
        raise ExamError(f"{out}: cannot write here: the folder {out.parent} does not exist")
    variants = [zoned_variant(student, definition, pool, seed, shuffle, difficulty) for student in students]
    used = {question.question for variant in variants for question in variant.questions}
    questions = {name: question for name, question in {**pool.fixed, **pool.drawn}.items() if name in used}
    zones = [ZoneKey(title=zone.title, choose=zone.choose, points=zone.points) for zone in definition.zones]
    key = ExamKey(
        title=title,
        seed=seed,
        shuffled=shuffle,
        questions=questions,
        variants=variants,
        zones=zones,
        definition=definition,
    )
    _write(key, out)
    return BuildResult(students=len(students), questions=len(variants[0].questions), problems=problems)


def _write(key: ExamKey, out: Path) -> None:
    """Each student's exam (Markdown and HTML), answer sheet, the key and the responses' template."""
    variants = key.variants
    out.mkdir(exist_ok=True)
    for variant in variants:
        student_id = variant.student.student_id
        (out / f"{student_id}.md").write_text(markdown(key, variant), encoding="utf-8")
        (out / f"{student_id}.html").write_text(page(key, variant), encoding="utf-8")
        (out / f"{student_id}.sheet.html").write_text(sheet(key, variant), encoding="utf-8")
    (out / "key.json").write_text(key.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (out / "key.csv").write_text(_answers(key), encoding="utf-8")
    (out / "responses-template.csv").write_text(_template(variants, len(variants[0].questions)), encoding="utf-8")


def _refuse_existing(out: Path, force: bool) -> None:
    key = out / "key.json"
    if force or not key.exists():
        return
    try:
        seed = f" with seed {ExamKey.model_validate_json(key.read_text(encoding='utf-8')).seed}"
    except (OSError, ValueError):
        seed = ""
    raise ExamError(f"{out}: an exam is already built here{seed}; use --force to replace it")


def _answers(key: ExamKey) -> str:
    """key.csv, the answer key of every sheet in the responses' shape: each question's right letter on
    that student's variant, or the answer drawn for them (graded as responses, it is right everywhere);
    blank for a question graded by hand."""
    buffer = io.StringIO()
    writer = spreadsheet.writer(buffer, lineterminator="\n")
    writer.writerow(["student_id", *(f"q{n}" for n in range(1, len(key.variants[0].questions) + 1))])
    for variant in key.variants:
        answers = []
        for question in variant.questions:
            written = key.questions[question.question].written
            if question.kind == "open":
                answers.append("")
            else:
                answers.append(written.shown() if written is not None else key.correct_letter(question))
        writer.writerow([variant.student.student_id, *answers])
    return buffer.getvalue()


def _template(variants, count: int) -> str:
    buffer = io.StringIO()
    writer = spreadsheet.writer(buffer, lineterminator="\n")
    writer.writerow(["student_id", *(f"q{n}" for n in range(1, count + 1))])
    for variant in variants:
        writer.writerow([variant.student.student_id, *([""] * count)])
    return buffer.getvalue()
