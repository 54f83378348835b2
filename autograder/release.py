"""Releasing an assignment: the student's notebook made from the instructor's source notebook.

The transforms are nbgrader's own preprocessors, used as a library in a fixed order:
ClearSolutions (solution regions become stubs), ClearHiddenTests (hidden test regions go),
ClearOutput, LockCells; math is written with the delimiters Jupyter renders. Before writing, the result is checked: no solution or hidden-test text
may survive anywhere in the released files.

An assignment with parameters (own_values.py) is released as a template, its parameters cell as the
instructor wrote it; ``release(..., student=ID)`` (``autograder fetch``) writes that student's own
copy, the values drawn for them in that cell.
"""

from __future__ import annotations

import copy
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

import nbformat

from course.wording import plural

from .assignment import ANSWER_STUB, Assignment
from .authoring.math import jupyter_math
from .errors import ReleaseError
from .own_values import lock, own_notebook, parameters_cell

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def release(assignment: Assignment, out: Path, student: str | None = None, overwrite: bool = True) -> Path:
    """Write the student version of the assignment's notebook into ``out``; returns its path. With
    ``student``, that student's own copy (their values in the parameters cell); a notebook there
    already is kept (ReleaseError) unless ``overwrite``."""
    (path,) = release_copies(assignment, [(out, student)], overwrite)
    return path


