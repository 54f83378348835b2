"""Finding submissions and reading the code out of them.

A submission is graded by the functions it defines, whatever its cell layout or metadata: code
cells run top to bottom, IPython magics and shell lines are skipped, a ``.py`` file is one cell.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from untrusted.text import from_filesystem

from .errors import SubmissionError
from .sandbox.session import Cell

SUFFIXES = {".ipynb", ".py"}
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
MAGIC_LINE = re.compile(r"^(?P<indent>\s*)(?:[%!]|\w+\s*=\s*[%!])")
LINK_PROBLEM = "symbolic links are not accepted; hand in the file itself"


class Submission(BaseModel):
    """One student's hand-in. ``student`` is the student's name as the file system gave it (any text);
    ``problem``, when set, says why it cannot be graded: it then gets a report with zero and that reason."""

    student: str
    path: Path
    sha256: str
    problem: str | None = None


class Skipped(BaseModel):
    """A file or folder that was not graded, and why (printed for the instructor)."""

    path: Path
    reason: str


class Discovery(BaseModel):
    submissions: list[Submission] = []
    skipped: list[Skipped] = []


class Unreadable(Exception):
    """A submission whose code cannot be read; the message says why, for the report."""


class Extracted(BaseModel):
    cells: list[Cell]
    answers: dict[str, str] = {}  # nbgrader grade_id -> the student's text, for questions graded by hand


def find_submissions(paths: Iterable[Path | str], preferred: str | None = None) -> Discovery:
    """Every ``.ipynb`` and ``.py`` file under the paths, with its student: the first folder under
    ``submitted/`` in nbgrader's layout (``submitted/<student>/<assignment>/x.ipynb``), else the
    file's stem. Nothing here stops the batch for one student: a student with several files is graded
    on the one named ``preferred`` (the released notebook's name) or gets a report saying why not; a
    symbolic link, a file that is not a regular file or cannot be read gets a report with the reason;
    hidden files and folders are skipped and listed. Links are never followed."""
    found: dict[str, list[tuple[Path, str | None]]] = {}
    discovery = Discovery()
    for root in map(Path, paths):
        if not os.path.lexists(root):
            raise SubmissionError(f"{root}: no such file or folder")
        before = sum(len(files) for files in found.values()), len(discovery.skipped)
        for file, problem in _walk(root, discovery.skipped):
            found.setdefault(_student(file, root), []).append((file, problem))
        if root.is_dir() and (sum(len(files) for files in found.values()), len(discovery.skipped)) == before:
            raise SubmissionError(f"{root}: holds no .ipynb or .py files")
    for student, files in sorted(found.items()):
        discovery.submissions.append(_one_per_student(student, files, preferred, discovery.skipped))
    return discovery


def _walk(root: Path, skipped: list[Skipped]) -> Iterator[tuple[Path, str | None]]:
    """Candidate files under ``root`` (or ``root`` itself), each with the problem that stops it
    from being graded, if any."""
    if not root.is_dir():
        yield root, _file_problem(root)
        return
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        for name in sorted(dirs):
            path = here / name
            if name.startswith("."):
                skipped.append(Skipped(path=path, reason="a hidden folder (its name starts with a dot)"))
                dirs.remove(name)
            elif path.is_symlink():
                yield path, LINK_PROBLEM
        dirs.sort()
        for name in sorted(files):
            path = here / name
            if Path(name).suffix not in SUFFIXES:
                continue
            if name.startswith("."):
                skipped.append(Skipped(path=path, reason="a hidden file (its name starts with a dot)"))
                continue
            yield path, _file_problem(path)


def _file_problem(path: Path) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"the file cannot be read ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        return LINK_PROBLEM
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None


def _one_per_student(
    student: str, files: list[tuple[Path, str | None]], preferred: str | None, skipped: list[Skipped]
) -> Submission:
    if len(files) > 1:
        chosen = [entry for entry in files if preferred and entry[0].name == preferred]
        if len(chosen) != 1:
            names = ", ".join(sorted(path.name for path, _ in files))
            wanted = f", named {preferred}" if preferred else ""
            return Submission(
                student=student,
                path=files[0][0],
                sha256=_fingerprint([path for path, _ in files]),
                problem=f"{len(files)} files were handed in ({names}); hand in exactly one{wanted}",
            )
        for path, _ in files:
            if path != chosen[0][0]:
                skipped.append(Skipped(path=path, reason=f"a second file of {student}; {preferred} was graded"))
        files = chosen
    ((path, problem),) = files
    if problem is None:
        try:
            return Submission(student=student, path=path, sha256=_sha256(path))
        except OSError as exc:
            problem = f"the file cannot be read ({exc.strerror or exc})"
    return Submission(student=student, path=path, sha256=_fingerprint([path]), problem=problem)


def extract(path: Path) -> Extracted:
    """The code cells of a notebook, or a ``.py`` file as one cell; raises Unreadable."""
    try:
        # O_NOFOLLOW: a file swapped for a link after it was found is still not followed.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise Unreadable("not a regular file")
            if info.st_size > MAX_SUBMISSION_BYTES:
                raise Unreadable(
                    f"the file is {info.st_size / 1e6:.1f} MB, over the {MAX_SUBMISSION_BYTES // 1_000_000} MB limit"
                )
            data = handle.read(MAX_SUBMISSION_BYTES + 1)
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


def _student(file: Path, root: Path) -> str:
    """The student a file belongs to. In nbgrader's layout it is the folder right under the first
    ``submitted/`` (a student's own folders can hold another ``submitted/`` to no effect)."""
    above = root.absolute().parts
    below = file.relative_to(root).parts if file != root else ()
    parts = above + below
    if "submitted" in above:
        position = len(above) - 1 - above[::-1].index("submitted")
    elif "submitted" in below:
        position = len(above) + below.index("submitted")
    else:
        return from_filesystem(file.stem)
    if position + 2 < len(parts):
        return from_filesystem(parts[position + 1])
    return from_filesystem(file.stem)


def _fingerprint(paths: list[Path]) -> str:
    """A stable hash for a hand-in that cannot be read as one file (so a rerun skips it unchanged)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(os.fsencode(path) + b"\0")
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
