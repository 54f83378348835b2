"""A variant as the student reads it: Markdown, and a standalone HTML page whose math is MathML,
so it renders offline in any browser."""

from __future__ import annotations

import html

from latex2mathml.converter import convert

from untrusted.text import for_markdown

from ..inline import to_html
from ..loaders.markdown import parse_inline
from ..models import RichText
from ..wording import plural
from .variants import ExamKey, Variant

STYLE = """body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;line-height:1.5;padding:0 1rem}
h1{font-size:1.4rem}h2{font-size:1.05rem;margin-top:1.6rem}ol.options{list-style:none;padding-left:0}
ol.options li{margin:.3rem 0}code{background:#f2f2f2;padding:0 .2rem}.open{border:1px solid #bbb;height:6rem}
table.sheet{border-collapse:collapse;margin-top:1rem}table.sheet td,table.sheet th{padding:.45rem .6rem;text-align:left}
table.sheet tr{border-bottom:1px solid #ddd}.box{display:inline-block;border:1.5px solid #333;width:1.6rem;height:1.6rem;
margin-right:.5rem;text-align:center;line-height:1.6rem;font-size:.8rem;color:#555}.written{border:1px solid #bbb;height:9rem;width:32rem}
.value{display:inline-block;border:2px solid #111;width:14rem;height:2.4rem;margin-right:.5rem;vertical-align:middle}
.units{font-weight:bold;margin-right:.5rem}.expected{color:#333;font-size:.9rem}
@media print{body{margin:0;max-width:none}section.question,table.sheet tr{break-inside:avoid;page-break-inside:avoid}
h1{margin-top:0}}"""
INSTRUCTIONS = (
    "Mark one letter per question on your answer sheet; answer the questions graded by hand in their box on the sheet."
)
WRITE_VALUE = "Write your answer in this question's box on the answer sheet"
INSTRUCTIONS_WRITTEN = (
    "Mark one letter per multiple-choice question on your answer sheet; write the other answers in their"
    " questions' boxes on the sheet."
)


def _writes(variant: Variant) -> bool:
    """Whether the variant has a question whose answer is written in a box (a number or a short answer)."""
    return any(question.kind == "value" for question in variant.questions)


def instructions(variant: Variant) -> str:
    return INSTRUCTIONS_WRITTEN if _writes(variant) else INSTRUCTIONS


def markdown(key: ExamKey, variant: Variant) -> str:
    student = variant.student
    lines = [
        f"# {key.title}",
        "",
        f"**{for_markdown(student.name)}** ({for_markdown(student.student_id)})",
        "",
        instructions(variant),
        "",
    ]
    for question in variant.questions:
        bank = key.questions[question.question]
        part = zone_heading(key, variant, question.position)
        lines += [f"**{for_markdown(part)}**", ""] if part else []
        lines += [f"## {question.position}. {bank.stem}", ""]
        if question.kind == "open":
            lines += ["*Answer in your own words, in this question's box on the answer sheet; graded by hand.*", ""]
            continue
        if bank.written is not None:
            wanted = bank.written.expected()
            lines += [f"*{WRITE_VALUE}{f' ({for_markdown(wanted)})' if wanted else ''}.*", ""]
            continue
        texts = {choice.option: choice.text for choice in bank.options}
        lines += [f"- **{letter}.** {texts[option]}" for letter, option in question.letters.items()]
        lines.append("")
    return "\n".join(lines)


def page(key: ExamKey, variant: Variant) -> str:
    student = variant.student
    body = [
        f"<h1>{html.escape(key.title)}</h1>",
        f"<p><strong>{html.escape(student.name)}</strong> ({html.escape(student.student_id)})</p>",
        f"<p>{instructions(variant)}</p>",
    ]
    for question in variant.questions:
        bank = key.questions[question.question]
        part = zone_heading(key, variant, question.position)
        if part:
            body.append(f'<p class="zone"><strong>{html.escape(part)}</strong></p>')
        parts = [f"<h2>{question.position}. {inline_html(parse_inline(bank.stem))}</h2>"]
        if question.kind == "open":
            parts.append(
                "<p><em>Answer in your own words, in this question's box on the answer sheet; graded by hand.</em></p>"
            )
        elif bank.written is not None:
            wanted = bank.written.expected()
            parts.append(f"<p><em>{WRITE_VALUE}{f' ({html.escape(wanted)})' if wanted else ''}.</em></p>")
        else:
            texts = {choice.option: choice.text for choice in bank.options}
            items = "".join(
                f"<li><strong>{letter}.</strong> {inline_html(parse_inline(texts[option]))}</li>"
                for letter, option in question.letters.items()
            )
            parts.append(f'<ol class="options">{items}</ol>')
        body.append('<section class="question">' + "".join(parts) + "</section>")
    return _document(f"{key.title}: {student.student_id}", body)


def zone_heading(key: ExamKey, variant: Variant, position: int) -> str | None:
    """Before a zone's first question on the student's exam: the part's title and what each of its
    questions is worth (``Part 1: Attention (2 points each)``); None elsewhere."""
    question = variant.questions[position - 1]
    before = variant.questions[position - 2].zone if position > 1 else None
    if question.zone is None or question.zone == before or not key.zones:
        return None
    zone = key.zones[question.zone - 1]
    return f"Part {question.zone}: {zone.title} ({plural(zone.points, 'point')} each)"


def sheet(key: ExamKey, variant: Variant) -> str:
    """The student's printable answer sheet: a row per question with a box per letter, in the order
    and with the letters of this student's variant, and a box for each question graded by hand."""
    student = variant.student
    rows = []
    for question in variant.questions:
        written = key.questions[question.question].written
        if question.kind == "open":
            answer = '<div class="written"></div>'
        elif written is not None:
            answer = '<span class="value"></span>'
            answer += f'<span class="units">{html.escape(written.units)}</span>' if written.units else ""
            answer += f'<span class="expected">{html.escape(written.precision)}</span>' if written.precision else ""
        else:
            answer = "".join(f'<span class="box">{letter}</span>' for letter in question.letters)
        rows.append(f"<tr><th>{question.position}</th><td>{answer}</td></tr>")
    body = [
        f"<h1>{html.escape(key.title)}: answer sheet</h1>",
        f"<p><strong>{html.escape(student.name)}</strong> ({html.escape(student.student_id)})</p>",
        "<p>Fill in one box per question, the letter of your answer as printed on your own exam paper. "
        + (
            "Where a question has one wide box, write your answer in it: a number as digits with a decimal "
            "point (0.245), or the short answer the question asks for. "
            if _writes(variant)
            else ""
        )
        + "Write the answers graded by hand in their boxes.</p>",
        '<table class="sheet"><tr><th>question</th><th>answer</th></tr>' + "".join(rows) + "</table>",
    ]
    return _document(f"{key.title}: answer sheet for {student.student_id}", body)


def _document(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def inline_html(text: RichText) -> str:
    """Inline HTML with math as MathML, which browsers render without MathJax."""
    return to_html(text, math=convert)
