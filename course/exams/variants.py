"""Per-student variants: which questions, in which order, with which option under which letter.

Orders come from SHA-256 of (seed, student, question[, option]), so the same inputs give the same
variants on any machine and any Python or numpy version."""

from __future__ import annotations

import hashlib
from string import ascii_uppercase
from typing import Literal

from pydantic import BaseModel

from ..exports.items import items_of
from ..generated import Variant as Drawn
from ..generated import judge, precision_of
from ..models import Check, GeneratedCheck, Lesson, Tolerance
from .definition import ExamDefinition


class Choice(BaseModel):
    option: int  # index in the check's own option list
    text: str  # inline Markdown
    correct: bool
    tempting: str | None = None


# A question's kind on an exam: "choice" (a letter on the answer sheet), "value" (a number or a short
# answer written in its box, checked by the question's tolerance), "open" (words, graded by hand).
Kind = Literal["choice", "value", "open"]


class Written(BaseModel):
    """A numeric or short-answer question's drawn answer, as a paper sheet is checked against it."""

    kind: Literal["numeric", "short-answer"]
    answer: float | str
    tolerance: Tolerance
    units: str | None = None  # printed after the box
    precision: str | None = None  # what its stated tolerance asks, printed after the box: "to 3 decimals"
    feedback: str | None = None  # inline Markdown: the question's feedback for this variant

    def shown(self) -> str:
        """The answer as the key and the feedback write it: a number to 10 significant figures
        (which grading it again finds right), a short answer as drawn."""
        return self.answer if isinstance(self.answer, str) else f"{self.answer:.10g}"

    def expected(self) -> str:
        """What the answer's box says is expected, as far as the question states it: its precision
        and its units (``to 3 decimals, in ms``)."""
        return ", ".join(filter(None, [self.precision, f"in {self.units}" if self.units else None]))

    def judge(self, response: str) -> bool | None:
        """Right or wrong by the question's tolerance (the one rule); None: no number where one is asked."""
        return judge(self.kind, response, self.answer, self.tolerance, self.units)


class BankQuestion(BaseModel):
    id: str
    lesson: str
    kind: Kind
    stem: str  # inline Markdown
    options: list[Choice] = []  # in the check's display order
    written: Written | None = None  # a "value" question's answer
    # A generated question's drawn variant: the question it was drawn from, and its drawn values.
    source: str | None = None
    variant: str | None = None


class VariantQuestion(BaseModel):
    position: int
    question: str
    kind: Kind
    letters: dict[str, int] = {}  # letter on this variant -> option index in the check
    # An exam built from zones (course.exams.zones): the zone (1-based), what the question is worth,
    # and the entry of the zone's pool it is one alternative of.
    zone: int | None = None
    points: float = 1.0
    alternatives: str | None = None

    def letter_of(self, option: int) -> str:
        return next(letter for letter, index in self.letters.items() if index == option)


class Student(BaseModel):
    student_id: str
    name: str
    email: str


class Variant(BaseModel):
    student: Student
    questions: list[VariantQuestion]


class ZoneKey(BaseModel):
    title: str
    choose: int
    points: float


class ExamKey(BaseModel):
    """key.json: what every letter on every variant means, and the questions themselves, so that
    grading needs nothing but the exam folder."""

    format: Literal["module10-exam-key"] = "module10-exam-key"
    version: Literal[1] = 1
    title: str
    seed: int
    shuffled: bool
    questions: dict[str, BankQuestion]
    variants: list[Variant]
    zones: list[ZoneKey] = []  # an exam built from a definition's zones (each student's own draw)
    # The definition itself, so that a student not on the roster (the staff's trial online) is drawn by
    # the same rule, from the same pools (course.exams.zones.zoned_variant).
    definition: ExamDefinition | None = None

    def correct_letter(self, question: VariantQuestion) -> str:
        bank = self.questions[question.question]
        correct = next(choice.option for choice in bank.options if choice.correct)
        return question.letter_of(correct)


def bank_question(
    identifier: str, lesson: str, check: Check, source: str | None = None, variant: str | None = None
) -> BankQuestion:
    """A check as the exam's key holds it: its stem and options as Markdown, in display order."""
    return BankQuestion(
        id=identifier,
        lesson=lesson,
        kind="choice",
        stem=check.stem.markdown(),
        options=[
            Choice(
                option=index,
                text=option.text.markdown(),
                correct=option.correct,
                tempting=option.tempting.markdown() if option.tempting else None,
            )
            for index, option in ((i, check.options[i]) for i in check.order)
        ],
        source=source,
        variant=variant,
    )


def written_question(
    identifier: str, lesson: str, question: GeneratedCheck, drawn: Drawn, source: str, variant: str
) -> BankQuestion:
    """A numeric or short-answer generated question's drawn variant as the exam's key holds it: its
    stem, and its answer with the question's tolerance, units and the precision that tolerance asks."""
    assert drawn.answer is not None and question.kind != "multiple-choice"
    written = Written(
        kind=question.kind,
        answer=drawn.answer,
        tolerance=question.tolerance,
        units=question.units,
        precision=precision_of(question),
        feedback=drawn.feedback.markdown() if drawn.feedback else None,
    )
    stem = drawn.stem.markdown()
    return BankQuestion(
        id=identifier, lesson=lesson, kind="value", stem=stem, written=written, source=source, variant=variant
    )


def bank_of(lessons: list[Lesson], include_open: bool) -> list[BankQuestion]:
    questions = [
        bank_question(item.identifier, item.lesson_title, item.check)
        for item in items_of(lessons)
        if item.check is not None  # a paper exam's questions are multiple-choice
    ]
    if include_open:
        for lesson in lessons:
            for number, question in enumerate(lesson.open_questions, start=1):
                questions.append(
                    BankQuestion(
                        id=f"{lesson.slug}-open-{number}",
                        lesson=lesson.title,
                        kind="open",
                        stem=question.prompt.markdown(),
                    )
                )
    return questions


def make_variant(
    student: Student, bank: list[BankQuestion], seed: int, count: int, shuffle: bool, open_count: int = 0
) -> Variant:
    """``count`` check questions, then ``open_count`` open ones (the same number for every student),
    each drawn and ordered by (seed, student)."""
    choice = [question for question in bank if question.kind == "choice"]
    written = [question for question in bank if question.kind == "open"]
    if shuffle:
        choice = sorted(choice, key=lambda q: rank(seed, student.student_id, q.id))
        written = sorted(written, key=lambda q: rank(seed, student.student_id, q.id))
    chosen = choice[:count] + written[:open_count]
    questions = [
        placed(question, position, student, seed, shuffle) for position, question in enumerate(chosen, start=1)
    ]
    return Variant(student=student, questions=questions)


def placed(
    question: BankQuestion, position: int, student: Student, seed: int, shuffle: bool, **more: object
) -> VariantQuestion:
    """``question`` at ``position`` on the student's variant, its options' letters drawn by (seed, student)."""
    options = [choice.option for choice in question.options]
    if shuffle:
        options.sort(key=lambda option: rank(seed, student.student_id, question.id, str(option)))
    letters = {letter: option for letter, option in zip(ascii_uppercase, options, strict=False)}
    return VariantQuestion(position=position, question=question.id, kind=question.kind, letters=letters, **more)  # type: ignore[arg-type]


def rank(seed: int, *parts: str) -> str:
    """The order of a draw: SHA-256 of the seed and the parts (a student, a question...)."""
    return hashlib.sha256("\x1f".join((str(seed), *parts)).encode()).hexdigest()
