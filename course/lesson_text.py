"""Lessons as text for a terminal: the readable form behind ``course show`` and ``course lessons``."""

from __future__ import annotations

import textwrap
from pathlib import Path
from string import ascii_uppercase

from rich.table import Table

from untrusted.text import for_terminal

from .catalog import Catalog
from .generated import GenerationError, draw
from .models import Block, Check, CodeBlock, GeneratedCheck, Heading, Lesson, ListBlock, MathBlock, Paragraph
from .wording import plural

WIDTH = 88
PREVIEW = "preview"  # the seed `course show` draws generated checks for when no student is named


def lesson_text(lesson: Lesson, who: str | None = None) -> str:
    """The lesson in the order it was written, then its checks (generated ones drawn for ``who``,
    a student or any seed) and where it comes from."""
    lines: list[str] = []
    lines += [lesson.title, "=" * len(lesson.title)]
    facts = [f"slug: {lesson.slug}", f"format: {lesson.format}", f"file: {lesson.source}"]
    if lesson.module:
        number = f"{lesson.module.number}. " if lesson.module.number is not None else ""
        facts.append(f"module: {number}{lesson.module.title}")
    if lesson.position is not None:
        facts.append(f"position: {lesson.position}")
    if lesson.minutes is not None:
        facts.append(f"{lesson.minutes} min")
    lines += [" · ".join(facts), ""]
    if lesson.key_idea:
        lines += _wrap(f"Key idea: {lesson.key_idea}") + [""]
    for block in lesson.intro:
        lines += _block(block) + [""]
    for section in lesson.sections:
        lines += [section.title, "-" * len(section.title)]
        for block in section.blocks:
            lines += _block(block) + [""]
    for position, check in enumerate(lesson.checks, start=1):
        lines += check_text(check, position) + [""]
    for position, question in enumerate(lesson.generated, start=len(lesson.checks) + 1):
        lines += generated_text(question, who or PREVIEW, position) + [""]
    if lesson.attribution:
        credit = lesson.attribution
        lines += ["Source and licence", "------------------"]
        for text in (credit.citation, credit.authorship):
            if text:
                lines += _wrap(text)
        if credit.licence:
            lines += _wrap(
                f"Licence: {credit.licence.name}" + (f" ({credit.licence.url})" if credit.licence.url else "")
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def check_text(check: Check, number: int = 1) -> list[str]:
    """A check as an instructor reads it: options in display order, the correct one marked,
    each wrong one with why it tempts."""
    lines = [f"Check {number}", "-------", *_wrap(check.stem.markdown())]
    for letter, option in zip(ascii_uppercase, check.displayed(), strict=False):
        mark = "*" if option.correct else " "
        lines += _wrap(option.text.markdown(), bullet=f" {mark} {letter}) ")
        if option.tempting:
            lines += _wrap(f"tempting because: {option.tempting.markdown()}", indent=" " * 7)
    return lines


def generated_text(question: GeneratedCheck, who: str, number: int) -> list[str]:
    """A generated check as drawn for ``who``: a multiple-choice one as any check, the others with
    their answer and tolerance."""
    title = f"Check {number}, generated ({question.kind}, {question.id}, drawn for {who!r})"
    try:
        variant = draw(question, who)
    except GenerationError as exc:
        return [title, "-" * len(title), *_wrap(f"cannot be drawn: {exc}")]
    if variant.check is not None:
        return [title, "-" * len(title), *check_text(variant.check, number)[2:]]
    lines = [title, "-" * len(title), *_wrap(variant.stem.markdown())]
    answer = f"{variant.answer:.6g}" if isinstance(variant.answer, float) else str(variant.answer)
    answer += f" {variant.units}" if variant.units else ""
    rule = f"within {variant.tolerance.absolute:g} + {variant.tolerance.relative:g} × |answer|"
    lines += _wrap(f"answer: {answer} ({rule})", indent=" " * 3)
    if variant.feedback:
        lines += _wrap(f"feedback: {variant.feedback.markdown()}", indent=" " * 3)
    return lines


def lessons_table(catalog: Catalog) -> Table:
    course = catalog.course()
    title = for_terminal(" · ".join(filter(None, [course.title, f"{plural(len(catalog.lessons), 'lesson')}"])))
    table = Table(title=title, title_justify="left")
    for column in ("slug", "title", "format", "module", "sections", "checks", "questions", "file"):
        table.add_column(
            column, overflow="fold", justify="right" if column in {"sections", "checks", "questions"} else "left"
        )
    for lesson in sorted(catalog.lessons, key=lambda lesson: lesson.source):
        module = lesson.module
        table.add_row(
            for_terminal(lesson.slug),
            for_terminal(lesson.title),
            lesson.format,
            str(module.number) if module and module.number is not None else "",
            str(len(lesson.sections)),
            str(len(lesson.checks)),
            str(len(lesson.open_questions)),
            for_terminal(Path(lesson.source).name),
        )
    return table


def _block(block: Block) -> list[str]:
    match block:
        case Heading():
            return [block.text, "~" * len(block.text)]
        case Paragraph():
            return _wrap(block.runs.markdown())
        case CodeBlock():
            return ["    " + line for line in block.text.splitlines()]
        case MathBlock():
            return [f"    \\[ {block.latex} \\]"]
        case ListBlock():
            lines = []
            for number, item in enumerate(block.items, start=1):
                lines += _wrap(item.markdown(), bullet=f"{number}. " if block.ordered else "- ")
            return lines
    return []


def _wrap(text: str, bullet: str = "", indent: str = "") -> list[str]:
    first = indent + bullet
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=first,
        subsequent_indent=" " * len(first),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first]
