"""What every export format starts from: the checks of some lessons, each with a stable
identifier, its options in display order, and its feedback. (Inline text is converted by
``course.inline``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import ExportError
from ..generated import GenerationError, Variant, draw
from ..loaders.markdown import parse_inline
from ..models import Check, GeneratedCheck, Lesson, Option, RichText, normalise_text
from ..tolerance import margin

CONFIRMATION = "Correct."
POOL_SEED = "export"  # the seed a pool's variants are drawn for: the same pool from every export


class Entry(BaseModel):
    """A question answered by typing, as a platform holds it: one drawn variant of a numeric or
    short-answer generated question, its answer fixed. A numeric answer is right within ``margin``
    (the question's tolerance about this answer, by the one rule); a short answer is right when it
    reads as one of ``accepted``, case aside."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["numeric", "short-answer"]
    stem: RichText
    answer: float | str
    margin: float = 0.0
    feedback: RichText | None = None
    id: str | None = None
    pool: str | None = None

    @property
    def accepted(self) -> list[str]:
        """A short answer's accepted texts: as written, and without its spaces (``(2,5,64)``)."""
        text = normalise_text(str(self.answer))
        compact = "".join(text.split())
        return [text] if compact == text else [text, compact]


class ExportItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    identifier: str
    number: int
    lesson_slug: str
    lesson_title: str
    key_idea: RichText | None  # the lesson's key idea, the general feedback of each of its checks
    # Exactly one: a multiple-choice check, a typed answer, or (Moodle) a question whose formula it computes.
    check: Check | None = None
    entry: Entry | None = None
    formula: GeneratedCheck | None = None
    dataset: list[dict[str, object]] = []  # a formula's drawn values, one dict per variant

    @property
    def kind(self) -> Literal["multiple-choice", "numeric", "short-answer", "calculated"]:
        if self.check is not None:
            return "multiple-choice"
        if self.entry is not None:
            return self.entry.kind
        return "calculated"

    @property
    def pool(self) -> str | None:
        return self.check.pool if self.check is not None else self.entry.pool if self.entry is not None else None

    @property
    def stem(self) -> RichText:
        if self.formula is not None:
            return RichText.of(self.formula.question)
        return self.choice.stem if self.entry is None else self.entry.stem

    @property
    def choice(self) -> Check:
        """The multiple-choice check (a format's code for checks asks for it by this name)."""
        assert self.check is not None, f"{self.identifier} is not a multiple-choice question"
        return self.check

    @property
    def options(self) -> list[Option]:
        return self.choice.displayed()

    @property
    def correct_position(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)

    def feedback(self, option: Option) -> RichText:
        return option.tempting if not option.correct and option.tempting else RichText.of(CONFIRMATION)


Question = Check | Entry | GeneratedCheck  # what one item holds (a GeneratedCheck: Moodle computes it)


def items_of(
    lessons: list[Lesson], variants: int = 0, fits: Callable[[GeneratedCheck], bool] | None = None
) -> list[ExportItem]:
    """Every check of the lessons, in lesson then check order, identified as <slug>-check-<n>; then
    each generated question, multiple-choice ones first: a fixed one (it draws nothing, as one read
    back from a platform) as itself, and with ``variants`` a drawn one as a pool of that many
    distinct drawn variants (fewer where it has fewer), <slug>-<question>-v<k>, in the pool
    <slug>-<question>; or as itself, with that many drawn sets of values, where the format computes
    it (``fits``: Moodle's calculated questions)."""
    items = []
    for lesson in lessons:
        questions: list[tuple[str | None, Question]] = [(check.id, check) for check in lesson.checks]
        ordered = sorted(enumerate(lesson.generated), key=lambda pair: pair[1].kind != "multiple-choice")
        datasets: dict[str, list[dict[str, object]]] = {}
        for n, question in ordered:
            if question.fixed:
                questions.append((question.id, _as_item(_drawn(lesson, n, question, 0), question.id, question.pool)))
            elif variants and fits is not None and fits(question):
                questions.append((question.id, question))
                datasets[question.id] = [_drawn(lesson, n, question, k).values for k in range(variants)]
            elif variants:
                questions += [(part.id, part) for part in pool_of(lesson, n, question, variants)]
        for number, (given, held) in enumerate(questions, start=1):
            identifier = given or f"{lesson.slug}-check-{number}"
            if not (identifier[0].isalpha() or identifier[0] == "_"):
                identifier = f"c-{identifier}"  # XML identifiers may not start with a digit
            item = ExportItem(
                identifier=identifier,
                number=number,
                lesson_slug=lesson.slug,
                lesson_title=lesson.title,
                key_idea=parse_inline(lesson.key_idea) if lesson.key_idea else None,
            )
            match held:
                case Check():
                    item = item.model_copy(update={"check": held})
                case Entry():
                    item = item.model_copy(update={"entry": held})
                case GeneratedCheck():
                    item = item.model_copy(update={"formula": held, "dataset": datasets[held.id]})
            items.append(item)
    return items


def _drawn(lesson: Lesson, n: int, question: GeneratedCheck, variant: int) -> Variant:
    try:
        return draw(question, POOL_SEED, variant)
    except GenerationError as exc:
        raise ExportError(f"nothing exported: {lesson.source}: /generated/{n}: {exc}") from None


def _as_item(variant: Variant, identifier: str | None = None, pool: str | None = None) -> Check | Entry:
    """A drawn variant as an export holds it: a check, or an entry with its answer and margin."""
    if variant.check is not None:
        return variant.check.model_copy(update={"id": identifier or variant.check.id, "pool": pool})
    assert variant.answer is not None
    tolerance = variant.tolerance
    return Entry(
        kind="short-answer" if isinstance(variant.answer, str) else "numeric",
        stem=variant.stem,
        answer=variant.answer,
        margin=0.0
        if isinstance(variant.answer, str)
        else margin(variant.answer, tolerance.relative, tolerance.absolute),
        feedback=variant.feedback,
        id=identifier,
        pool=pool,
    )


def pool_of(lesson: Lesson, n: int, question: GeneratedCheck, size: int) -> list[Check | Entry]:
    """Up to ``size`` variants of ``question`` that differ in more than their options' order (drawn
    for ``POOL_SEED``, variants 0, 1, ...; at most four times ``size`` draws), as questions of one pool."""
    pool = f"{lesson.slug}-{question.id}"
    found: dict[str, Check | Entry] = {}
    for variant in range(4 * size):
        drawn = _drawn(lesson, n, question, variant)
        options = sorted(o.text.plain() for o in drawn.check.options) if drawn.check is not None else []
        key = repr([drawn.stem.plain(), options, drawn.answer])  # the options' order aside
        if key not in found:
            found[key] = _as_item(drawn, f"{pool}-v{len(found) + 1}", pool)
        if len(found) == size:
            break
    return list(found.values())
