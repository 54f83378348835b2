"""Markdown lessons and module pages, parsed with markdown-it-py.

Besides CommonMark, this reads the shape that course pages take when a platform exports them as
text: headings are lines ending in a pilcrow (``Recurrence and its ceiling¶``), and a list is a
run of lines with no blank line between them, each a whole sentence. Math is LaTeX between
``\\( \\)`` (inline) and ``\\[ \\]`` (display).
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.texmath import texmath_plugin

from ..models import (
    CodeBlock,
    InlineRun,
    ListBlock,
    MathBlock,
    Paragraph,
    RichText,
)
from .outline import Located, heading, lesson_from_blocks
from .source import LoadedLesson, SourceText

PILCROW_HEADING = re.compile(r"^(?P<text>\S.*?)\s*¶\s*$")
SUBSECTION_TITLE = re.compile(r"^Part\s+\d+\b")
FENCE = re.compile(r"^\s*(```|~~~)")
# A line that stands as a list item in a flattened list: a whole sentence, capitalised or numbered.
LIST_LINE = re.compile(r"^[\"'\u201c(]?[A-Z0-9\\].*[.?!:;][\"'\u201d)]?$")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").use(texmath_plugin, delimiters="brackets")


def load(source: SourceText) -> LoadedLesson:
    return lesson_from_blocks(source, parse_blocks(source.text), "markdown")


def parse_blocks(text: str) -> list[Located]:
    """The blocks of a Markdown text, each with its 1-based line number."""
    lines = _mark_pilcrow_headings(text)
    tokens = _parser().parse("\n".join(lines))
    blocks: list[Located] = []
    last_line = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        line = token.map[0] + 1 if token.map else _next_text_line(lines, last_line)
        if token.map:
            last_line = token.map[1]
        if token.type == "heading_open":
            text = "".join(f"\\({run.text}\\)" if run.math else run.text for run in inline_runs(tokens[i + 1]))
            blocks.append(Located(heading(text.strip(), int(token.tag[1])), line))
            i += 3
            continue
        if token.type in {"bullet_list_open", "ordered_list_open"}:
            end = _matching_close(tokens, i)
            items = [inline_runs(t) for t in tokens[i:end] if t.type == "inline"]
            items = [item for item in items if item.plain().strip()]
            if items:
                blocks.append(Located(ListBlock(ordered=token.type.startswith("ordered"), items=items), line))
            i = end + 1
            continue
        if token.type == "paragraph_open":
            blocks.append(Located(_paragraph_or_list(tokens[i + 1]), line))
            i += 3
            continue
        if token.type in {"fence", "code_block"}:
            language = token.info.strip().split()[0] if token.info.strip() else None
            blocks.append(Located(CodeBlock(language=language, text=token.content.rstrip("\n")), line))
        elif token.type.startswith("math_block"):
            last_line = line
            blocks.append(Located(MathBlock(latex=token.content.strip()), line))
        elif token.type == "html_block" and token.content.strip():
            blocks.append(Located(Paragraph(runs=RichText.of(token.content.strip())), line))
        i += 1
    return blocks


def parse_inline(text: str) -> RichText:
    """Inline Markdown (``code``, ``**bold**``, ``*italic*``, ``\\( math \\)``) to runs."""
    tokens = _parser().parseInline(text)
    return inline_runs(tokens[0]) if tokens else RichText([])


def inline_runs(token: Token, soft_break: str = " ") -> RichText:
    runs: list[InlineRun] = []
    bold = italic = 0

    def add(text: str, **style: bool) -> None:
        run = InlineRun(text=text, bold=bold > 0, italic=italic > 0, **style)
        if runs and not (run.code or run.math) and _same_style(runs[-1], run):
            runs[-1] = runs[-1].model_copy(update={"text": runs[-1].text + text})
        elif text:
            runs.append(run)

    for child in token.children or []:
        match child.type:
            case "text" | "html_inline":
                add(child.content)
            case "softbreak":
                add(soft_break)
            case "hardbreak":
                add("\n")
            case "code_inline":
                add(child.content, code=True)
            case "strong_open":
                bold += 1
            case "strong_close":
                bold -= 1
            case "em_open":
                italic += 1
            case "em_close":
                italic -= 1
            case "image":
                add(child.content)
            case kind if kind.startswith("math_inline") or kind.startswith("math_single"):
                add(child.content, math=True)
    return RichText(runs)


def _paragraph_or_list(inline: Token) -> Paragraph | ListBlock:
    """A paragraph whose every line is a whole sentence is a list flattened to lines."""
    lines = inline.content.split("\n")
    if len(lines) > 1 and all(LIST_LINE.match(line.strip()) for line in lines):
        items = _split_runs(inline_runs(inline, soft_break="\n"))
        return ListBlock(items=[item for item in items if item.plain().strip()])
    return Paragraph(runs=inline_runs(inline))


def _split_runs(text: RichText) -> list[RichText]:
    items: list[list[InlineRun]] = [[]]
    for run in text:
        if run.code or run.math or "\n" not in run.text:
            items[-1].append(run)
            continue
        parts = run.text.split("\n")
        for n, part in enumerate(parts):
            if n:
                items.append([])
            if part:
                items[-1].append(run.model_copy(update={"text": part}))
    return [RichText(_strip_edges(item)) for item in items]


def _strip_edges(runs: list[InlineRun]) -> list[InlineRun]:
    if runs and not runs[0].code:
        runs[0] = runs[0].model_copy(update={"text": runs[0].text.lstrip()})
    if runs and not runs[-1].code:
        runs[-1] = runs[-1].model_copy(update={"text": runs[-1].text.rstrip()})
    return [run for run in runs if run.text]


def _mark_pilcrow_headings(text: str) -> list[str]:
    """Rewrite ``Title¶`` lines as ATX headings, keeping line numbers: the first is the page
    title (level 1), "Part N." headings are subsections (level 3), the rest are sections."""
    lines = text.split("\n")
    in_fence = False
    seen_title = any(line.startswith("# ") for line in lines)
    for n, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else PILCROW_HEADING.match(line)
        if match is None:
            continue
        title = match.group("text")
        if not seen_title:
            level, seen_title = 1, True
        else:
            level = 3 if SUBSECTION_TITLE.match(title) else 2
        lines[n] = "#" * level + " " + title
    return lines


def _matching_close(tokens: list[Token], start: int) -> int:
    depth = 0
    for index in range(start, len(tokens)):
        depth += tokens[index].nesting
        if depth == 0:
            return index
    return len(tokens) - 1


def _next_text_line(lines: list[str], after: int) -> int:
    for index in range(after, len(lines)):
        if lines[index].strip():
            return index + 1
    return after + 1


def _same_style(a: InlineRun, b: InlineRun) -> bool:
    return (a.bold, a.italic, a.code, a.math) == (b.bold, b.italic, b.code, b.math)
