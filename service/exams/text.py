"""An exam question's text as the student saw it: the bank's inline Markdown (``\\( math \\)``,
code, bold) as HTML with its math as MathML, the one rendering the online exam's pages, its printed
sheets and the staff's marking pages share; and, where HTML cannot go (a page's title), the text a
reader sees, shortened."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from django.utils.html import format_html_join
from django.utils.safestring import SafeString, mark_safe

from course.exams.pages import inline_html
from course.loaders.markdown import parse_inline

TITLE_LENGTH = 80  # a question's text in a page's title, at most this many characters


@lru_cache(maxsize=4096)
def question_html(markdown: str) -> SafeString:
    """A stem's or an option's inline Markdown as the student's page shows it (math as MathML),
    once per text: every student's page shows the same few texts."""
    return mark_safe(inline_html(parse_inline(markdown)))  # noqa: S308  (inline_html escapes the text; its math is MathML)


def choices_html(options: Iterable[tuple[str, str]], chosen: str) -> SafeString:
    """A check question's options as the taking page's radio buttons, in the variant's order with its
    letters (``options``: letter and question_html), the one saved checked. Built here, not in the
    template's loop: that loop was most of the page's rendering, and a class's start renders it 2,000
    times in seconds."""
    return format_html_join(
        "\n",
        '<p><label><input type="radio" name="value" value="{}"{}> <strong>{}.</strong> {}</label></p>',
        ((letter, " checked" if letter == chosen else "", letter, text) for letter, text in options),
    )


def question_title(markdown: str, most: int = TITLE_LENGTH) -> str:
    """The question's text as plain words (its math as the TeX inside it), cut at a word before
    ``most`` characters with an ellipsis."""
    text = " ".join(parse_inline(markdown).plain().split())
    if len(text) <= most:
        return text
    return text[: most - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
