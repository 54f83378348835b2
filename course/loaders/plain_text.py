"""Plain-text lessons: no markup at all, so structure is read from the shape of each line.

- The first line is the title ("Lesson 4 — Sequences and transformers" also gives the position).
- A heading is a short line that starts with a capital and does not end like a sentence.
- A formula line (``attention(Q, K, V) = softmax(...)``) is code.
- Lines starting with ``-``, ``*``, ``•`` or ``1.`` are list items.
- Paragraphs are separated by blank lines; in a file with no blank lines, each line is one.
"""

from __future__ import annotations

import re

from ..models import CodeBlock, ListBlock, Paragraph, RichText
from .outline import Located, heading, lesson_from_blocks
from .source import LoadedLesson, SourceText

LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(?P<text>\S.*)$")
FORMULA = re.compile(r"^[\w\s(),'*/+\-^{}\[\].]+\s=\s.+$")
HEADING_MAX_WORDS = 10
HEADING_MAX_CHARS = 80
SENTENCE_END = tuple(".,;:!?\"'\u201d\u2019)")


def load(source: SourceText) -> LoadedLesson:
    return lesson_from_blocks(source, parse_blocks(source.text), "text")


def parse_blocks(text: str) -> list[Located]:
    chunks = list(_chunks(text.split("\n")))
    blocks: list[Located] = []
    for index, (line, lines) in enumerate(chunks):
        if index == 0:
            blocks.append(Located(heading(" ".join(lines), 1), line))
            continue
        if all(LIST_ITEM.match(item) for item in lines):
            items = [RichText.of(LIST_ITEM.match(item).group("text").strip()) for item in lines]  # type: ignore[union-attr]
            previous = blocks[-1].block if blocks else None
            if isinstance(previous, ListBlock) and blocks[-1].line + len(previous.items) == line:
                blocks[-1] = Located(previous.model_copy(update={"items": previous.items + items}), blocks[-1].line)
            else:
                blocks.append(Located(ListBlock(items=items), line))
            continue
        joined = " ".join(item.strip() for item in lines)
        if len(lines) == 1 and FORMULA.match(joined) and not joined.endswith("."):
            blocks.append(Located(CodeBlock(language="text", text=joined), line))
        elif len(lines) == 1 and _looks_like_heading(joined):
            blocks.append(Located(heading(joined, 2), line))
        else:
            blocks.append(Located(Paragraph(runs=RichText.of(joined)), line))
    return blocks


def _chunks(lines: list[str]):
    """(first line number, lines) for each paragraph: blank-line separated where the file uses
    blank lines between paragraphs, one line each where it does not."""
    has_blank_separators = any(not line.strip() for line in lines[1:-1])
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            if current:
                yield start, current
            current = []
            continue
        if not has_blank_separators or LIST_ITEM.match(line):
            if current:
                yield start, current
            yield number, [line]
            current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        yield start, current


def _looks_like_heading(line: str) -> bool:
    words = line.split()
    return (
        len(line) <= HEADING_MAX_CHARS
        and len(words) <= HEADING_MAX_WORDS
        and line[0].isupper()
        and not line.endswith(SENTENCE_END)
        and "=" not in line
    )
