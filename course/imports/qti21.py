"""QTI 2.1 back into checks: a content package (zip) or a single ``assessmentItem`` file; an item
with a ``textEntryInteraction`` (a float: its answer and its ``equal`` tolerance; a string: its
correct response) as a generated question that draws nothing. MathML comes back as the LaTeX kept in
its annotation."""

from __future__ import annotations

import posixpath
import re

from lxml import etree

from ..errors import CheckImportError
from ..inline import runs_from_element
from ..models import Check, GeneratedCheck, Option, RichText
from .base import ImportedBank, fixed_question, identifier_or_none, zip_members

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


def read(data: bytes, source: str) -> ImportedBank:
    """The items in the order the package's test lists them (file names would put check-10 before
    check-2); the lesson's title from the items' titles (``Title (n)``), else the test's."""
    if data[:2] == b"PK":
        members = zip_members(data)
        roots = {name: etree.fromstring(content, PARSER) for name, content in members.items() if name.endswith(".xml")}
        tests = [(name, root) for name, root in roots.items() if etree.QName(root).localname == "assessmentTest"]
        items = {name for name, root in roots.items() if etree.QName(root).localname == "assessmentItem"}
        order = _test_order(tests[0], items) if tests else []
        pools = _pools(tests[0]) if tests else {}
        names = order + sorted(items - set(order))
        documents = [members[name] for name in names]
        title = tests[0][1].get("title") if tests else None
    else:
        documents, title, names, pools = [data], None, [], {}
    checks, key_idea, item_titles, generated = [], None, [], []
    for name, document in zip([*names, None], documents, strict=False):
        check, general, item_title = item(document)
        if isinstance(check, GeneratedCheck):
            generated.append(check.model_copy(update={"pool": pools.get(name)}) if name in pools else check)
        else:
            checks.append(check.model_copy(update={"pool": pools.get(name)}) if name in pools else check)
        key_idea = key_idea or general
        item_titles.append(item_title)
    lesson_titles = {re.sub(r"\s*\(\d+\)$", "", t) for t in item_titles if t}
    if len(lesson_titles) == 1:
        title = lesson_titles.pop()
    return ImportedBank(title=title, key_idea=key_idea, checks=checks, generated=generated)


def _pools(test: tuple[str, etree._Element]) -> dict[str, str]:
    """The item files in a section that selects (a pool of variants), with the section's identifier."""
    folder = posixpath.dirname(test[0])
    found = {}
    for section in test[1].iter(f"{{{QTI}}}assessmentSection"):
        pool = identifier_or_none(section.get("identifier"))
        if pool and section.find(f"{{{QTI}}}selection") is not None:
            for ref in section.iterchildren(f"{{{QTI}}}assessmentItemRef"):
                found[posixpath.normpath(posixpath.join(folder, ref.get("href", "")))] = pool
    return found


def _test_order(test: tuple[str, etree._Element], items: set[str]) -> list[str]:
    """The item files in the order of the test's assessmentItemRefs (hrefs relative to the test)."""
    folder = posixpath.dirname(test[0])
    order = []
    for ref in test[1].iter(f"{{{QTI}}}assessmentItemRef"):
        name = posixpath.normpath(posixpath.join(folder, ref.get("href", "")))
        if name in items and name not in order:
            order.append(name)
    return order


def item(document: bytes) -> tuple[Check | GeneratedCheck, str | None, str | None]:
    root = etree.fromstring(document, PARSER)
    identifier = root.get("identifier", "?")
    interaction = root.find(f".//{{{QTI}}}choiceInteraction")
    if interaction is None and root.find(f".//{{{QTI}}}textEntryInteraction") is not None:
        return _typed(root, identifier), None, root.get("title")
    if interaction is None:
        raise CheckImportError(f"item {identifier}: no choiceInteraction or textEntryInteraction")
    correct = {
        value.text for value in root.iterfind(f"{{{QTI}}}responseDeclaration/{{{QTI}}}correctResponse/{{{QTI}}}value")
    }
    feedback = {node.get("identifier"): node for node in root.iterfind(f"{{{QTI}}}modalFeedback")}
    prompt = interaction.find(f"{{{QTI}}}prompt")
    options = []
    for choice in interaction.iterfind(f"{{{QTI}}}simpleChoice"):
        letter = choice.get("identifier")
        is_correct = letter in correct
        hint = feedback.get(letter)
        options.append(
            Option(
                text=_text(choice),
                correct=is_correct,
                tempting=_text(hint) if hint is not None and not is_correct else None,
            )
        )
    general = feedback.get("KEY_IDEA")
    check = Check(
        stem=_text(prompt) if prompt is not None else RichText([]), options=options, id=identifier_or_none(identifier)
    )
    return check, (_text(general).markdown() if general is not None else None), root.get("title")


def _typed(root: etree._Element, identifier: str) -> GeneratedCheck:
    """A text entry: a float's answer and its absolute tolerance, or a string's correct response."""
    declaration = root.find(f"{{{QTI}}}responseDeclaration")
    answer = root.findtext(f"{{{QTI}}}responseDeclaration/{{{QTI}}}correctResponse/{{{QTI}}}value")
    if declaration is None or answer is None:
        raise CheckImportError(f"item {identifier}: a text entry with no correct response")
    paragraph = root.find(f"{{{QTI}}}itemBody/{{{QTI}}}p")
    stem = _text(paragraph) if paragraph is not None else RichText([])
    solution = next((n for n in root.iterfind(f"{{{QTI}}}modalFeedback") if n.get("identifier") == "SOLUTION"), None)
    feedback = _text(solution) if solution is not None else None
    name = identifier_or_none(identifier) or "question"
    if declaration.get("baseType") != "float":
        return fixed_question(name, stem, answer, 0.0, feedback)
    equal = root.find(f".//{{{QTI}}}equal")
    spread = (
        equal.get("tolerance", "0") if equal is not None and equal.get("toleranceMode") == "absolute" else "0"
    ).split()
    try:
        return fixed_question(name, stem, float(answer), float(spread[-1] if spread else 0), feedback)
    except ValueError:
        raise CheckImportError(f"item {identifier}: {answer!r} is not a number") from None


def _text(element) -> RichText:
    runs = list(runs_from_element(element))
    if runs and not (runs[0].code or runs[0].math):
        runs[0] = runs[0].model_copy(update={"text": runs[0].text.lstrip()})
    if runs and not (runs[-1].code or runs[-1].math):
        runs[-1] = runs[-1].model_copy(update={"text": runs[-1].text.rstrip()})
    return RichText([run for run in runs if run.text])
