"""A variant as the student reads it: Markdown, and a standalone HTML page whose math is MathML,
so it renders offline in any browser."""

from __future__ import annotations

import html

from latex2mathml.converter import convert

from untrusted.text import for_markdown

from ..exports.items import to_html
from ..loaders.markdown import parse_inline
from ..models import RichText
from .variants import ExamKey, Variant

STYLE = """body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;line-height:1.5;padding:0 1rem}
h1{font-size:1.4rem}h2{font-size:1.05rem;margin-top:1.6rem}ol.options{list-style:none;padding-left:0}
ol.options li{margin:.3rem 0}code{background:#f2f2f2;padding:0 .2rem}.open{border:1px solid #bbb;height:6rem}"""


def markdown(key: ExamKey, variant: Variant) -> str:
    student = variant.student
    lines = [f"# {key.title}", "", f"**{for_markdown(student.name)}** ({for_markdown(student.student_id)})", "",
             "Write the letter of one answer per question on the answer sheet.", ""]  # fmt: skip
    for question in variant.questions:
        bank = key.questions[question.question]
        lines += [f"## {question.position}. {bank.stem}", ""]
        if question.kind == "open":
            lines += ["*Answer in your own words; graded by hand.*", ""]
            continue
        texts = {choice.option: choice.text for choice in bank.options}
        lines += [f"- **{letter}.** {texts[option]}" for letter, option in question.letters.items()]
        lines.append("")
    return "\n".join(lines)


def page(key: ExamKey, variant: Variant) -> str:
    student = variant.student
    body = [f"<h1>{html.escape(key.title)}</h1>",
            f"<p><strong>{html.escape(student.name)}</strong> ({html.escape(student.student_id)})</p>",
            "<p>Write the letter of one answer per question on the answer sheet.</p>"]  # fmt: skip
    for question in variant.questions:
        bank = key.questions[question.question]
        body.append(f"<h2>{question.position}. {inline_html(parse_inline(bank.stem))}</h2>")
        if question.kind == "open":
            body.append('<p><em>Answer in your own words; graded by hand.</em></p><div class="open"></div>')
            continue
        texts = {choice.option: choice.text for choice in bank.options}
        items = "".join(
            f"<li><strong>{letter}.</strong> {inline_html(parse_inline(texts[option]))}</li>"
            for letter, option in question.letters.items()
        )
        body.append(f'<ol class="options">{items}</ol>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(key.title)}: {html.escape(student.student_id)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def inline_html(text: RichText) -> str:
    """Inline HTML with math as MathML, which browsers render without MathJax."""
    return to_html(text, math=convert)
