"""Reading the instructor's CSV files (roster, responses): problems are reported with their row
number and the rows that are fine are still used."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from untrusted import spreadsheet
from untrusted.errors import UnreadableTable

from ..errors import ExamError, Problem

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def read_rows(path: Path, required: list[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and (row number, row) pairs; a missing file, an empty file or missing columns
    stop everything with one line."""
    try:
        return spreadsheet.read_rows(path, required)
    except UnreadableTable as exc:
        raise ExamError(str(exc)) from None


def problem(path: Path, row: int, what: str, severity: Literal["error", "warning"] = "error") -> Problem:
    return Problem(file=str(path), where=f"row {row}", what=what, severity=severity)
