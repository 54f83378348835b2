"""QTI 1.2 (as Canvas exports and imports it) back into checks: single-answer
``multiple_choice_question`` items, their answers in order, the answer that sets SCORE to 100,
per-answer and general feedback; ``numerical_question`` and ``short_answer_question`` items (their
answer, the margin between it and its bounds, the general feedback as the question's) as generated
questions that draw nothing; an item in a question group (a section that selects) keeps the group as
its pool. Text is HTML, as written."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from lxml import etree

from ..errors import CheckImportError
from ..inline import runs_from_html
from ..models import Check, GeneratedCheck, Option
from .base import ImportedBank, fixed_question, identifier_or_none, zip_members

PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


def read(data: bytes, source: str) -> ImportedBank:
    members = zip_members(data) if data[:2] == b"PK" else {"assessment.xml": data}
    roots = [etree.fromstring(content, PARSER) for name, content in sorted(members.items()) if name.endswith(".xml")]
    assessments = [root for root in roots if _local(root) == "questestinterop"]
    if not assessments:
        raise CheckImportError("no QTI 1.2 assessment (questestinterop) in the package")
    checks, key_idea, titles, generated = [], None, [], []
    for root in assessments:
        for item in root.iter():
            if _local(item) != "item":
                continue
            parent = item.getparent()
            pool = identifier_or_none(parent.get("ident")) if parent is not None and _picks(parent) else None
            typed = _typed(item, pool)
            if typed is not None:
                generated.append(typed)
                titles.append(item.get("title"))
                continue
            check, general = _item(item)
            if check is not None and pool:
                check = check.model_copy(update={"pool": pool})
            if check is not None:
                checks.append(check)
                key_idea = key_idea or general
                titles.append(item.get("title"))
    lessons = {re.sub(r"\s*\(\d+\)$", "", title) for title in titles if title}
    title = lessons.pop() if len(lessons) == 1 else _assessment_title(assessments[0])
    return ImportedBank(title=title, key_idea=key_idea, checks=checks, generated=generated)


def _typed(item: etree._Element, pool: str | None) -> GeneratedCheck | None:
    """A numerical or short-answer item, or None for any other."""
    ident = item.get("ident", "?")
    fields = {_text(field, "fieldlabel"): _text(field, "fieldentry") for field in _all(item, "qtimetadatafield")}
    kind = fields.get("question_type")
    if kind not in ("numerical_question", "short_answer_question"):
        return None
    presentation = _first(item, "presentation")
    right = next(
        (
            c
            for c in _all(item, "respcondition")
            if any(_local(s) == "setvar" and (s.text or "").strip() in {"100", "100.0"} for s in c)
        ),
        None,
    )
    if presentation is None or right is None:
        raise CheckImportError(f"item {ident}: no question or no answer that scores 100")
    feedback = {node.get("ident"): _mattext(node) for node in _all(item, "itemfeedback")}
    general = runs_from_html(feedback["general_fb"]) if feedback.get("general_fb") else None
    stem = runs_from_html(_mattext(presentation))
    identifier = identifier_or_none(ident) or "question"
    answer = _text(right, "varequal")
    if kind == "short_answer_question":
        return fixed_question(identifier, stem, answer, 0.0, general, pool)
    try:
        exact, high = Decimal(answer), Decimal(_text(right, "varlte") or answer)
        return fixed_question(identifier, stem, float(exact), float(high - exact), general, pool)
    except InvalidOperation:
        raise CheckImportError(f"item {ident}: {answer!r} is not a number") from None


def _item(item: etree._Element) -> tuple[Check | None, str | None]:
    ident = item.get("ident", "?")
    fields = {_text(field, "fieldlabel"): _text(field, "fieldentry") for field in _all(item, "qtimetadatafield")}
    if fields.get("question_type", "multiple_choice_question") != "multiple_choice_question":
        return None, None
    presentation = _first(item, "presentation")
    if presentation is None:
        raise CheckImportError(f"item {ident}: no presentation")
    stem = _mattext(presentation)
    labels = [label for label in _all(presentation, "response_label")]
    correct = {
        _text(condition, "varequal")
        for condition in _all(item, "respcondition")
        if any(_local(s) == "setvar" and (s.text or "").strip() in {"100", "100.0"} for s in condition)
    }
    feedback = {node.get("ident"): _mattext(node) for node in _all(item, "itemfeedback")}
    options = []
    for label in labels:
        answer = label.get("ident")
        is_correct = answer in correct
        hint = feedback.get(f"{answer}_fb")
        options.append(
            Option(
                text=runs_from_html(_mattext(label)),
                correct=is_correct,
                tempting=runs_from_html(hint) if hint and not is_correct else None,
            )
        )
    if sum(option.correct for option in options) != 1:
        raise CheckImportError(f"item {ident}: needs exactly one answer that scores 100")
    general = feedback.get("general_fb")
    check = Check(stem=runs_from_html(stem), options=options, id=identifier_or_none(ident))
    return check, (runs_from_html(general).markdown() if general else None)


def _picks(section: etree._Element) -> bool:
    """Whether a section is a question group (it selects some of its items for each student)."""
    return any(
        _local(child) == "selection_ordering" and any(_local(node) == "selection_number" for node in child.iter())
        for child in section
    )


def _assessment_title(root: etree._Element) -> str | None:
    assessment = _first(root, "assessment")
    return assessment.get("title") if assessment is not None else None


def _mattext(element: etree._Element) -> str:
    node = _first(element, "mattext")
    return "" if node is None else (node.text or "")


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _all(element: etree._Element, name: str) -> list[etree._Element]:
    return [node for node in element.iter() if _local(node) == name]


def _first(element: etree._Element, name: str) -> etree._Element | None:
    return next(iter(_all(element, name)), None)


def _text(element: etree._Element, name: str) -> str:
    node = _first(element, name)
    return "" if node is None else (node.text or "").strip()
