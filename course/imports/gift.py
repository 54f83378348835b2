"""Moodle GIFT back into checks: ``::title::[html]stem{ ~wrong#feedback =right#feedback ####general }``,
with GIFT's backslash escapes undone; a numeric question (``{#=answer:margin ####feedback}``) and a
short answer (``{=text =text ####feedback}``, no wrong answer) as generated questions that draw nothing."""

from __future__ import annotations

import re

from ..errors import CheckImportError
from ..exports.moodle import pool_of_category
from ..inline import runs_from_html, runs_from_text
from ..models import Check, GeneratedCheck, Option, RichText
from .base import ImportedBank, fixed_question, identifier_or_none

# GIFT escapes only its own special characters (and writes a line break as \\n); any other
# backslash is the author's, as in LaTeX's \\( \\), and stays as written.
ESCAPED = re.compile(r"\\([~=#{}:\\n])")


def read(data: bytes, source: str) -> ImportedBank:
    text = data.decode("utf-8")
    checks, key_idea, title, pool, generated = [], None, None, None, []
    for number, (line, block, idnumber) in enumerate(_questions(text), start=1):
        if block.startswith("$CATEGORY:"):
            # Moodle reads the category line as it is, a doubled slash standing for one.
            last = re.split(r"(?<!/)/(?!/)", block.split(":", 1)[1].strip())[-1]
            pool = pool_of_category(last)
            title = title or (None if pool else last.replace("//", "/"))
            continue
        try:
            check, general = _question(block, number)
        except CheckImportError as exc:
            raise CheckImportError(f"line {line}: {exc}") from None
        if isinstance(check, GeneratedCheck):
            update = {"pool": identifier_or_none(pool), **({"id": identifier_or_none(idnumber)} if idnumber else {})}
            generated.append(check.model_copy(update={k: v for k, v in update.items() if k == "pool" or v}))
        elif check is not None:
            if idnumber:
                check = check.model_copy(update={"id": identifier_or_none(idnumber) or check.id})
            checks.append(check.model_copy(update={"pool": identifier_or_none(pool)}))
            key_idea = key_idea or general
    return ImportedBank(title=title, key_idea=key_idea, checks=checks, generated=generated)


def _questions(text: str) -> list[tuple[int, str, str | None]]:
    """(first line, text, idnumber) of each question: questions are separated by blank lines;
    comment lines (//) are dropped, but for Moodle's ``// [id:...]``, the question's idnumber."""
    found: list[tuple[int, str, str | None]] = []
    current: list[str] = []
    start, idnumber = 0, None
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("//"):
            marker = re.match(r"//\s*\[id:([^\]]*)\]", stripped)
            if marker:
                idnumber = marker.group(1).strip()
            continue
        if not stripped:
            if current:
                found.append((start, "\n".join(current).strip(), idnumber))
                current, idnumber = [], None
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        found.append((start, "\n".join(current).strip(), idnumber))
    return found


def _split_unescaped(text: str, separators: str) -> list[tuple[str, str]]:
    """(separator, piece) pairs, splitting only on unescaped separators."""
    pieces, current, mark, index = [], [], "", 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index : index + 2])
            index += 2
            continue
        if char in separators:
            pieces.append((mark, "".join(current)))
            current, mark = [], char
        else:
            current.append(char)
        index += 1
    pieces.append((mark, "".join(current)))
    return pieces


