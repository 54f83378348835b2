"""Moodle GIFT: a category per lesson (and per pool of a generated question's variants, below it), one question per check, ``::id::[html]stem{ ~wrong#why =right#confirmation ####key idea }``;
a drawn numeric variant as ``{#=answer:margin ####feedback}``, a short answer as ``{=text =text ####feedback}``.
Every character GIFT gives a meaning to (``~ = # { } :`` and backslash) is escaped, so stems and
options holding code and LaTeX survive."""

from __future__ import annotations

from ..inline import to_html
from .items import ExportItem
from .moodle import POOL_PREFIX
from .package import Package

SPECIAL = "\\~=#{}:"


def escape(text: str) -> str:
    return "".join(f"\\{char}" if char in SPECIAL else char for char in text).replace("\n", "\\n")


def category(title: str) -> str:
    """A title as one level of Moodle's category path: Moodle reads the line as it is (no GIFT
    escapes) and splits it at every single ``/``, so a slash in the title is doubled."""
    return " ".join(title.split()).replace("/", "//")


def export(items: list[ExportItem], title: str) -> Package:
    blocks = [f"// {title}", "// Exported by the course command: text is HTML, math is LaTeX for MathJax.", ""]
    current = None
    for item in items:
        if (item.lesson_slug, item.pool) != current:
            current = (item.lesson_slug, item.pool)
            pool = f"/{POOL_PREFIX}{item.pool}" if item.pool else ""  # a generated question's variants
            blocks += [f"$CATEGORY: $course$/Module checks/{category(item.lesson_title)}{pool}", ""]
        blocks.append(f"// [id:{item.identifier}]")  # the question's idnumber, as Moodle's importer reads it
        blocks.append(question(item))
        blocks.append("")
    return Package(files=[("questions.gift", "\n".join(blocks).encode("utf-8"))], container="file")


def question(item: ExportItem) -> str:
    lines = [f"::{escape(item.identifier)}::[html]{escape(to_html(item.stem))} {{"]
    if item.entry is not None:
        entry = item.entry
        if entry.kind == "numeric":
            lines[0] += "#"
            lines.append(f"\t={escape(repr(entry.answer))}:{escape(repr(entry.margin))}")
        else:
            lines += [f"\t={escape(text)}" for text in entry.accepted]
        if entry.feedback:
            lines.append(f"\t####{escape(to_html(entry.feedback))}")
        lines.append("}")
        return "\n".join(lines)
    for option in item.options:
        mark = "=" if option.correct else "~"
        lines.append(f"\t{mark}{escape(to_html(option.text))}#{escape(to_html(item.feedback(option)))}")
    if item.key_idea:
        lines.append(f"\t####{escape(to_html(item.key_idea))}")
    lines.append("}")
    return "\n".join(lines)
