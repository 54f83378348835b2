"""Moodle XML: a category per lesson, and one below it per pool of a generated question's variants
(a quiz's "random question from this category" gives each student one), then ``multichoice`` questions (single answer, fractions 100
and 0, answers not shuffled, per-answer feedback, the key idea as general feedback), ``numerical``
and ``shortanswer`` questions (a drawn variant: its answer, the margin its tolerance gives, its
feedback as general feedback) and ``calculated`` questions (a generated question whose formula
Moodle computes, ``course.exports.calculated``). Text is HTML in CDATA; math stays as \\( \\) for
MathJax."""

from __future__ import annotations

from lxml import etree

from ..inline import to_html
from . import calculated
from .items import ExportItem
from .package import Package

CATEGORY_ROOT = "$course$/Module checks"
POOL_PREFIX = "Pool "  # a pool's category: "Pool <pool id>", below its lesson's


def export(items: list[ExportItem], title: str) -> Package:
    quiz = etree.Element("quiz")
    current = None
    for item in items:
        if (item.lesson_slug, item.pool) != current:
            current = (item.lesson_slug, item.pool)
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
    return f"{path}/{POOL_PREFIX}{item.pool}" if item.pool else path


def pool_of_category(path: str) -> str | None:
    """The pool a category path names (its last level), or None for a lesson's own category."""
    last = path.rsplit("/", 1)[-1]
    return last.removeprefix(POOL_PREFIX) if last.startswith(POOL_PREFIX) else None


def question(item: ExportItem) -> etree._Element:
    if item.entry is not None:
        return _entry(item)
    if item.formula is not None:
        return _calculated(item)
    node = _head(item, "multichoice", to_html(item.choice.stem), to_html(item.key_idea) if item.key_idea else "")
    for tag, value in (
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


def _head(item: ExportItem, kind: str, text: str, general: str) -> etree._Element:
    node = etree.Element("question", type=kind)
    _text(etree.SubElement(node, "name"), f"{item.lesson_title} ({item.number})")
    _html(etree.SubElement(node, "questiontext", format="html"), text)
    _html(etree.SubElement(node, "generalfeedback", format="html"), general)
    for tag, value in (
        ("defaultgrade", "1.0000000"),
        ("penalty", "0.0000000"),
        ("hidden", "0"),
        ("idnumber", item.identifier),
    ):
        etree.SubElement(node, tag).text = value
    return node


def _entry(item: ExportItem) -> etree._Element:
    """A drawn numeric variant as a ``numerical`` question (its answer within the margin), a short
    answer as a ``shortanswer`` one (each accepted text, case aside)."""
    entry = item.entry
    assert entry is not None
    general = to_html(entry.feedback) if entry.feedback else ""
    if entry.kind == "numeric":
        node = _head(item, "numerical", to_html(entry.stem), general)
        answer = etree.SubElement(node, "answer", fraction="100", format="moodle_auto_format")
        etree.SubElement(answer, "text").text = repr(entry.answer)
        _html(etree.SubElement(answer, "feedback", format="html"), "")
        etree.SubElement(answer, "tolerance").text = repr(entry.margin)
        for tag, value in (
            ("unitgradingtype", "0"),
            ("unitpenalty", "0.1000000"),
            ("showunits", "3"),
            ("unitsleft", "0"),
        ):
            etree.SubElement(node, tag).text = value
        return node
    node = _head(item, "shortanswer", to_html(entry.stem), general)
    etree.SubElement(node, "usecase").text = "0"
    for text in entry.accepted:
        answer = etree.SubElement(node, "answer", fraction="100", format="moodle_auto_format")
        etree.SubElement(answer, "text").text = text.replace("*", "\\*")  # a bare * is Moodle's wildcard
        _html(etree.SubElement(answer, "feedback", format="html"), "")
    return node


def _calculated(item: ExportItem) -> etree._Element:
    """A ``calculated`` question: the answer's formula over wildcards, and each wildcard's dataset
    with the drawn values, one item per variant (Moodle gives each attempt one item of all of them)."""
    question = item.formula
    assert question is not None
    general = calculated.moodle_text(question, question.feedback) if question.feedback else ""
    node = _head(item, "calculated", calculated.moodle_text(question, question.question), general)
    for tag, value in (("synchronize", "0"), ("single", "0"), ("answernumbering", "abc"), ("shuffleanswers", "0")):
        etree.SubElement(node, tag).text = value
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        _html(etree.SubElement(node, tag, format="html"), "")
    kind, tolerance = calculated.tolerance_of(question.tolerance)
    answer = etree.SubElement(node, "answer", fraction="100")
    etree.SubElement(answer, "text").text = calculated.answer_formula(question)
    etree.SubElement(answer, "tolerance").text = repr(tolerance)
    etree.SubElement(answer, "tolerancetype").text = calculated.TOLERANCE_TYPES[kind]
    etree.SubElement(answer, "correctanswerformat").text = "2" if kind == "relative" else "1"
    etree.SubElement(answer, "correctanswerlength").text = str(calculated.answer_decimals(kind, tolerance))
    _html(etree.SubElement(answer, "feedback", format="html"), "")
    for tag, value in (("unitgradingtype", "0"), ("unitpenalty", "0.1000000"), ("showunits", "3"), ("unitsleft", "0")):
        etree.SubElement(node, tag).text = value
    definitions = etree.SubElement(node, "dataset_definitions")
    for dataset in calculated.datasets(question, item.dataset):
        definition = etree.SubElement(definitions, "dataset_definition")
        _text(etree.SubElement(definition, "status"), "private")
        _text(etree.SubElement(definition, "name"), dataset["name"])
        etree.SubElement(definition, "type").text = "calculated"
        _text(etree.SubElement(definition, "distribution"), "uniform")
        _text(etree.SubElement(definition, "minimum"), repr(dataset["minimum"]))
        _text(etree.SubElement(definition, "maximum"), repr(dataset["maximum"]))
        _text(etree.SubElement(definition, "decimals"), str(dataset["decimals"]))
        etree.SubElement(definition, "itemcount").text = str(len(dataset["items"]))
        items = etree.SubElement(definition, "dataset_items")
        for number, value in enumerate(dataset["items"], start=1):
            entry = etree.SubElement(items, "dataset_item")
            etree.SubElement(entry, "number").text = str(number)
            etree.SubElement(entry, "value").text = repr(value)
        etree.SubElement(definition, "number_of_items").text = str(len(dataset["items"]))
    return node


def _text(parent: etree._Element, value: str) -> None:
    etree.SubElement(parent, "text").text = value


def _html(parent: etree._Element, html: str) -> None:
    etree.SubElement(parent, "text").text = etree.CDATA(html) if html else ""
