"""Finding submissions and reading the code out of them.

A submission is graded by the functions it defines, whatever its cell layout or metadata: code
cells run top to bottom, IPython magics and shell lines are skipped, a ``.py`` file is one cell.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from .errors import SubmissionError
from .sandbox.session import Cell

SUFFIXES = {".ipynb", ".py"}
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
MAGIC_LINE = re.compile(r"^(?P<indent>\s*)(?:[%!]|\w+\s*=\s*[%!])")


class Submission(BaseModel):
    student: str
    path: Path
    sha256: str


class Unreadable(Exception):
    """A submission whose code cannot be read; the message says why, for the report."""


class Extracted(BaseModel):
    cells: list[Cell]
    answers: dict[str, str] = {}  # nbgrader grade_id -> the student's text, for questions graded by hand


def find_submissions(paths: Iterable[Path | str]) -> list[Submission]:
    """Every ``.ipynb`` and ``.py`` file under the paths, with its student: the folder after
    ``submitted/`` in nbgrader's layout (``submitted/<student>/<assignment>/x.ipynb``), else the
    file's stem."""
    found: dict[str, Submission] = {}
    for path in map(Path, paths):
        if not path.exists():
            raise SubmissionError(f"{path}: no such file or folder")
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file() and not _hidden(p, path))
            if path.is_dir()
            else [path]
        )
        if path.is_dir() and not files:
            raise SubmissionError(f"{path}: holds no .ipynb or .py files")
        for file in files:
            student = _student(file)
            if student in found and found[student].path != file:
                raise SubmissionError(
                    f"{file}: a second submission for student {student!r} (the first is {found[student].path}); "
                    "hand in one file per student, or use nbgrader's submitted/<student>/ layout"
                )
            found[student] = Submission(student=student, path=file, sha256=_sha256(file))
    return sorted(found.values(), key=lambda submission: submission.student)


def extract(path: Path) -> Extracted:
    """The code cells of a notebook, or a ``.py`` file as one cell; raises Unreadable."""
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            raise Unreadable(f"the file is {size / 1e6:.1f} MB, over the {MAX_SUBMISSION_BYTES // 1_000_000} MB limit")
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"the file cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("the file is not UTF-8 text") from None
    if "\x00" in text:
        raise Unreadable("the file is binary, not a notebook or Python source")
    if path.suffix == ".py":
        return Extracted(cells=[Cell(index=1, source=strip_magics(text))])
    return _notebook_cells(text)


def strip_magics(source: str) -> str:
    """IPython magics and shell lines become ``pass`` at the same indentation, so line numbers
    and blocks stay as they were. A cell magic (``%%time``) skips the whole cell."""
    if source.lstrip().startswith("%%"):
        return ""
    lines = []
    for line in source.split("\n"):
        match = MAGIC_LINE.match(line)
        lines.append(f"{match.group('indent')}pass" if match else line)
    return "\n".join(lines)


def _notebook_cells(text: str) -> Extracted:
    try:
        notebook = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise Unreadable(f"the notebook is not valid JSON ({getattr(exc, 'msg', exc)})") from None
    raw_cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(raw_cells, list):
        raise Unreadable("the notebook has no list of cells")
    cells, answers = [], {}
    for index, cell in enumerate(raw_cells, start=1):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if not isinstance(source, str):
            continue
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        nbgrader = nbgrader if isinstance(nbgrader, dict) else {}
        grade_id = nbgrader.get("grade_id")
        if cell.get("cell_type") == "code":
            cells.append(Cell(index=index, source=strip_magics(source)))
        elif isinstance(grade_id, str) and nbgrader.get("solution"):
            answers[grade_id] = source
    return Extracted(cells=cells, answers=answers)


def _student(file: Path) -> str:
    parts = file.parts
    if "submitted" in parts:
        position = len(parts) - 1 - parts[::-1].index("submitted")
        if position + 2 < len(parts):
            return parts[position + 1]
    return file.stem


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
