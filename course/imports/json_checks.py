"""The project's own JSON export (``course export checks --format json``) back into checks, checked
first against its published schema."""

from __future__ import annotations

import json

from ..errors import CheckImportError
from ..exports.items import CONFIRMATION
from ..loaders.markdown import parse_inline
from ..models import Check, Option
from ..schemas import schema_problems
from .base import ImportedBank, identifier_or_none

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
    checks, key_idea, lessons = [], None, []
    for raw in document["checks"]:
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
        checks.append(
            Check(stem=parse_inline(raw["stem"]["markdown"]), options=options, id=identifier_or_none(raw["id"]))
        )
        key_idea = key_idea or raw.get("general_feedback")
        lessons.append((raw["lesson"]["slug"], raw["lesson"]["title"]))
    if len(set(lessons)) == 1:
        return ImportedBank(slug=lessons[0][0], title=lessons[0][1], key_idea=key_idea, checks=checks)
    return ImportedBank(title=document.get("title"), key_idea=key_idea, checks=checks)
