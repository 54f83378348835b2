"""What every export format starts from: the checks of some lessons, each with a stable
identifier, its options in display order, and its feedback. (Inline text is converted by
``course.inline``.)"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..loaders.markdown import parse_inline
from ..models import Check, Lesson, Option, RichText

CONFIRMATION = "Correct."


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


def items_of(lessons: list[Lesson]) -> list[ExportItem]:
    """Every check of the lessons, in lesson then check order, identified as <slug>-check-<n>."""
    items = []
    for lesson in lessons:
        for number, check in enumerate(lesson.checks, start=1):
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
