"""Where a line of a file ``autograder assign`` wrote comes from: the master notebook's cell.

An instructor edits one notebook, so every message names its cell (number and first line) and, where
it helps, the line in it, never a generated file. ``assign`` writes a mark before each piece of a
generated file taken from a cell (a hidden test cell, a known version)::

    # from conv.master.ipynb, cell 11, line 2 (# HIDDEN TESTS: import pytest)

and ``master_place`` reads a line of the generated file back to that cell's line. The folder's
``.assign-record.json`` names the master (``master_of``). This module reads no notebook: the grader
imports it to name places in its messages.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

RECORD = ".assign-record.json"
_MARK = re.compile(r"^# from (?P<notebook>.+?), cell (?P<cell>\d+), line (?P<line>\d+) \((?P<first>.*)\)$")


def cell_place(path: Path | str, number: int, first: str, line: int | None = None) -> str:
    """``path: cell N (first line), line L``: where a message says the instructor wrote something."""
    named = f" ({first})" if first else ""
    return f"{path}: cell {number}{named}{f', line {line}' if line else ''}"


def origin_mark(notebook: str, number: int, line: int, first: str) -> str:
    """The comment put before code taken from cell ``number`` of ``notebook``, whose first line is
    the cell's ``line``."""
    return f"# from {notebook}, cell {number}, line {line} ({first})"


def master_place(path: Path, line: int | None = None) -> str | None:
    """The master notebook's place of ``line`` (1-based) of the generated file ``path``: its cell and
    the line in that cell; without ``line``, the first cell the file was taken from. None when the
    file holds no mark there (written by hand, or outside what came from a cell)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = marked_cell(text, line)
    if found is None:
        return None
    notebook, number, first, in_cell = found
    return cell_place(_beside(path, notebook), number, first, in_cell)


def marked_cell(text: str, line: int | None = None) -> tuple[str, int, str, int | None] | None:
    """``master_place`` of a generated file's ``text``: the master's name, the cell's number, its
    first line, and the line in the cell (None without ``line``)."""
    found = None
    for number, written in enumerate(text.splitlines(), start=1):
        if line is not None and number >= line:
            break
        mark = _MARK.match(written)
        if mark:
            found = (number, mark)
            if line is None:
                break
    if found is None:
        return None
    at, mark = found
    in_cell = int(mark["line"]) + line - at - 1 if line is not None else None
    return mark["notebook"], int(mark["cell"]), mark["first"], in_cell


def _beside(path: Path, notebook: str) -> str:
    """The master's path, from the record of the assignment folder holding ``path``, else its name."""
    for folder in path.parents:
        if (folder / RECORD).is_file():
            return str(master_of(folder) or notebook)
    return notebook


def master_of(folder: Path) -> Path | None:
    """The master notebook ``autograder assign`` wrote ``folder`` from (its record says), or None."""
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    master = data.get("master") if isinstance(data, dict) else None
    return Path(os.path.normpath(folder / master)) if isinstance(master, str) else None


# The first lines that make a notebook a master notebook (master.py's markers).
MASTER_MARKS = ("# ASSIGNMENT", "# BEGIN QUESTION", "# HIDDEN TESTS")


def is_master(path: Path) -> bool:
    """Whether the notebook at ``path`` is a master notebook (a cell opens with one of its markers),
    read as plain JSON: ``check`` asks it of every notebook, a student's too."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return False
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        text = "".join(source) if isinstance(source, list) else str(source)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if first in MASTER_MARKS:
            return True
    return False
