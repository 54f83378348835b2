"""Moodle XML back into checks: ``multichoice`` questions with one answer at fraction 100; a question in a
pool's category (``Pool <id>``, as the export writes a generated question's variants) keeps its pool."""

from __future__ import annotations

from lxml import etree

from ..errors import CheckImportError
from ..exports.moodle import pool_of_category
from ..inline import runs_from_html
from ..models import Check, Option
from .base import ImportedBank, identifier_or_none

PARSER = etree.XMLParser(resolve_entities=False, no_network=True, strip_cdata=True)


def read(data: bytes, source: str) -> ImportedBank:
    root = etree.fromstring(data, PARSER)
    if root.tag != "quiz":
        raise CheckImportError("not Moodle XML (no <quiz>)")
    checks, key_idea, title, pool = [], None, None, None
    for number, question in enumerate(root.iterfind("question"), start=1):
        kind = question.get("type")
        if kind == "category":
            path = question.findtext("category/text") or ""
            pool = pool_of_category(path)
            title = title or (None if pool else path.rsplit("/", 1)[-1] or None)
            continue
        if kind != "multichoice":
            continue
        name = question.findtext("name/text") or f"question {number}"
        options = []
        for answer in question.iterfind("answer"):
            correct = float(answer.get("fraction", "0")) >= 100
            feedback = answer.findtext("feedback/text") or ""
            options.append(
                Option(
                    text=runs_from_html(answer.findtext("text") or ""),
                    correct=correct,
                    tempting=runs_from_html(feedback) if feedback and not correct else None,
                )
            )
        if sum(option.correct for option in options) != 1:
            raise CheckImportError(f"question {name!r}: needs exactly one answer at fraction 100")
        checks.append(
            Check(
                stem=runs_from_html(question.findtext("questiontext/text") or ""),
                options=options,
                id=identifier_or_none(question.findtext("idnumber")),
                pool=identifier_or_none(pool),
            )
        )
        general = question.findtext("generalfeedback/text")
        key_idea = key_idea or (runs_from_html(general).markdown() if general else None)
    return ImportedBank(title=title, key_idea=key_idea, checks=checks)