def _question(block: str, number: int) -> tuple[Check | GeneratedCheck | None, str | None]:
    opening = _find_unescaped(block, "{")
    closing = _rfind_unescaped(block, "}")
    if opening < 0 or closing < opening:
        raise CheckImportError(f"question {number}: no {{...}} answer block (a {{ or }} in text is escaped: \\{{)")
    if _find_unescaped(block, "{", opening + 1) >= 0 or _find_unescaped(block[:closing], "}", opening + 1) >= 0:
        raise CheckImportError(f"question {number}: an unescaped {{ or }} inside the question (write \\{{ or \\}})")
    if block[closing + 1 :].strip():
        raise CheckImportError(f"question {number}: text after the answer block's closing }}")
    head, answers = block[:opening].strip(), block[opening + 1 : closing]
    name = None
    if head.startswith("::"):
        end = _find_unescaped(head, "::", 2)
        name = _unescape(head[2:end]) if end >= 0 else None
        head = head[end + 2 :].strip() if end >= 0 else head
    is_html = head.startswith("[html]")
    head = re.sub(r"^\[(html|moodle|plain|markdown)\]", "", head)
    general = None
    general_at = answers.find("####")
    if general_at >= 0:
        general, answers = _rich(answers[general_at + 4 :].strip(), is_html).markdown(), answers[:general_at]
    marks = [mark for mark, _ in _split_unescaped(answers, "~=") if mark]
    if answers.strip().startswith("#") or (marks and "~" not in marks):
        identifier = identifier_or_none(name) or f"question-{number}"
        return _typed(answers.strip(), _rich(head, is_html), identifier, general, number), None
    options = []
    for mark, piece in _split_unescaped(answers, "~="):
        if not mark:
            if piece.strip():  # GIFT has no text here: a question we do not read whole is refused, not cut short
                raise CheckImportError(f"question {number}: text before the first answer (~ or =) in {{...}}")
            continue
        parts = _split_unescaped(piece, "#")
        text, feedback = parts[0][1], (parts[1][1] if len(parts) > 1 else "")
        correct = mark == "="
        options.append(
            Option(
                text=_rich(text.strip(), is_html),
                correct=correct,
                tempting=_rich(feedback.strip(), is_html) if feedback.strip() and not correct else None,
            )
        )
    if not options:
        return None, None
    if sum(option.correct for option in options) != 1:
        raise CheckImportError(f"question {number}: needs exactly one right answer (=)")
    return Check(stem=_rich(head, is_html), options=options, id=identifier_or_none(name)), general


def _typed(answers: str, stem: RichText, identifier: str, general: str | None, number: int) -> GeneratedCheck:
    """A numeric question (``#=answer:margin``, or ``#answer:margin``) or a short answer (``=text``,
    the first accepted text its answer), its general feedback the question's feedback."""
    from ..loaders.markdown import parse_inline

    feedback = parse_inline(general) if general else None
    if answers.startswith("#"):
        first = [piece for mark, piece in _split_unescaped(answers[1:], "=") if piece.strip()]
        if not first:
            raise CheckImportError(f"question {number}: a numeric question ({{#...}}) with no answer")
        value = _split_unescaped(first[0], "#")[0][1].strip()
        try:
            answer, spread = _numeric(_unescape(value))
        except ValueError:
            raise CheckImportError(
                f"question {number}: {value!r} is neither answer:margin nor low..high (a number each)"
            ) from None
        return fixed_question(identifier, stem, answer, spread, feedback)
    texts = [
        _unescape(_split_unescaped(piece, "#")[0][1].strip()) for mark, piece in _split_unescaped(answers, "=") if mark
    ]
    return fixed_question(identifier, stem, texts[0], 0.0, feedback)


def _numeric(value: str) -> tuple[float, float]:
    """A GIFT numeric answer as (answer, margin): ``answer:margin``, ``answer``, or ``low..high``
    (the middle, and half the width)."""
    if ".." in value:
        low, high = (float(part) for part in value.split("..", 1))
        if low > high:
            raise ValueError(value)
        return (low + high) / 2, (high - low) / 2
    answer, _, spread = value.partition(":")
    return float(answer), float(spread or 0)


def _rich(text: str, is_html: bool) -> RichText:
    plain = _unescape(text)
    return runs_from_html(plain) if is_html else runs_from_text(plain)


def _unescape(text: str) -> str:
    return ESCAPED.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _find_unescaped(text: str, needle: str, start: int = 0) -> int:
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text.startswith(needle, index):
            return index
        index += 1
    return -1


def _rfind_unescaped(text: str, needle: str) -> int:
    found, index = -1, _find_unescaped(text, needle)
    while index >= 0:
        found = index
        index = _find_unescaped(text, needle, index + 1)
    return found