def release_copies(
    assignment: Assignment, copies: Sequence[tuple[Path, str | None]], overwrite: bool = True
) -> list[Path]:
    """The released notebook written into each folder of ``copies``, the template (student None) or
    that student's own copy; nbgrader's transform runs once for all. Nothing is written when one
    cannot be (a notebook there already, without ``overwrite``; a copy that would leak a secret)."""
    source = read_source_notebook(assignment)
    check_source(assignment, source)
    targets = [folder / assignment.released_notebook for folder, _ in copies]
    kept = [target for target in targets if target.exists()] if not overwrite else []
    if kept:
        raise ReleaseError(f"{kept[0]} exists already (the student's work?): kept; move it away, or overwrite it")
    template = _transformed(assignment, source)
    hidden_lines = secret_lines(assignment, source)
    texts = []
    for _, student in copies:
        notebook = template
        if student is not None and assignment.parameters:
            notebook = nbformat.from_dict(own_notebook(assignment, copy.deepcopy(template), student))
        nbformat.validate(notebook)
        text = nbformat.writes(notebook)
        leaked = sorted(line for line in hidden_lines if line in text)
        if leaked:
            raise ReleaseError(f"{assignment.notebook_path}: the released notebook would still contain {leaked[0]!r}")
        texts.append(text)
    for target, text in zip(targets, texts, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        # Mode 0666 less the umask, the user's normal permissions (a temporary file's 0600 would stay).
        temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        with os.fdopen(
            os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "w", encoding="utf-8"
        ) as handle:
            handle.write(text)
        os.replace(temporary, target)
    return targets


def student_folder(out: Path, student: str) -> Path:
    """``out/<student>``, where one of several students' notebooks goes; ReleaseError for an id that
    is no plain folder name (a path, a hidden name)."""
    if (
        not student.strip()
        or student.startswith(".")
        or any(c in student for c in "/\\\0")
        or student != student.strip()
    ):
        raise ReleaseError(f"--student {student!r}: not a plain folder name, to write that student's notebook in")
    return out / student


def _transformed(assignment: Assignment, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """nbgrader's transforms of the source, in their order; the parameters cell locked."""
    # nbgrader takes about 3 s to import: only releasing pays for it.
    from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions, LockCells

    notebook = nbformat.from_dict(source)
    for cell in notebook.cells:  # \( \) and \[ \] show as text in Jupyter: write what it renders
        if cell.cell_type == "markdown":
            cell.source = jupyter_math(cell.source)
    resources: dict = {}
    for preprocessor in (
        ClearSolutions(enforce_metadata=True, text_stub=ANSWER_STUB),
        ClearHiddenTests(enforce_metadata=True),
        ClearOutput(),
        LockCells(),
    ):
        notebook, resources = preprocessor.preprocess(notebook, resources)
    if assignment.parameters:
        lock(notebook.cells[parameters_cell(assignment, notebook, str(assignment.notebook_path))])
    return notebook


def read_source_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    path = assignment.notebook_path
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path}: cannot be read as a notebook ({exc})") from None


def check_source(assignment: Assignment, notebook: nbformat.NotebookNode) -> None:
    """The source follows nbgrader's format and agrees with the manifest, or ReleaseError says where."""
    path = assignment.notebook_path
    seen: dict[str, int] = {}
    points: dict[str, float] = {}
    for number, cell in enumerate(notebook.cells, start=1):
        meta = cell.get("metadata", {}).get("nbgrader")
        if not meta:
            continue
        grade_id = meta.get("grade_id")
        if not grade_id:
            raise ReleaseError(f"{path}: cell {number}: nbgrader metadata without a grade_id")
        if grade_id in seen:
            raise ReleaseError(f"{path}: cell {number}: grade_id {grade_id!r} is already used by cell {seen[grade_id]}")
        seen[grade_id] = number
        source = cell.source
        if (
            meta.get("solution")
            and cell.cell_type == "code"
            and (BEGIN_SOLUTION not in source or END_SOLUTION not in source)
        ):
            raise ReleaseError(
                f"{path}: cell {number} ({grade_id}): a solution cell needs {BEGIN_SOLUTION} and {END_SOLUTION}"
            )
        if BEGIN_HIDDEN in source or END_HIDDEN in source:
            # One rule: hidden tests are graded only from hidden/, in the grader's own process.
            raise ReleaseError(
                f"{path}: cell {number} ({grade_id}): holds {BEGIN_HIDDEN}; hidden tests belong in "
                f"{assignment.hidden_tests}/test_*.py, which the grader runs (a notebook's hidden regions are never graded)"
            )
        if meta.get("grade"):
            question = _question_of(grade_id, assignment)
            points[question] = points.get(question, 0.0) + float(meta.get("points", 0))
    for graded in assignment.questions:
        if points.get(graded.id, 0.0) != graded.points:
            raise ReleaseError(
                f"{path}: question {graded.id!r} is worth {plural(graded.points, 'point')} in assignment.toml "
                f"but its graded cells hold {points.get(graded.id, 0.0):g}"
            )


def secret_lines(assignment: Assignment, notebook: nbformat.NotebookNode) -> set[str]:
    """Lines that must never reach a student: solution and hidden-test regions of the source, and
    every line of the hidden suite, less the lines the notebook shows students anyway (a solution's
    ``return out, weights`` that the stub around it also holds, say)."""
    lines: set[str] = set()
    shown: set[str] = set()
    for cell in notebook.cells:
        lines |= _regions(cell.source, BEGIN_SOLUTION, END_SOLUTION)
        lines |= _regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)
        shown |= _outside_regions(cell.source)
    for test_file in assignment.hidden_path.rglob("*.py"):
        lines |= {line.strip() for line in test_file.read_text(encoding="utf-8").splitlines()}
    return {line for line in lines - shown if _distinctive(line)}


def _regions(source: str, begin: str, end: str) -> set[str]:
    found, inside = set(), False
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            found.add(line.strip())
    return found


def _outside_regions(source: str) -> set[str]:
    shown, inside = set(), False
    for line in source.splitlines():
        if BEGIN_SOLUTION in line or BEGIN_HIDDEN in line:
            inside = True
        elif END_SOLUTION in line or END_HIDDEN in line:
            inside = False
        elif not inside:
            shown.add(line.strip())
    return shown


def _distinctive(line: str) -> bool:
    """Long enough, and not a line any notebook could hold (an import, a comment)."""
    return len(line) >= 12 and not line.startswith(("import ", "from ", "#"))


def _question_of(grade_id: str, assignment: Assignment) -> str:
    question = assignment.question_of_cell(grade_id)
    if question is not None:
        return question.id
    raise ReleaseError(
        f"{assignment.notebook_path}: graded cell {grade_id!r} belongs to no question of assignment.toml"
    )
