"""Check questions from course platforms back into lesson files. One module per format, each
``read(data: bytes, source: str) -> ImportedBank``, registered in ``IMPORTERS``; ``import_checks``
is what ``course import checks`` calls."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CheckImportError, LessonFileError, dependency_error
from ..loaders import load_lesson
from ..models import GeneratedCheck, slugify
from .base import ImportedBank, identifier_or_none, zip_members

__all__ = ["ImportedBank", "detect", "identifier_or_none", "import_checks", "zip_members"]


def detect(data: bytes) -> str:
    """The format of a platform file, from its content."""
    if data[:2] == b"PK":
        members = zip_members(data)
        manifest = members.get("imsmanifest.xml", b"")
        if b"imsqti_xmlv1p2" in manifest or any(b"<questestinterop" in content[:4096] for content in members.values()):
            return "qti12"
        return "qti21"
    head = data[:4096].lstrip()
    if head.startswith(b"{"):
        return "json"
    head = head.lower()
    if head.startswith(b"<?xml") or head.startswith(b"<"):
        if b"<quiz" in head:
            return "moodle"
        if b"<questestinterop" in head:
            return "qti12"
        if b"imsqti_v2p1" in head or b"<assessmentitem" in head:
            return "qti21"
        raise CheckImportError("an XML file that is neither Moodle XML nor QTI")
    return "gift"


def import_checks(file: Path, out: Path) -> tuple[Path, int]:
    """Read the checks in ``file`` (a QTI 1.2 or 2.1 package or file, Moodle XML, GIFT, or this
    project's JSON export) and write them as a lesson file ``out`` in the lesson JSON format, checked
    by loading it back."""
    from . import gift, json_checks, moodle, qti12, qti21

    importers: dict[str, Callable[[bytes, str], ImportedBank]] = {
        "qti12": qti12.read,
        "qti21": qti21.read,
        "moodle": moodle.read,
        "gift": gift.read,
        "json": json_checks.read,
    }
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise CheckImportError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    if not out.parent.is_dir():
        raise CheckImportError(f"{out}: cannot write here: the folder {out.parent} does not exist")
    try:
        bank = importers[detect(data)](data, str(file))
    except CheckImportError as exc:
        raise CheckImportError(f"{file}: {exc}") from None
    except Exception as exc:  # a dependency's error about the file, said in our words
        said = dependency_error(exc)
        if said is None and not isinstance(exc, ValueError | KeyError):
            raise
        raise CheckImportError(
            f"{file}: {said or f'cannot be read as QTI, Moodle XML, GIFT or JSON ({exc})'}"
        ) from None
    if not bank.checks and not bank.generated:
        raise CheckImportError(f"{file}: holds no single-answer check questions")
    stem = out.name.split(".")[0]
    document = {
        "lesson": {
            "slug": bank.slug or slugify(stem) or "imported-checks",
            "title": bank.title or stem,
            "keyIdea": bank.key_idea,
        },
        "body": {
            "format": "markdown",
            "text": f"## Imported check questions\n\nImported from {file.name} by `course import checks`.",
        },
        "checks": [
            {
                **({"id": check.id} if check.id else {}),
                **({"pool": check.pool} if check.pool else {}),
                "question": check.stem.markdown(),
                "options": [
                    {
                        "text": o.text.markdown(),
                        "correct": o.correct,
                        "tempting": o.tempting.markdown() if o.tempting else None,
                    }
                    for o in check.displayed()
                ],
            }
            for check in bank.checks
        ],
        **({"generated": [_generated(question) for question in bank.generated]} if bank.generated else {}),
    }
    # Mode 0666 less the umask: the user's normal permissions (a temporary file's 0600 would stay).
    temporary = out.parent / f".{out.name}.{secrets.token_hex(6)}.json"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(document, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    try:
        load_lesson(temporary)
    except LessonFileError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise CheckImportError(
            f"{file}: the imported checks do not make a valid lesson: {exc.problems[0].what}"
        ) from None
    os.replace(temporary, out)
    return out, len(bank.checks) + len(bank.generated)


def _generated(question: GeneratedCheck) -> dict[str, Any]:
    """A generated question as the lesson file writes it (what it leaves unsaid is its default)."""
    return question.model_dump(mode="json", exclude_defaults=True)
