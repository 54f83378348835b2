"""Moodle XML back into checks: ``multichoice`` questions with one answer at fraction 100, ``numerical``
and ``shortanswer`` ones (their first answer at fraction 100, its tolerance, the general feedback as
the question's feedback) as generated questions that draw nothing, and ``calculated`` ones as
generated questions again (``course.exports.calculated``); a question in a pool's category (``Pool
<id>``, as the export writes a generated question's variants) keeps its pool."""

from __future__ import annotations

from lxml import etree

from ..errors import CheckImportError
from ..exports import calculated
from ..exports.moodle import pool_of_category
from ..inline import runs_from_html
from ..models import Check, GeneratedCheck, Option, Tolerance
from .base import ImportedBank, fixed_question, identifier_or_none, literal

PARSER = etree.XMLParser(resolve_entities=False, no_network=True, strip_cdata=True)


def read(data: bytes, source: str) -> ImportedBank:
    root = etree.fromstring(data, PARSER)
    if root.tag != "quiz":
        raise CheckImportError("not Moodle XML (no <quiz>)")
    checks, key_idea, title, pool, generated = [], None, None, None, []
    for number, question in enumerate(root.iterfind("question"), start=1):
        kind = question.get("type")
        if kind == "category":
            path = question.findtext("category/text") or ""
            pool = pool_of_category(path)
            title = title or (None if pool else path.rsplit("/", 1)[-1] or None)
            continue
        name = question.findtext("name/text") or f"question {number}"
        if kind in ("numerical", "shortanswer", "calculated"):
            generated.append(_typed(question, kind, name, number, identifier_or_none(pool)))
            continue
        if kind != "multichoice":
            continue
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
    return ImportedBank(title=title, key_idea=key_idea, checks=checks, generated=generated)


def _typed(question: etree._Element, kind: str, name: str, number: int, pool: str | None) -> GeneratedCheck:
    identifier = identifier_or_none(question.findtext("idnumber")) or f"question-{number}"
    right = next((a for a in question.iterfind("answer") if float(a.get("fraction", "0")) >= 100), None)
    if right is None:
        raise CheckImportError(f"question {name!r}: no answer at fraction 100")
    text = question.findtext("questiontext/text") or ""
    general = question.findtext("generalfeedback/text") or ""
    answer = right.findtext("text") or ""
    if kind == "shortanswer":
        answer = answer.replace("\\*", "*")
        return fixed_question(
            identifier, runs_from_html(text), answer, 0.0, runs_from_html(general) if general else None, pool
        )
    try:
        if kind == "numerical":
            value, margin = float(answer), float(right.findtext("tolerance") or 0)
            feedback = runs_from_html(general) if general else None
            return fixed_question(identifier, runs_from_html(text), value, margin, feedback, pool)
        return _calculated(question, identifier, text, general, right)
    except ValueError as exc:
        raise CheckImportError(f"question {name!r}: {exc}") from None


def _calculated(
    question: etree._Element, identifier: str, text: str, general: str, right: etree._Element
) -> GeneratedCheck:
    """A calculated question as a generated one: each dataset a parameter, the formula its answer,
    each ``{=formula}`` in its text a value."""
    parameters = {}
    for definition in question.iterfind("dataset_definitions/dataset_definition"):
        wildcard = (definition.findtext("name/text") or "").strip()
        if not wildcard.isidentifier():
            raise ValueError(f"wildcard {wildcard!r} is not a name a template can use")
        parameters[wildcard] = calculated.parameter_of(
            float(definition.findtext("minimum/text") or 0),
            float(definition.findtext("maximum/text") or 0),
            int(definition.findtext("decimals/text") or 0),
        )
    wildcards = set(parameters)
    values: dict[str, str] = {}
    templates = []
    for html in (text, general):
        tokens, fields = calculated.template_of(html, wildcards, values)
        templates.append(calculated.fill_template(runs_from_html(tokens).markdown(), fields) if html else None)
    tolerance = float(right.findtext("tolerance") or 0)
    kinds = {code: kind for kind, code in calculated.TOLERANCE_TYPES.items()}
    kind = kinds.get((right.findtext("tolerancetype") or "").strip())
    if kind is None:
        raise ValueError("its tolerance is geometric; only a relative or a nominal one is read")
    return GeneratedCheck(
        id=identifier,
        kind="numeric",
        question=templates[0] or literal(""),
        parameters=parameters,
        values=values,
        answer=calculated.expression_of(right.findtext("text") or "", wildcards),
        tolerance=Tolerance(relative=tolerance, absolute=0)
        if kind == "relative"
        else Tolerance(relative=0, absolute=tolerance),
        feedback=templates[1],
    )
