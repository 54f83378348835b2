"""The instructor's CSV files read by the gradebook (rosters, marks): a file that cannot be used as
a whole is a BadFile, one line; a row that cannot be used is a RowProblem, and the other rows are kept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel

from untrusted import spreadsheet
from untrusted.errors import UnreadableTable
from untrusted.text import one_line

from .errors import BadFile


class RowProblem(BaseModel):
    file: str
    row: int
    what: str

    def __str__(self) -> str:
        return one_line(f"{self.file}: row {self.row}: {self.what}")


def read_table(path: Path, required: list[str]) -> list[tuple[int, dict[str, str]]]:
    try:
        return spreadsheet.read_rows(path, required)[1]
    except UnreadableTable as exc:
        raise BadFile(str(exc)) from None


def score_problem(score: float, points: float) -> str | None:
    """Why a score given by hand cannot be a question's worth ``points``, or None: the one statement
    of a hand score's bounds, for the marks sheets and for ``gradebook.marking.marks.give_mark``."""
    return None if 0 <= score <= points else f"score {score:g} is outside 0..{points:g}"


def score_in_range(text: str, points: float) -> float | str:
    """A score given by hand, or why it is not one."""
    try:
        score = float(text)
    except ValueError:
        return f"score {text!r} is not a number"
    return score_problem(score, points) or score


class MarksImport(BaseModel):
    recorded: int = 0
    unchanged: int = 0  # rows left without a score (not marked yet)
    problems: list[RowProblem] = []


def marks_sheet(path: Path, required: list[str], column: str, expected: str, what: str):
    """A marks sheet's rows; a sheet of another assignment or exam (``column`` not ``expected``) is refused whole."""
    rows = read_table(path, required)
    others = sorted({row[column] for _, row in rows if row[column] != expected})
    if others:
        raise BadFile(f"{path}: marks of the {what} {others[0]!r}, not of {expected!r}; nothing was recorded")
    return rows


def scored_rows(
    path: Path, rows: list[tuple[int, dict[str, str]]], result: MarksImport, points_of: Callable[[dict], float | str]
) -> Iterator[tuple[dict[str, str], float]]:
    """Each row with a score to record, and the score: ``points_of(row)`` says what the row's question
    is worth, or why the row cannot be marked. Rows left blank are counted unchanged; a bad row is a
    problem with its number; each row yielded is counted recorded."""
    for number, row in rows:
        if not row["score"] and not row["comment"]:
            result.unchanged += 1
            continue
        points = points_of(row)
        if isinstance(points, str):
            score: float | str = points
        elif not row["score"]:
            score = "a comment without a score; give the score too"
        else:
            score = score_in_range(row["score"], points)
        if isinstance(score, str):
            result.problems.append(RowProblem(file=str(path), row=number, what=score))
            continue
        yield row, score
        result.recorded += 1
