"""Each student's draw from an exam's zones (``course.exams.definition``): from each zone, ``choose``
entries of its pool, ranked by SHA-256 of (seed, student, zone, entry); of an entry with alternatives,
one, ranked the same way; of a generated question, the student's own drawn variant (drawn for
``<seed>:<student>``). The same seed and student give the same draw on every machine.

With item statistics (an earlier grading's items.csv) a zone that asks for ``balance`` draws one
entry from each of ``choose`` bands of measured difficulty, so that no student's zone is much harder
than another's: the entries sorted by difficulty (an entry of alternatives by their mean; one never
measured by the mean of those measured) and cut into ``choose`` bands of near-equal size.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

from ..errors import ExamError
from ..exports.items import items_of
from ..generated import GenerationError, draw
from ..models import GeneratedCheck, Lesson
from .definition import ExamDefinition, Zone
from .variants import (
    BankQuestion,
    Student,
    Variant,
    VariantQuestion,
    bank_question,
    placed,
    rank,
    written_question,
)


class Pool:
    """The questions an exam's definition may name: every check (by its export identifier) and every
    generated question (``<lesson>-<question id>``), and the variants drawn so far."""

    def __init__(self, lessons: list[Lesson], definition: ExamDefinition) -> None:
        self.fixed = {
            item.identifier: bank_question(item.identifier, item.lesson_title, item.check)
            for item in items_of(lessons)
            if item.check is not None
        }
        self.generated: dict[str, tuple[str, GeneratedCheck]] = {
            f"{lesson.slug}-{question.id}": (lesson.title, question)
            for lesson in lessons
            for question in lesson.generated
        }
        self.drawn: dict[str, BankQuestion] = {}  # every generated variant on some student's exam
        for name in definition.names():
            if name not in self.fixed and name not in self.generated:
                raise ExamError(f"the exam names {name!r}, which is no check or generated question of the lessons")

    def question(self, name: str, student: Student, seed: int) -> BankQuestion:
        """The question ``name`` as ``student`` gets it: a check as it is, a generated one drawn for them."""
        if name in self.fixed:
            return self.fixed[name]
        lesson, question = self.generated[name]
        try:
            variant = draw(question, f"{seed}:{student.student_id}")
        except GenerationError as exc:
            raise ExamError(f"{name}: {exc}") from None
        values = ", ".join(f"{key}={value}" for key, value in variant.values.items())
        if variant.check is not None:
            options = sorted(option.text.plain() for option in variant.check.options)
            content = repr([variant.check.stem.plain(), options])
        else:
            content = repr([variant.stem.plain(), variant.answer])
        # The same drawn question for two students (their options' order aside) is one question of the key.
        identifier = f"{name}~{hashlib.sha256(content.encode()).hexdigest()[:10]}"
        if identifier not in self.drawn:
            if variant.check is not None:
                drawn = bank_question(identifier, lesson, variant.check, source=name, variant=values)
            else:
                drawn = written_question(identifier, lesson, question, variant, source=name, variant=values)
            self.drawn[identifier] = drawn
        return self.drawn[identifier]


def read_difficulty(path: Path) -> dict[str, float]:
    """Each question's measured difficulty (the share right) from an earlier grading's items.csv, a
    generated question's over all its variants."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise ExamError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if rows and not {"question", "students", "correct"} <= set(rows[0]):
        raise ExamError(f"{path}: not an items.csv of `course exam grade` (no question, students, correct columns)")
    totals: dict[str, list[int]] = {}
    for row in rows:
        if row.get("kind", "choice") == "open" or not row["students"]:
            continue
        name = row.get("source") or row["question"]
        counts = totals.setdefault(name, [0, 0])
        counts[0] += int(row["correct"] or 0)
        counts[1] += int(row["students"])
    return {name: right / students for name, (right, students) in totals.items() if students}


def zoned_variant(
    student: Student,
    definition: ExamDefinition,
    pool: Pool,
    seed: int,
    shuffle: bool = True,
    difficulty: dict[str, float] | None = None,
) -> Variant:
    """The student's questions: each zone's draw in the zone's order, numbered through the exam."""
    questions: list[VariantQuestion] = []
    for number, zone in enumerate(definition.zones, start=1):
        for key, names in _chosen(zone, number, student, seed, shuffle, difficulty or {}):
            name = min(names, key=lambda n: rank(seed, student.student_id, key, n)) if len(names) > 1 else names[0]
            question = pool.question(name, student, seed)
            more = {"zone": number, "points": zone.points, "alternatives": key if len(names) > 1 else None}
            questions.append(placed(question, len(questions) + 1, student, seed, shuffle, **more))
    return Variant(student=student, questions=questions)


def _chosen(
    zone: Zone, number: int, student: Student, seed: int, shuffle: bool, difficulty: dict[str, float]
) -> list[tuple[str, list[str]]]:
    entries = zone.entries()
    order = {key: rank(seed, student.student_id, f"zone {number}", key) for key, _ in entries}
    if zone.balance and difficulty:
        measured = [difficulty[name] for _, names in entries for name in names if name in difficulty]
        middle = sum(measured) / len(measured) if measured else 0.5

        def hardness(entry: tuple[str, list[str]]) -> float:
            known = [difficulty[name] for name in entry[1] if name in difficulty]
            return sum(known) / len(known) if known else middle

        ranked = sorted(entries, key=lambda entry: (hardness(entry), entry[0]))
        bands = [
            ranked[len(ranked) * k // zone.choose : len(ranked) * (k + 1) // zone.choose] for k in range(zone.choose)
        ]
        chosen = [min(band, key=lambda entry: order[entry[0]]) for band in bands]
    else:
        chosen = sorted(entries, key=lambda entry: order[entry[0]])[: zone.choose]
    if shuffle:
        return sorted(chosen, key=lambda entry: order[entry[0]])
    position = {key: n for n, (key, _) in enumerate(entries)}
    return sorted(chosen, key=lambda entry: position[entry[0]])
