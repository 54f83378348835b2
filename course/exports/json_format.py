"""The project's own JSON format for checks, validated by ``course/schemas/checks-export.schema.json``:
each check's stem, options (in display order) and feedback as inline Markdown and as HTML; a drawn
numeric or short-answer variant with its ``kind``, ``answer``, ``margin`` (numeric) or ``accepted``
texts (short answer) and ``feedback`` instead of options; each variant of a pool with its ``pool``."""

from __future__ import annotations

import json
from typing import Any

from ..inline import to_html
from ..models import RichText
from ..schemas import schema_problems
from .items import ExportItem
from .package import ExportError, Package

SCHEMA = "checks-export"


def export(items: list[ExportItem], title: str) -> Package:
    document = {
        "format": "module10-checks",
        "version": 1,
        "title": title,
        "checks": [_typed(item) if item.entry is not None else _choice(item) for item in items],
    }
    problems = schema_problems(SCHEMA, document)
    if problems:  # our own output: a mismatch is our bug, said plainly rather than written out
        where, what = problems[0]
        raise ExportError(f"the JSON export does not match its schema at {where}: {what}")
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return Package(files=[("checks.json", data.encode("utf-8"))], container="file")


def _text(text: RichText) -> dict[str, str]:
    return {"markdown": text.markdown(), "html": to_html(text)}


def _head(item: ExportItem) -> dict[str, Any]:
    head: dict[str, Any] = {
        "id": item.identifier,
        "lesson": {"slug": item.lesson_slug, "title": item.lesson_title},
        "stem": _text(item.stem),
    }
    return {**head, "pool": item.pool} if item.pool else head


def _typed(item: ExportItem) -> dict[str, Any]:
    entry = item.entry
    assert entry is not None
    numeric = entry.kind == "numeric"
    return {
        **_head(item),
        "kind": entry.kind,
        "answer": entry.answer,
        **({"margin": entry.margin} if numeric else {"accepted": entry.accepted}),
        "feedback": _text(entry.feedback) if entry.feedback else None,
    }


def _choice(item: ExportItem) -> dict[str, Any]:
    return {
        **_head(item),
        "options": [
            {
                "id": letter,
                **_text(option.text),
                "correct": option.correct,
                "feedback": _text(item.feedback(option)),
            }
            for letter, option in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", item.options, strict=False)
        ],
        "general_feedback": item.key_idea.markdown() if item.key_idea else None,
    }
