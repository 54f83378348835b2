"""Inline text (a stem, an option, a feedback: ``RichText``) written out and read back: HTML with
math for MathJax, XHTML with MathML for QTI 2.1, and HTML or XML fragments back into runs. Exports,
imports and exam pages all convert through here."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache

from lxml import etree

from .models import InlineRun, RichText

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
TEX_ENCODING = "application/x-tex"
MATH_SPAN = re.compile(r"\\\((.+?)\\\)", re.DOTALL)


def mathjax(tex: str) -> str:
    return f"\\({html.escape(tex, quote=False)}\\)"


def to_html(text: RichText, math: Callable[[str], str] = mathjax) -> str:
    """Inline HTML: code in <code>, bold in <strong>, italic in <em>; math written by ``math``,
    by default as \\( \\) for MathJax."""
    parts = []
    for run in text:
        if run.math:
            parts.append(math(run.text))
            continue
        piece = html.escape(run.text, quote=False)
        if run.code:
            piece = f"<code>{piece}</code>"
        if run.italic:
            piece = f"<em>{piece}</em>"
        if run.bold:
            piece = f"<strong>{piece}</strong>"
        parts.append(piece)
    return "".join(parts)


def append_runs(parent: etree._Element, text: RichText, namespace: str, mathml: bool = False) -> None:
    """Append inline text to an lxml element in ``namespace`` (QTI's XHTML subset); math becomes
    MathML (with its LaTeX kept as an annotation) when ``mathml``, else \\( \\) text."""
    for run in text:
        if run.math and mathml:
            parent.append(_mathml(run.text))
            continue
        content = f"\\({run.text}\\)" if run.math else run.text
        target = parent
        for flag, tag in ((run.bold, "strong"), (run.italic, "em"), (run.code, "code")):
            if flag and not run.math:
                target = etree.SubElement(target, f"{{{namespace}}}{tag}")
        if target is parent:
            _append_text(parent, content)
        else:
            target.text = content  # text after it becomes the tail of the styled element


def runs_from_html(fragment: str) -> RichText:
    """Inline HTML (as the exports write it, or as a platform sends it) back to runs."""
    root = etree.fromstring(f"<root>{fragment}</root>", etree.XMLParser(recover=True, resolve_entities=False))
    if root is None:
        return RichText.of(html.unescape(re.sub(r"<[^>]+>", "", fragment)))
    return runs_from_element(root)


def runs_from_element(element: etree._Element) -> RichText:
    runs: list[InlineRun] = []
    _walk(element, runs, bold=False, italic=False, code=False)
    return RichText(_merge(runs))


def _walk(element, runs, bold, italic, code) -> None:
    for child_text, node in _children(element):
        if child_text is not None:
            _text_runs(child_text, runs, bold, italic, code)
            continue
        tag = etree.QName(node).localname if isinstance(node.tag, str) else ""
        if tag == "math":
            annotation = node.find(f".//{{{MATHML_NS}}}annotation")
            tex = annotation.text if annotation is not None and annotation.text else "".join(node.itertext())
            runs.append(InlineRun(text=tex.strip(), math=True))
        elif tag in {"strong", "b"}:
            _walk(node, runs, True, italic, code)
        elif tag in {"em", "i"}:
            _walk(node, runs, bold, True, code)
        elif tag in {"code", "tt", "kbd", "samp"}:
            _walk(node, runs, bold, italic, True)
        elif tag == "br":
            runs.append(InlineRun(text="\n", bold=bold, italic=italic))
        else:
            _walk(node, runs, bold, italic, code)


def _children(element):
    if element.text:
        yield element.text, None
    for child in element:
        yield None, child
        if child.tail:
            yield child.tail, None


def runs_from_text(text: str) -> RichText:
    """Plain text whose ``\\( \\)`` spans are math (GIFT without [html], say)."""
    runs: list[InlineRun] = []
    _text_runs(text, runs, False, False, False)
    return RichText(_merge(runs))


def _text_runs(text: str, runs: list[InlineRun], bold: bool, italic: bool, code: bool) -> None:
    if code:
        runs.append(InlineRun(text=text, bold=bold, italic=italic, code=True))
        return
    position = 0
    for match in MATH_SPAN.finditer(text):
        if match.start() > position:
            runs.append(InlineRun(text=text[position : match.start()], bold=bold, italic=italic))
        runs.append(InlineRun(text=match.group(1), math=True))
        position = match.end()
    if position < len(text):
        runs.append(InlineRun(text=text[position:], bold=bold, italic=italic))


def _merge(runs: list[InlineRun]) -> list[InlineRun]:
    merged: list[InlineRun] = []
    for run in runs:
        if not run.text:
            continue
        if (
            merged
            and not (run.math or merged[-1].math)
            and (merged[-1].bold, merged[-1].italic, merged[-1].code) == (run.bold, run.italic, run.code)
        ):
            merged[-1] = merged[-1].model_copy(update={"text": merged[-1].text + run.text})
        else:
            merged.append(run)
    return merged


@lru_cache(maxsize=4096)
def _mathml_source(tex: str) -> bytes:
    from latex2mathml.converter import convert

    math = etree.fromstring(convert(tex).encode())
    semantics = etree.Element(f"{{{MATHML_NS}}}semantics", nsmap={None: MATHML_NS})
    row = etree.SubElement(semantics, f"{{{MATHML_NS}}}mrow")
    row.extend(list(math))
    annotation = etree.SubElement(semantics, f"{{{MATHML_NS}}}annotation", encoding=TEX_ENCODING)
    annotation.text = tex
    result = etree.Element(f"{{{MATHML_NS}}}math", nsmap={None: MATHML_NS})
    result.append(semantics)
    return etree.tostring(result)


def _mathml(tex: str) -> etree._Element:
    return etree.fromstring(_mathml_source(tex))


def _append_text(parent: etree._Element, text: str) -> None:
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
