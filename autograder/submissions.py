"""Finding submissions and reading the code out of them.

A submission is graded by the functions it defines, whatever its cell layout or metadata: code
cells run top to bottom, IPython magics and shell lines are skipped, a ``.py`` file is one cell.

Whose a file is, by the layout it comes in (``owner_of``):

- nbgrader's ``submitted/<student>/<assignment>/x.ipynb``: the folder under ``submitted/``;
- Moodle's assignment download, ``Full Name_12345_assignsubmission_file_/x.ipynb``: the participant
  ``12345`` (``lms = "moodle"``), named ``Full Name_12345`` until a roster says who that is;
- Canvas's submissions zip, ``lastname_firstname_12345_67890_x.ipynb`` (``LATE_`` before the user id
  when Canvas marks it late): the Canvas user ``12345``, named ``lastname_firstname_12345`` likewise;
- otherwise the file's stem.

A submission's time is its file's modification time: the time the platform's download gives it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from course.wording import plural
from untrusted.text import from_filesystem

from .errors import SubmissionError
from .sandbox.reported import LINE_ENDING
from .sandbox.session import Cell

SUFFIXES = {".ipynb", ".py"}
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
MAGIC_LINE = re.compile(r"^(?P<indent>\s*)(?:[%!]|\w+\s*=\s*[%!])")
NOT_A_NOTEBOOK = "this file is not a Jupyter notebook"
CELL_TYPES = ("code", "markdown", "raw")
LINK_PROBLEM = "symbolic links are not accepted; hand in the file itself"
CANVAS_FILE = re.compile(r"^(?P<name>.+?)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$")
MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<participant>\d+)_assignsubmission_[a-z]+_?$")


class Submission(BaseModel):
    """One student's hand-in. ``student`` is the student's name as the file system gave it (any text);
    ``problem``, when set, says why it cannot be graded: it then gets a report with zero and that reason."""

    student: str
    path: Path
    sha256: str
    problem: str | None = None
    submitted_at: datetime | None = None
    # The course platform the file came from and its id for the student there, for the roster to map.
    lms: Literal["canvas", "moodle"] | None = None
    lms_id: str | None = None


class Owner(BaseModel):
    student: str
    handed_in_as: str  # the file's name as the student gave it
    lms: Literal["canvas", "moodle"] | None = None
    lms_id: str | None = None


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
    # Every cell's kind and text, in order: written answers found by their question's heading when a
    # notebook lost its nbgrader metadata (see answers_after_heading).
    layout: list[tuple[str, str]] = []
    # nbgrader's cells, for a student's own check of the public tests (public_tests.py): each graded,
    # not-solution code cell's (index, grade_id, source), and every solution cell's grade_id.
    public_tests: list[tuple[int, str, str]] = []
    solution_ids: list[str] = []


def find_submissions(paths: Iterable[Path | str], preferred: str | None = None) -> Discovery:
    """Every ``.ipynb`` and ``.py`` file under the paths, with its student: the first folder under
    ``submitted/`` in nbgrader's layout (``submitted/<student>/<assignment>/x.ipynb``), else the
    file's stem. Nothing here stops the batch for one student: a student with several files is graded
    on the one named ``preferred`` (the released notebook's name) or gets a report saying why not; a
    symbolic link, a file that is not a regular file or cannot be read gets a report with the reason;
    hidden files and folders are skipped and listed. Links are never followed."""
    found: dict[tuple[str, str, str], list[tuple[Path, str | None, Owner]]] = {}
    discovery = Discovery()
    for root in map(Path, paths):
        if not os.path.lexists(root):
            raise SubmissionError(f"{root}: no such file or folder")
        before = sum(len(files) for files in found.values()), len(discovery.skipped)
        for file, problem in _walk(root, discovery.skipped):
            owner = owner_of(file, root)
            found.setdefault((owner.student, owner.lms or "", owner.lms_id or ""), []).append((file, problem, owner))
        if root.is_dir() and (sum(len(files) for files in found.values()), len(discovery.skipped)) == before:
            raise SubmissionError(f"{root}: holds no .ipynb or .py files")
    for (student, _, _), files in sorted(found.items()):
        submission = _one_per_student(student, files, preferred, discovery.skipped)
        owner = files[0][2]
        discovery.submissions.append(submission.model_copy(update={"lms": owner.lms, "lms_id": owner.lms_id}))
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
    student: str, files: list[tuple[Path, str | None, Owner]], preferred: str | None, skipped: list[Skipped]
) -> Submission:
    if len(files) > 1:
        chosen = [entry for entry in files if preferred and entry[2].handed_in_as == preferred]
        if len(chosen) != 1:
            names = ", ".join(sorted(owner.handed_in_as for _, _, owner in files))
            wanted = f", named {preferred}" if preferred else ""
            return Submission(
                student=student,
                path=files[0][0],
                sha256=_fingerprint([path for path, _, _ in files]),
                problem=f"{plural(len(files), 'file')} were handed in ({names}); hand in exactly one{wanted}",
            )
        for path, _, _ in files:
            if path != chosen[0][0]:
                skipped.append(Skipped(path=path, reason=f"a second file of {student}; {preferred} was graded"))
        files = chosen
    ((path, problem, _),) = files
    if problem is None:
        try:
            modified = datetime.fromtimestamp(os.lstat(path).st_mtime, UTC)
            return Submission(student=student, path=path, sha256=_sha256(path), submitted_at=modified)
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
    return extract_bytes(data, path.suffix)


def extract_bytes(data: bytes, suffix: str) -> Extracted:
    """The code cells of a notebook's bytes (``suffix`` ".ipynb"), or Python source's as one cell; raises
    Unreadable. The one rule for what counts as a readable submission, for the grader and the service."""
    try:
        text = data.decode("utf-8-sig")  # Windows editors start a file with a byte order mark
    except UnicodeDecodeError:
        raise Unreadable("the file is not UTF-8 text") from None
    if "\x00" in text:
        raise Unreadable("the file is binary, not a notebook or Python source")
    if suffix == ".py":
        return Extracted(cells=[Cell(index=1, source=strip_magics(text))])
    return _notebook_cells(text)


def strip_magics(source: str) -> str:
    """IPython magics and shell lines become ``pass`` at the same indentation, so line numbers
    and blocks stay as they were. A cell magic (``%%time``) skips the whole cell."""
    if source.lstrip().startswith("%%"):
        return ""
    # Every line ending Python accepts is one (a file saved on an old Mac has carriage returns only);
    # each is kept as it was, between the lines (the odd items of the split).
    parts = LINE_ENDING.split(source)
    for at in range(0, len(parts), 2):
        match = MAGIC_LINE.match(parts[at])
        if match:
            parts[at] = f"{match.group('indent')}pass"
    return "".join(parts)


def _notebook_cells(text: str) -> Extracted:
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"the notebook is not valid JSON ({exc.msg})") from None
    except RecursionError:
        # json's decoder counts its depth against the interpreter's recursion limit and stops cleanly.
        raise Unreadable(
            f"{NOT_A_NOTEBOOK}: it is nested too deeply (hundreds of levels of objects and lists)"
        ) from None
    except ValueError:  # an integer past Python's limit on digits; nothing Jupyter writes
        digits = sys.get_int_max_str_digits()
        raise Unreadable(f"{NOT_A_NOTEBOOK}: it holds a number of more than {plural(digits, 'digit')}") from None
    raw_cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(raw_cells, list):
        raise Unreadable("the notebook has no list of cells")
    version = notebook.get("nbformat")
    if type(version) is not int:
        raise Unreadable(f"{NOT_A_NOTEBOOK}: it has no nbformat version (every notebook Jupyter saves has one)")
    if version < 4:
        raise Unreadable(f"{NOT_A_NOTEBOOK}: it is in nbformat {version}; open it in Jupyter and save it again")
    if not isinstance(notebook.get("metadata", {}), dict):
        raise Unreadable(f"{NOT_A_NOTEBOOK}: its metadata is not an object")
    cells, answers, layout, public_tests, solution_ids = [], {}, [], [], []
    for index, cell in enumerate(raw_cells, start=1):
        kind, source, metadata = _checked_cell(index, cell)
        nbgrader = metadata.get("nbgrader")
        nbgrader = nbgrader if isinstance(nbgrader, dict) else {}
        grade_id = nbgrader.get("grade_id")
        layout.append((kind, source))
        if isinstance(grade_id, str) and nbgrader.get("solution"):
            solution_ids.append(grade_id)
        if kind == "code":
            cells.append(Cell(index=index, source=strip_magics(source)))
            if isinstance(grade_id, str) and grade_id and nbgrader.get("grade") and not nbgrader.get("solution"):
                public_tests.append((index, grade_id, source))
        elif isinstance(grade_id, str) and nbgrader.get("solution"):
            answers[grade_id] = source
    return Extracted(cells=cells, answers=answers, layout=layout, public_tests=public_tests, solution_ids=solution_ids)


def _checked_cell(index: int, cell: object) -> tuple[str, str, dict]:
    """A cell's kind ("code", or "markdown" for markdown and raw cells), source and metadata; raises
    Unreadable, naming the cell, where it is not what nbformat 4 says a cell is. Only what the grader
    reads is checked, with isinstance alone (nbformat's schema validation would cost a notebook
    milliseconds): a file that fails is one no Jupyter saved, and its student is told why."""
    if not isinstance(cell, dict):
        raise Unreadable(f"{NOT_A_NOTEBOOK}: cell {index} is not a cell (not a JSON object)")
    kind = cell.get("cell_type")
    if kind not in CELL_TYPES:
        raise Unreadable(f"{NOT_A_NOTEBOOK}: cell {index} has no cell_type of code, markdown or raw")
    source = cell.get("source")
    if isinstance(source, list):
        try:
            source = "".join(source)  # raises for an item that is not text, at no cost for those that are
        except TypeError:
            source = None
    if not isinstance(source, str):
        raise Unreadable(f"{NOT_A_NOTEBOOK}: cell {index}'s source is not text")
    metadata = cell.get("metadata", {})
    if not isinstance(metadata, dict):
        raise Unreadable(f"{NOT_A_NOTEBOOK}: cell {index}'s metadata is not an object")
    outputs = cell.get("outputs", ())
    if outputs and (
        not isinstance(outputs, list)
        or not all(isinstance(output, dict) and isinstance(output.get("output_type"), str) for output in outputs)
    ):
        raise Unreadable(f"{NOT_A_NOTEBOOK}: cell {index}'s outputs are not a list of outputs")
    return ("code" if kind == "code" else "markdown"), source, metadata


def heading_of(markdown: str) -> str | None:
    """A Markdown cell's first heading, compared loosely (no #, case or spacing), or None."""
    for line in markdown.splitlines():
        if line.lstrip().startswith("#"):
            return " ".join(line.strip().lstrip("#").split()).casefold() or None
        if line.strip():
            return None
    return None


def answers_after_heading(layout: list[tuple[str, str]], heading: str) -> dict[str, str]:
    """The Markdown cells after the cell headed ``heading``, up to the next heading or code cell,
    keyed by their cell number: a written answer found without nbgrader's metadata."""
    answers: dict[str, str] = {}
    inside = False
    for number, (kind, source) in enumerate(layout, start=1):
        if inside and (kind == "code" or heading_of(source) is not None):
            break
        if inside and source.strip():
            answers[f"cell {number}"] = source
        if kind == "markdown" and heading_of(source) == heading:
            inside = True
    return answers


def owner_of(file: Path, root: Path) -> Owner:
    """Whose ``file`` (found under ``root``) is, by the layouts in this module's docstring. In
    nbgrader's layout it is the folder right under the first ``submitted/`` (a student's own folders
    can hold another ``submitted/`` to no effect)."""
    above = root.absolute().parts
    below = file.relative_to(root).parts if file != root else ()
    parts = above + below
    position = None
    if "submitted" in above:
        position = len(above) - 1 - above[::-1].index("submitted")
    elif "submitted" in below:
        position = len(above) + below.index("submitted")
    if position is not None and position + 2 < len(parts):
        return Owner(student=from_filesystem(parts[position + 1]), handed_in_as=from_filesystem(file.name))
    moodle = MOODLE_FOLDER.match(from_filesystem(file.parent.name)) if file != root else None
    if moodle:
        return Owner(
            student=f"{moodle['name']}_{moodle['participant']}",
            handed_in_as=from_filesystem(file.name),
            lms="moodle",
            lms_id=moodle["participant"],
        )
    canvas = CANVAS_FILE.match(from_filesystem(file.name))
    if canvas:
        return Owner(
            student=f"{canvas['name']}_{canvas['user']}",
            handed_in_as=canvas["file"],
            lms="canvas",
            lms_id=canvas["user"],
        )
    return Owner(student=from_filesystem(file.stem), handed_in_as=from_filesystem(file.name))


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
