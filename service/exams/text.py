"""An exam question's text as the student saw it: the bank's inline Markdown (``\\( math \\)``,
code, bold) as HTML with its math as MathML, the one rendering the online exam's pages, its printed
sheets and the staff's marking pages share; and, where HTML cannot go (a page's title), the text a
reader sees, shortened."""

from __future__ import annotations

from functools import lru_cache

from course.exams.pages import inline_html
from course.loaders.markdown import parse_inline

TITLE_LENGTH = 80  # a question's text in a page's title, at most this many characters


@lru_cache(maxsize=4096)
def question_html(markdown: str) -> str:
    """A stem's or an option's inline Markdown as the student's page shows it (math as MathML),
    once per text: every student's page shows the same few texts."""
    return inline_html(parse_inline(markdown))


def question_title(markdown: str, most: int = TITLE_LENGTH) -> str:
    """The question's text as plain words (its math as the TeX inside it), cut at a word before
    ``most`` characters with an ellipsis."""
    text = " ".join(parse_inline(markdown).plain().split())
    if len(text) <= most:
        return text
    return text[: most - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
