"""Moodle GIFT back into checks: ``::title::[html]stem{ ~wrong#feedback =right#feedback ####general }``,
with GIFT's backslash escapes undone."""

from __future__ import annotations

import re

from ..exports.items import runs_from_html
from ..models import Check, Option, RichText
from . import CheckImportError, ImportedBank

ESCAPED = re.compile(r"\\(.)")


def read(data: bytes, source: str) -> ImportedBank:
    text = data.decode("utf-8")
    checks, key_idea, title = [], None, None
    for number, block in enumerate(_questions(text), start=1):
        if block.startswith("$CATEGORY:"):
            title = title or _unescape(block.split(":", 1)[1].strip()).rsplit("/", 1)[-1]
            continue
        check, general = _question(block, number)
        if check is not None:
            checks.append(check)
            key_idea = key_idea or general
    return ImportedBank(title=title, key_idea=key_idea, checks=checks)


def _questions(text: str) -> list[str]:
    """Questions are separated by blank lines; comment lines (//) are dropped."""
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if not line.lstrip().startswith("//")]
    return [block.strip() for block in "\n".join(lines).split("\n\n") if block.strip()]


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


def _question(block: str, number: int) -> tuple[Check | None, str | None]:
    opening = _find_unescaped(block, "{")
    closing = _rfind_unescaped(block, "}")
    if opening < 0 or closing < opening:
        raise CheckImportError(f"question {number}: no {{...}} answer block")
    head, answers = block[:opening].strip(), block[opening + 1 : closing]
    if head.startswith("::"):
        end = _find_unescaped(head, "::", 2)
        head = head[end + 2 :].strip() if end >= 0 else head
    is_html = head.startswith("[html]")
    head = re.sub(r"^\[(html|moodle|plain|markdown)\]", "", head)
    general = None
    general_at = answers.find("####")
    if general_at >= 0:
        general, answers = _rich(answers[general_at + 4 :].strip(), is_html).markdown(), answers[:general_at]
    options = []
    for mark, piece in _split_unescaped(answers, "~="):
        if not mark:
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
    return Check(stem=_rich(head, is_html), options=options), general


def _rich(text: str, is_html: bool) -> RichText:
    plain = _unescape(text)
    return runs_from_html(plain) if is_html else RichText.of(plain)


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
