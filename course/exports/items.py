"""What every export format starts from: the checks of some lessons, each with a stable
identifier, its options in display order, and its feedback. (Inline text is converted by
``course.inline``.)"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..errors import ExportError
from ..generated import GenerationError, draw
from ..loaders.markdown import parse_inline
from ..models import Check, GeneratedCheck, Lesson, Option, RichText

CONFIRMATION = "Correct."
POOL_SEED = "export"  # the seed a pool's variants are drawn for: the same pool from every export


class ExportItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    identifier: str
    number: int
    lesson_slug: str
    lesson_title: str
    key_idea: RichText | None  # the lesson's key idea, the general feedback of each of its checks
    check: Check

    @property
    def options(self) -> list[Option]:
        return self.check.displayed()

    @property
    def correct_position(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)

    def feedback(self, option: Option) -> RichText:
        return option.tempting if not option.correct and option.tempting else RichText.of(CONFIRMATION)


def items_of(lessons: list[Lesson], variants: int = 0) -> list[ExportItem]:
    """Every check of the lessons, in lesson then check order, identified as <slug>-check-<n>; with
    ``variants``, each multiple-choice generated question after them as a pool of that many distinct
    drawn variants (fewer where it has fewer), <slug>-<question>-v<k>, in the pool <slug>-<question>."""
    items = []
    for lesson in lessons:
        checks = list(lesson.checks)
        if variants:
            for n, question in enumerate(lesson.generated):
                if question.kind == "multiple-choice":
                    checks += pool_of(lesson, n, question, variants)
        for number, check in enumerate(checks, start=1):
            identifier = check.id or f"{lesson.slug}-check-{number}"
            if not (identifier[0].isalpha() or identifier[0] == "_"):
                identifier = f"c-{identifier}"  # XML identifiers may not start with a digit
            items.append(
                ExportItem(
                    identifier=identifier,
                    number=number,
                    lesson_slug=lesson.slug,
                    lesson_title=lesson.title,
                    key_idea=parse_inline(lesson.key_idea) if lesson.key_idea else None,
                    check=check,
                )
            )
    return items


def pool_of(lesson: Lesson, n: int, question: GeneratedCheck, size: int) -> list[Check]:
    """Up to ``size`` variants of ``question`` that differ in more than their options' order (drawn for ``POOL_SEED``, variants 0, 1, ...;
    at most four times ``size`` draws), as checks of one pool."""
    pool = f"{lesson.slug}-{question.id}"
    found: dict[str, Check] = {}
    for variant in range(4 * size):
        try:
            check = draw(question, POOL_SEED, variant).check
        except GenerationError as exc:
            raise ExportError(f"nothing exported: {lesson.source}: /generated/{n}: {exc}") from None
        assert check is not None  # a multiple-choice question's variant is a check
        key = repr([check.stem.plain(), sorted(option.text.plain() for option in check.options)])  # order aside
        if key not in found:
            found[key] = check.model_copy(update={"id": f"{pool}-v{len(found) + 1}", "pool": pool})
        if len(found) == size:
            break
    return list(found.values())
