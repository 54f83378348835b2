"""What a worker reports, and the rule each field meets before it reaches feedback.

The worker runs beside the submission, which can replace any of its functions (the helper that finds
an exception's line, the encoder of answers, the whole response). So every field of a response is the
submission's to forge: one that reaches a student's feedback is shown only after the grader checks it
against what the grader itself knows, and a field that fails its rule is left out or replaced by the
grader's own words. A forged field can then carry no hidden input: a line number is a line of code
the submission holds (never 605708 in a 35-line file), a name is one of Python's, a count is bounded.

``FIELDS`` names every field that reaches feedback (or steers what the grader does) and its rule;
the functions below apply them, and nothing else in the grader reads those fields.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from untrusted.text import bounded, storable

MAX_CELL_MESSAGE = 500
MAX_CELL_TYPE = 100

# Every field of a worker's response that the grader uses, and the rule it must meet.
FIELDS: dict[str, str] = {
    "load: cell_errors[].cell": "the index of a cell the grader sent; else the error is dropped",
    "load: cell_errors[].line": "a line of that cell's source holding code (not blank, not a comment); else none",
    "load: cell_errors[].ran_from": "the index of another cell the grader sent (the one that ran and called "
    "the failing code); else none",
    "load: cell_errors[].type": "text, bounded (100 characters) and storable: the student's own code, before any "
    "hidden input exists",
    "load: cell_errors[].message": "text, bounded (500 characters) and storable, for the same reason",
    "load: defined": "names (text), only ever compared with the names the grader calls",
    "load: output": "what the cells printed while loading (before any hidden input exists), bounded (64 KiB)",
    "call: error.type": "the name of one of Python's or numpy's exceptions; else 'an exception'",
    "call: error.own_class": "exactly true, or ignored",
    "call: error.cell, error.line": "a cell the grader sent and a line of its source holding code; else no line",
    "call: value": "plain data only (sandbox/session.py's decoder: bounded items, depth, arrays checked "
    "against their bytes), decoded within the call's time",
    "call: value.$rejected": "one of 'subclass', 'dtype', 'object'; its kind or type named only from the "
    "grader's own lists (numpy's dtype kinds, Python's own types)",
    "watched: calls[].name": "one of the functions the grader asked to watch; else the call is dropped",
    "watched: calls[].args, kwargs, value": "plain data, as a call's value; used only to word a "
    "question's feedback, never its score (causes.py)",
    "watched: dropped": "exactly the integer 0 means none was dropped; anything else, some were",
}

# The only exception names feedback ever shows: Python's own and numpy's, chosen here from what the
# worker reports, never a text it sends (the submission controls the worker and could send anything).
KNOWN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
) | {"LinAlgError", "AxisError", "ComplexWarning", "TooHardError", "RankWarning", "DTypePromotionError"}
KNOWN_TYPES = frozenset(name for name, value in vars(builtins).items() if isinstance(value, type)) | {
    "generator",
    "function",
    "module",
    "builtin_function_or_method",
    "method",
    "NoneType",
    "ellipsis",
}
DTYPE_KINDS = {
    "O": "object",
    "U": "str",
    "S": "bytes",
    "V": "structured (void)",
    "M": "datetime64",
    "m": "timedelta64",
    "T": "string",
}
# The line endings Python's own tokenizer accepts (str.splitlines accepts more: \f, \v, \u2028...),
# kept by re.split between the lines (a split's odd items).
LINE_ENDING = re.compile(r"(\r\n|\r|\n)")


class Cell(BaseModel):
    """One cell of the submission as the grader sends it: what a reported line is checked against."""

    index: int
    source: str


def code_line(cells: Sequence[Cell], cell: Any, line: Any) -> tuple[int, int] | None:
    """(cell, line) when ``cell`` is the index of a cell the grader sent and ``line`` a line of its
    source that holds code; None for anything else (a forged, out-of-range or blank line)."""
    if type(cell) is not int or type(line) is not int or line < 1:
        return None
    for sent in cells:
        if sent.index == cell:
            lines = LINE_ENDING.split(sent.source)[::2]
            text = lines[line - 1].strip() if line <= len(lines) else ""
            return (cell, line) if text and not text.startswith("#") else None
    return None


def where(cells: Sequence[Cell], cell: Any, line: Any) -> str:
    """' at line N of your code' (' of cell M' in a notebook of several cells) for a checked line, else ''."""
    found = code_line(cells, cell, line)
    if found is None:
        return ""
    return f" at line {found[1]} of " + ("your code" if len(cells) == 1 else f"cell {found[0]}")


class CellError(BaseModel):
    """A cell that failed while the submission loaded: the student's own code and message (no
    hidden input exists yet), bounded and storable, with a line only where the cell has one."""

    cell: int
    type: str
    message: str
    line: int | None = None
    ran_from: int | None = None  # the cell that ran when the error came from code of another (``cell``)

    @classmethod
    def from_worker(cls, error: Any, cells: Sequence[Cell]) -> CellError | None:
        indexes = {c.index for c in cells}
        if not isinstance(error, dict) or type(error.get("cell")) is not int or error["cell"] not in indexes:
            return None
        found = code_line(cells, error["cell"], error.get("line"))
        ran_from = error.get("ran_from")
        return cls(
            cell=error["cell"],
            type=storable(bounded(str(error.get("type", "")), MAX_CELL_TYPE)),
            message=storable(bounded(str(error.get("message", "")), MAX_CELL_MESSAGE)),
            line=found[1] if found else None,
            ran_from=ran_from if type(ran_from) is int and ran_from in indexes and ran_from != error["cell"] else None,
        )

    @property
    def running(self) -> int:
        """The cell that was running when it failed (a public test cell that called the failing code)."""
        return self.ran_from if self.ran_from is not None else self.cell

    def __str__(self) -> str:
        where = f"cell {self.cell}" + (f", line {self.line}" if self.line else "")
        if self.ran_from is not None:
            where += f" (called from cell {self.ran_from})"
        return f"{where}: {self.type}: {self.message}" if self.message else f"{where}: {self.type}"


def describe_exception(error: Any, cells: Sequence[Cell]) -> str:
    """What a graded call raised, in words the grader chooses: a known exception's name, and the
    line of the student's code when it is one."""
    error = error if isinstance(error, dict) else {}
    kind = error.get("type")
    known = kind if isinstance(kind, str) and kind in KNOWN_EXCEPTIONS else None
    if known and error.get("own_class") is True:
        text = f"an exception of the submission's own class (a {known})"
    else:
        text = known or "an exception"
    return text + where(cells, error.get("cell"), error.get("line"))


def describe_rejected(value: dict) -> str:
    """Why a returned value was refused, from the worker's codeword."""
    code = value.get("$rejected")
    if code == "subclass":
        return "an ndarray subclass, not a plain numpy array"
    if code == "dtype":
        code_kind = value.get("kind")
        kind = DTYPE_KINDS.get(code_kind) if isinstance(code_kind, str) else None
        return f"a numpy array of dtype {kind}" if kind else "a numpy array that does not hold numbers"
    type_name = value.get("type")
    if isinstance(type_name, str) and type_name in KNOWN_TYPES:
        return f"an object of type {type_name}"
    return "an object of a class of its own"


def defined_names(reported: Any) -> list[str]:
    """The names the submission defines, as text (only ever compared with the grader's own)."""
    return [name for name in (reported if isinstance(reported, list) else []) if isinstance(name, str)]


def watched_name(record: Any, asked: Sequence[str]) -> str | None:
    """A watched call's function, when it is one the grader asked to watch."""
    name = record.get("name") if isinstance(record, dict) else None
    return name if isinstance(name, str) and name in asked else None


def none_dropped(dropped: Any) -> bool:
    """Whether the worker kept every watched call: exactly the integer 0."""
    return type(dropped) is int and dropped == 0
