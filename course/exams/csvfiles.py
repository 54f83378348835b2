"""Reading the instructor's CSV files (roster, responses): problems are reported with their row
number and the rows that are fine are still used."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..errors import ExamError, Problem

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def read_rows(path: Path, required: list[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and (row number, row) pairs; a missing file, an empty file or missing columns
    stop everything with one line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ExamError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ExamError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise ExamError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not text.strip():
        raise ExamError(f"{path}: the file is empty")
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [name for name in required if name not in header]
    if missing:
        raise ExamError(f"{path}: row 1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    rows = []
    for number, row in enumerate(reader, start=2):
        cleaned = {
            (key or "").strip(): (value or "").strip() if isinstance(value, str) else "" for key, value in row.items()
        }
        if any(cleaned.values()):
            rows.append((number, cleaned))
    return header, rows


def problem(path: Path, row: int, what: str) -> Problem:
    return Problem(file=str(path), where=f"row {row}", what=what)
