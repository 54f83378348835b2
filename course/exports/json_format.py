"""The project's own JSON format for checks, validated by ``course/schemas/checks-export.schema.json``:
each check's stem, options (in display order) and feedback as inline Markdown and as HTML."""

from __future__ import annotations

import json

from ..inline import to_html
from ..schemas import schema_problems
from .items import ExportItem
from .package import ExportError, Package

SCHEMA = "checks-export"


def export(items: list[ExportItem], title: str) -> Package:
    document = {
        "format": "module10-checks",
        "version": 1,
        "title": title,
        "checks": [
            {
                "id": item.identifier,
                "lesson": {"slug": item.lesson_slug, "title": item.lesson_title},
                "stem": {"markdown": item.choice.stem.markdown(), "html": to_html(item.choice.stem)},
                "options": [
                    {
                        "id": letter,
                        "markdown": option.text.markdown(),
                        "html": to_html(option.text),
                        "correct": option.correct,
                        "feedback": {
                            "markdown": item.feedback(option).markdown(),
                            "html": to_html(item.feedback(option)),
                        },
                    }
                    for letter, option in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", item.options, strict=False)
                ],
                "general_feedback": item.key_idea.markdown() if item.key_idea else None,
            }
            for item in items
        ],
    }
    problems = schema_problems(SCHEMA, document)
    if problems:  # our own output: a mismatch is our bug, said plainly rather than written out
        where, what = problems[0]
        raise ExportError(f"the JSON export does not match its schema at {where}: {what}")
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return Package(files=[("checks.json", data.encode("utf-8"))], container="file")
