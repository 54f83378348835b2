"""Moodle XML: a category per lesson, and one below it per pool of a generated question's variants
(a quiz's "random question from this category" gives each student one), then ``multichoice`` questions (single answer, fractions 100
and 0, answers not shuffled, per-answer feedback, the key idea as general feedback). Text is HTML
in CDATA; math stays as \\( \\) for MathJax."""

from __future__ import annotations

from lxml import etree

from ..inline import to_html
from .items import ExportItem
from .package import Package

CATEGORY_ROOT = "$course$/Module checks"
POOL_PREFIX = "Pool "  # a pool's category: "Pool <pool id>", below its lesson's


def export(items: list[ExportItem], title: str) -> Package:
    quiz = etree.Element("quiz")
    current = None
    for item in items:
        if (item.lesson_slug, item.check.pool) != current:
            current = (item.lesson_slug, item.check.pool)
            category = etree.SubElement(quiz, "question", type="category")
            etree.SubElement(etree.SubElement(category, "category"), "text").text = category_path(item)
        quiz.append(question(item))
    return Package(
        files=[("questions.xml", etree.tostring(quiz, xml_declaration=True, encoding="UTF-8", pretty_print=True))],
        container="file",
    )


def category_path(item: ExportItem) -> str:
    """The lesson's category, and its pool's below it."""
    path = f"{CATEGORY_ROOT}/{item.lesson_title}"
    return f"{path}/{POOL_PREFIX}{item.check.pool}" if item.check.pool else path


def pool_of_category(path: str) -> str | None:
    """The pool a category path names (its last level), or None for a lesson's own category."""
    last = path.rsplit("/", 1)[-1]
    return last.removeprefix(POOL_PREFIX) if last.startswith(POOL_PREFIX) else None


def question(item: ExportItem) -> etree._Element:
    node = etree.Element("question", type="multichoice")
    _text(etree.SubElement(node, "name"), f"{item.lesson_title} ({item.number})")
    _html(etree.SubElement(node, "questiontext", format="html"), to_html(item.check.stem))
    _html(etree.SubElement(node, "generalfeedback", format="html"), to_html(item.key_idea) if item.key_idea else "")
    for tag, value in (
        ("defaultgrade", "1.0000000"),
        ("penalty", "0.0000000"),
        ("hidden", "0"),
        ("idnumber", item.identifier),
        ("single", "true"),
        ("shuffleanswers", "false"),
        ("answernumbering", "abc"),
    ):
        etree.SubElement(node, tag).text = value
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        _html(etree.SubElement(node, tag, format="html"), "")
    for option in item.options:
        answer = etree.SubElement(node, "answer", fraction="100" if option.correct else "0", format="html")
        _html(answer, to_html(option.text))
        _html(etree.SubElement(answer, "feedback", format="html"), to_html(item.feedback(option)))
    return node


def _text(parent: etree._Element, value: str) -> None:
    etree.SubElement(parent, "text").text = value


def _html(parent: etree._Element, html: str) -> None:
    etree.SubElement(parent, "text").text = etree.CDATA(html) if html else ""
