"""Empty answers in hand grading: an answer left blank, or left as the released notebook gave it (its
starter text, "YOUR ANSWER HERE"), has nothing to read. ``is_empty_answer`` is the one rule. The
marking pages keep such answers out of the one-by-one queue, its counts and the answer groups, and
``give_empty_zero`` (the marking list's one button) gives each of them 0 with ``NO_ANSWER`` through
give_mark: a mark like any other, shown to the student, exported, and re-marked one by one. An
exam's open answer follows the same rule (``is_empty_exam_answer``: typed blank online) and its
button the same path (``give_empty_exam_zero``, through record_exam_mark). Nothing is scored
without a grader asking."""

from __future__ import annotations

import tempfile
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question, question_of_cell

if TYPE_CHECKING:
    from gradebook import models
    from gradebook.book import Gradebook

NO_ANSWER = "No answer was given."  # the comment of the 0 an empty answer is given


def starter_texts(spec: AssignmentSpec, released: Path | None = None) -> dict[str, frozenset[str]]:
    """Per hand-graded question, the texts its answer cells hold in the released notebook
    ``released`` (the student's starting point), whitespace stripped; with None, the notebook is
    released now into a temporary folder (nbgrader: seconds)."""
    if released is None:
        from autograder.release import release

        with tempfile.TemporaryDirectory() as folder:
            return starter_texts(spec, release(spec, Path(folder)))
    from autograder.grading import answer_cells
    from autograder.submissions import Unreadable, extract

    try:
        cells = answer_cells(spec, extract(released))
    except Unreadable:  # a released notebook is never unreadable; if it were, only blank answers are empty
        cells = {}
    question_ids = [question.id for question in spec.questions]
    found: dict[str, set[str]] = {question.id: set() for question in spec.questions if question.manual}
    for key, text in cells.items():
        owner = question_of_cell(key, question_ids)
        if owner in found and text.strip():
            found[owner].add(text.strip())
    return {question_id: frozenset(texts) for question_id, texts in found.items()}


def is_empty_answer(answers: Mapping[str, object] | None, starters: Collection[str] = frozenset()) -> bool:
    """The rule: an answer (a result's written cells) is empty when each of its cells, whitespace
    stripped, is blank or exactly one of its question's ``starters`` (starter_texts)."""
    return all(not str(text).strip() or str(text).strip() in starters for text in (answers or {}).values())


def is_empty_exam_answer(typed: str | None) -> bool:
    """The rule for an exam's open answer: ``typed`` as saved online (an unanswered question's is
    "") is empty by is_empty_answer, with no starter text (the exam's answer box starts blank). None
    is an answer on a paper sheet: the gradebook never holds its text, so it is never empty here."""
    return typed is not None and is_empty_answer({"typed": typed})


def empty_answers(
    book: Gradebook, spec: AssignmentSpec, starters: Mapping[str, Collection[str]]
) -> dict[str, set[int]]:
    """Per hand-graded question of ``starters``, the submissions that count (their ids) whose answer
    is empty; one with no result for the question has nothing to read either. Two queries."""
    from gradebook.grades import counted_rows
    from gradebook.models import Result

    def read() -> dict[str, set[int]]:
        latest = counted_rows(book, spec).select_related(None)
        written: dict[tuple[int, str], dict] = {
            (submission_id, question_id): answers or {}
            for submission_id, question_id, answers in book.objects(Result)
            .filter(submission__in=latest.values("id"), question_id__in=list(starters))
            .values_list("submission_id", "question_id", "answers")
        }
        ids = list(latest.values_list("id", flat=True))
        return {
            question_id: {s for s in ids if is_empty_answer(written.get((s, question_id)), texts)}
            for question_id, texts in starters.items()
        }

    return book.run(read)


def give_empty_zero(
    book: Gradebook,
    spec: AssignmentSpec,
    question: Question,
    submission_ids: Iterable[int],
    starters: Collection[str],
    by: str,
) -> list[models.Submission]:
    """Give 0 with ``NO_ANSWER`` to each of ``submission_ids`` whose answer is empty now (one handed in
    again since, or not empty, is left out: never marked unseen), each through give_mark, all or
    none. The submissions marked."""
    from gradebook.models import Submission

    from .marks import give_mark

    chosen = set(submission_ids) & empty_answers(book, spec, {question.id: starters})[question.id]

    def write() -> list[models.Submission]:
        marked = list(
            book.objects(Submission).select_related("student", "assignment").filter(id__in=chosen).order_by("id")
        )
        for submission in marked:
            give_mark(book, submission, question, 0.0, NO_ANSWER, by)
        return marked

    return book.run(write)


def give_empty_exam_zero(book: Gradebook, exam: Path, question: str, student_ids: Iterable[str], by: str) -> list[str]:
    """Give 0 with ``NO_ANSWER`` to the open question ``question`` of each of ``student_ids`` (the
    caller's empty answers not marked yet: the service holds the typed texts), each through
    record_exam_mark, all or none. The student ids marked, in order."""
    from gradebook.exams import record_exam_mark

    marked = sorted(set(student_ids))

    def write() -> list[str]:
        for student_id in marked:
            record_exam_mark(book, exam, student_id, question, 0.0, NO_ANSWER, by)
        return marked

    return book.run(write)
