"""What every format's reader shares: the bank it returns and the small helpers they use. Kept apart
from the package's ``__init__`` (which registers the readers) so a reader never imports the module that
imports it."""

from __future__ import annotations

import re
import zipfile
from io import BytesIO

from pydantic import BaseModel

from ..models import Check, GeneratedCheck, RichText, Tolerance

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]{0,199}$")


def identifier_or_none(text: str | None) -> str | None:
    """A platform's name for a question, kept as the check's id when it can be one."""
    text = (text or "").strip()
    return text if IDENTIFIER.match(text) else None


class ImportedBank(BaseModel):
    slug: str | None = None  # the lesson's, where the format keeps it (the JSON export)
    title: str | None = None
    key_idea: str | None = None
    checks: list[Check]
    # Numeric and short-answer questions (a drawn variant, fixed), and Moodle's calculated ones.
    generated: list[GeneratedCheck] = []


def literal(text: str) -> str:
    """Text as a template that renders it unchanged: its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def fixed_question(
    identifier: str,
    stem: RichText,
    answer: float | str,
    margin: float = 0.0,
    feedback: RichText | None = None,
    pool: str | None = None,
) -> GeneratedCheck:
    """A numeric (``answer`` a number, right within ``margin``) or short-answer question read back
    from a platform, as a generated question that draws nothing: every student gets it as it is."""
    numeric = not isinstance(answer, str)
    return GeneratedCheck(
        id=identifier,
        kind="numeric" if numeric else "short-answer",
        question=literal(stem.markdown()),
        answer=repr(float(answer)) if numeric else literal(str(answer)),
        tolerance=Tolerance(relative=0, absolute=margin),
        feedback=literal(feedback.markdown()) if feedback else None,
        pool=pool,
    )


def zip_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
