"""One rule for student-controlled text: what is stored, what is shown, how long it may be."""

from __future__ import annotations

import hashlib
import html
import os
import unicodedata

# Unicode categories that a terminal, an editor or a browser acts on instead of showing: controls,
# format characters (bidirectional overrides, zero-width joiners), separators other than the space,
# surrogates, private use and unassigned code points.
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def storable(text: str) -> str:
    """``text`` with lone surrogates (which no UTF-8 file can hold) written as ``\\udcxx``, so that
    any string a student controls can be stored."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every character that a terminal or an editor would act on (escape sequences,
    carriage returns, bidirectional overrides, lone surrogates) written as a visible escape.
    ``keep_newlines`` keeps line feeds and tabs, for multi-line text."""
    kept = "\n\t" if keep_newlines else ""
    # Most text is plain ASCII with nothing to escape: said at C speed, not character by character.
    if text.isascii() and text.translate(dict.fromkeys(map(ord, kept))).isprintable():
        return text
    return "".join(
        char
        if char in kept or (unicodedata.category(char) not in _HIDDEN_CATEGORIES and char != "\x7f")
        else _escape(char)
        for char in text
    )


def one_line(text: str) -> str:
    """``text`` as a single printable line (line breaks of any kind escaped)."""
    return printable(text, keep_newlines=False)


def for_terminal(text: str) -> str:
    """``text`` for a Rich table or message on the staff's terminal: one printable line whose Rich
    markup (``[link=...]``, ``[bold red]``) is shown as written, never acted on. Every name, file name
    or other text a student or a platform controls goes through here before Rich prints it."""
    from rich.markup import escape

    return escape(one_line(text))


def for_markdown(text: str) -> str:
    """``text`` for a line of a Markdown file: one printable line, with no live HTML (``<``, ``>``
    and ``&`` escaped, as Markdown renderers pass raw HTML through)."""
    return html.escape(one_line(text), quote=False)


def bounded(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def from_filesystem(name: str) -> str:
    """The text of a file or folder name as the operating system gave it. Bytes that are not UTF-8
    become ``\\xNN`` and a backslash becomes two, so that different names always give different texts."""
    raw = os.fsencode(name).replace(b"\\", b"\\\\")
    return raw.decode("utf-8", "backslashreplace")


def fingerprint(text: str, length: int = 12) -> str:
    """A short, stable hash of ``text`` (any string, lone surrogates included)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
