"""The project's own JSON export (``course export checks --format json``) back into checks, checked
first against its published schema: a numeric or short-answer question as a generated question
that draws nothing; each keeps its pool."""

from __future__ import annotations

import json

from ..errors import CheckImportError
from ..exports.items import CONFIRMATION
from ..loaders.markdown import parse_inline
from ..models import Check, Option
from ..schemas import schema_problems
from .base import ImportedBank, fixed_question, identifier_or_none

SCHEMA = "checks-export"


def read(data: bytes, source: str) -> ImportedBank:
    try:
        document = json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise CheckImportError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    problems = schema_problems(SCHEMA, document)
    if problems:
        where, what = problems[0]
        raise CheckImportError(f"{where or '/'}: {what}")
    checks, key_idea, lessons, generated = [], None, [], []
    for number, raw in enumerate(document["checks"], start=1):
        lessons.append((raw["lesson"]["slug"], raw["lesson"]["title"]))
        pool = identifier_or_none(raw.get("pool"))
        if "kind" in raw:
            feedback = parse_inline(raw["feedback"]["markdown"]) if raw["feedback"] else None
            generated.append(
                fixed_question(
                    identifier_or_none(raw["id"]) or f"question-{number}",
                    parse_inline(raw["stem"]["markdown"]),
                    float(raw["answer"]) if raw["kind"] == "numeric" else raw["answer"],
                    raw.get("margin", 0.0),
                    feedback,
                    pool,
                )
            )
            continue
        options = []
        for option in raw["options"]:
            feedback = option["feedback"]["markdown"]
            tempting = feedback if not option["correct"] and feedback.strip() != CONFIRMATION else None
            options.append(
                Option(
                    text=parse_inline(option["markdown"]),
                    correct=option["correct"],
                    tempting=parse_inline(tempting) if tempting else None,
                )
            )
        stem = parse_inline(raw["stem"]["markdown"])
        checks.append(Check(stem=stem, options=options, id=identifier_or_none(raw["id"]), pool=pool))
        key_idea = key_idea or raw.get("general_feedback")
    bank = ImportedBank(title=document.get("title"), key_idea=key_idea, checks=checks, generated=generated)
    if len(set(lessons)) == 1:
        return bank.model_copy(update={"slug": lessons[0][0], "title": lessons[0][1]})
    return bank
