"""CSV files that a spreadsheet opens without running anything a student planted.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula (OWASP's "CSV injection"); such a cell gets a leading
apostrophe, which the spreadsheet shows as text. Numbers are left as they are. Reading such a file
back (``read_rows``) takes the apostrophe off again.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from .errors import UnreadableTable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """The cell as a spreadsheet should show it: text, never a formula."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


class SafeWriter:
    """``csv.writer`` whose every text cell is neutralised."""

    def __init__(self, handle: IO[str], **options: Any):
        self._writer = csv.writer(handle, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([neutralise(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle: IO[str], **options: Any) -> SafeWriter:
    return SafeWriter(handle, **options)


def restore(value: str) -> str:
    """A cell as ``neutralise`` had it before: the apostrophe before a formula's first character off."""
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value[1:]):
        return value[1:]
    return value


def read_rows(path: Path, required: list[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """A CSV file's header and its (row number, row) pairs, cells stripped and restored, blank rows
    left out. A missing, unreadable or empty file, or missing columns, raise UnreadableTable with one
    line naming the file (and row 1 for the header)."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark, as Excel writes one, is not a column
    except FileNotFoundError:
        raise UnreadableTable(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise UnreadableTable(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise UnreadableTable(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not text.strip():
        raise UnreadableTable(f"{path}: the file is empty")
    try:
        reader = csv.DictReader(io.StringIO(text))
        header = [name.strip() for name in reader.fieldnames or []]
        missing = [name for name in required if name not in header]
        if missing:
            raise UnreadableTable(
                f"{path}: row 1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            )
        rows = []
        for number, row in enumerate(reader, start=2):
            cleaned = {
                (key or "").strip(): restore(value.strip()) if isinstance(value, str) else ""
                for key, value in row.items()
            }
            if any(cleaned.values()):
                rows.append((number, cleaned))
    except csv.Error as exc:
        raise UnreadableTable(f"{path}: row {reader.line_num}: not CSV ({exc})") from None
    return header, rows
