"""Public tests, for students checking their own work: fast, and without the sandbox (with the
caller's rights: the student's own tool, for their own machine; see ``unsafe_place``).

``autograder check NOTEBOOK`` runs the notebook's code cells in a fresh process and reports the
public test cells (nbgrader's graded code cells) per question. Inside a notebook,
``check("softmax")`` runs that question's public test cells in the notebook's own namespace.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

from pydantic import BaseModel

from .assignment import MANIFEST, question_of_cell
from .environment import read
from .errors import SubmissionError
from .sandbox.limits import Limits
from .sandbox.reported import CellError
from .sandbox.runners import Runner, UnsafeRunner
from .sandbox.session import Cell, StudentSession
from .submissions import Unreadable, extract, strip_magics

TEST_SUFFIX = "_tests"


class PublicResult(BaseModel):
    question: str
    passed: bool
    message: str = ""
    cell: int | None = None  # the public test cell (its 1-based index in the notebook)
    raised: CellError | None = None  # what failed it, where


class TestCell(BaseModel):
    index: int
    question: str
    source: str


def check_notebook(
    path: Path, question: str | None = None, timeout: float = 120.0, allow_unsandboxed: bool = False
) -> list[PublicResult]:
    """Run the notebook and report its public test cells, per question (or one question). Unsandboxed,
    so never where hidden tests are in reach of the notebook's folder (``hidden_tests_in_reach``),
    whoever calls it (the command, a cell's ``check``, the JupyterLab extension), unless
    ``allow_unsandboxed``: SubmissionError, one line."""
    if not allow_unsandboxed:
        found = hidden_tests_in_reach(path.resolve().parent)
        if found is not None:
            raise refusal(path, _holds(*found))
    cells, tests = read_cells(path)
    if question is not None:
        tests = [test for test in tests if test.question == question]
        if not tests:
            raise SubmissionError(f"{path}: no public tests for question {question!r}")
    limits = Limits(call_timeout=timeout, submission_timeout=timeout)
    results, _ = run_public_tests(cells, tests, UnsafeRunner(), limits)
    by_question: dict[str, PublicResult] = {}
    for result in results:  # a question's first failing test cell, else its pass
        if result.question not in by_question or by_question[result.question].passed:
            by_question[result.question] = result
    return list(by_question.values())


def run_public_tests(
    cells: list[Cell], tests: list[TestCell], runner: Runner, limits: Limits
) -> tuple[list[PublicResult], list[CellError]]:
    """Run the notebook's ``cells`` with ``runner``: each public test cell's result, in order (its
    ``cell``, and what it ``raised``), and the errors of the cells that are not tests."""
    with StudentSession(runner, cells, limits) as session:
        load = session.load()
    if load.failure:
        failed = [PublicResult(question=t.question, passed=False, message=load.failure, cell=t.index) for t in tests]
        return failed, []
    errors = {error.running: error for error in load.cell_errors}  # by the test cell that ran
    results = []
    for test in tests:
        error = errors.get(test.index)
        if error is None:
            results.append(PublicResult(question=test.question, passed=True, cell=test.index))
        else:
            message = (
                error.message
                if error.type == "AssertionError" and error.message
                else f"{error.type}: {error.message}".rstrip(": ")
            )
            results.append(
                PublicResult(question=test.question, passed=False, message=message, cell=test.index, raised=error)
            )
    indexes = {test.index for test in tests}
    return results, [error for error in load.cell_errors if error.running not in indexes]


def unsafe_place(notebook: Path) -> str | None:
    """Why running ``notebook``'s code here, unsandboxed, would be unsafe, or None. ``check`` runs a
    notebook with its caller's rights: it is the student's own tool for their own notebook, on their
    own machine. Not as root, and never where hidden tests are in reach (``hidden_tests_in_reach``):
    the notebook's code could read them, or anything else its caller may read."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "it would run the notebook's code as root"
    found = hidden_tests_in_reach(notebook.resolve().parent, Path.cwd().resolve())
    return None if found is None else _holds(*found)


def _holds(folder: Path, hidden: Path) -> str:
    return f"{folder} holds hidden tests ({hidden}) that the notebook's code could read"


def refusal(notebook: Path, why: str) -> SubmissionError:
    """The one line that says a notebook was not run unsandboxed, and why."""
    return SubmissionError(
        f"{notebook}: not run: {why}, and check runs it unsandboxed "
        "(--allow-unsandboxed runs it anyway; staff grade with `autograder grade`)"
    )


# How far below a place the search for hidden tests looks: a course's assignments sit two folders
# down (assignments/<name>/assignment.toml), a course in a student's folder one or two further.
REACH_DEPTH = 4
# Folders no course keeps its assignments in, passed over by the search (they can be large).
NOT_COURSE_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", ".venv"})


def hidden_tests_in_reach(*places: Path) -> tuple[Path, Path] | None:
    """The one rule of where an unsandboxed run may not happen: a (folder, hidden test) such that the
    folder holds hidden tests and is in reach of one of ``places`` (the notebook's folder, the
    folder it is started from), or None. In reach: the place's highest ancestor that is a course or
    an assignment (holding course.toml or assignment.toml), else the place itself, and every folder
    below it up to ``REACH_DEPTH`` down. So a notebook is refused from a course's root, from its
    ``assignments/``, from beside or under an assignment, and from a folder holding a course."""
    seen: set[Path] = set()
    for place in places:
        top = place
        for folder in (place, *place.parents):
            if (folder / "course.toml").is_file() or (folder / MANIFEST).is_file():
                top = folder
        if top in seen:
            continue
        seen.add(top)
        for manifest in _manifests_below(top):
            hidden = _hidden_test(manifest)
            if hidden is not None:
                return manifest.parent, hidden
    return None


def _manifests_below(top: Path) -> list[Path]:
    """Every assignment.toml in ``top`` and the folders below it, ``REACH_DEPTH`` down at most."""
    found: list[Path] = []
    for folder, names, files in os.walk(top):
        depth = len(Path(folder).relative_to(top).parts)
        if MANIFEST in files:
            found.append(Path(folder) / MANIFEST)
        names[:] = (
            []
            if depth >= REACH_DEPTH
            else sorted(name for name in names if not name.startswith(".") and name not in NOT_COURSE_FOLDERS)
        )
    return found


def _hidden_test(manifest: Path) -> Path | None:
    """A file of the hidden tests of the assignment ``manifest`` describes, or None."""
    try:
        hidden = tomllib.loads(manifest.read_text(encoding="utf-8")).get("hidden_tests", "hidden")
    except (OSError, ValueError):
        hidden = "hidden"
    folder = manifest.parent / str(hidden)
    try:
        return next(iter(sorted(path for path in folder.rglob("*") if path.is_file())), None)
    except OSError:
        return None


def read_cells(path: Path) -> tuple[list[Cell], list[TestCell]]:
    """The notebook's code cells and its public test cells, read by the grader's own reader: a file
    that ``grade`` refuses is refused here in the same words (SubmissionError, one line)."""
    if path.suffix != ".ipynb":
        raise SubmissionError(f"{path}: not a readable notebook (not an .ipynb file)")
    try:
        extracted = extract(path)
    except Unreadable as unreadable:
        raise SubmissionError(f"{path}: {unreadable}") from None
    # The questions are the notebook's solution cells; each test cell belongs to one by the
    # assignment's one rule (without a manifest, a test cell's own grade_id less "_tests").
    questions = [question for question in extracted.solution_ids if question]
    tests = [
        TestCell(
            index=index,
            question=question_of_cell(grade_id, questions) or grade_id.removesuffix(TEST_SUFFIX),
            source=source,
        )
        for index, grade_id, source in extracted.public_tests
    ]
    return extracted.cells, tests


def check(question: str, notebook: str | Path | None = None) -> bool:
    """Run the public tests of ``question`` in the calling notebook's namespace; print the verdict."""
    path = Path(notebook) if notebook else _this_notebook(question)
    _, tests = read_cells(path)
    tests = [test for test in tests if test.question == question]
    if not tests:
        print(f"no public tests for {question!r} in {path}")
        return False
    namespace = sys.modules["__main__"].__dict__
    for test in tests:
        try:
            exec(compile(strip_magics(test.source), f"<public tests for {question}>", "exec"), namespace)
        except AssertionError as failure:
            print(f"\u2717 {question}: {failure or 'a public test failed'}")
            return False
        except Exception as error:  # the student's code failed: say how
            print(f"\u2717 {question}: {type(error).__name__}: {error}")
            return False
    print(f"\u2713 {question}: public tests passed")
    return True


def _this_notebook(question: str) -> Path:
    """The notebook that is running: Jupyter names it in ``__session__`` or JPY_SESSION_NAME; else
    the one notebook in the current folder that has public tests for ``question``."""
    main = sys.modules["__main__"].__dict__
    for candidate in (main.get("__session__"), read("JPY_SESSION_NAME")):
        if candidate and Path(candidate).suffix == ".ipynb" and Path(candidate).is_file():
            return Path(candidate)
    matches = []
    for path in sorted(Path.cwd().glob("*.ipynb")):
        try:
            if any(test.question == question for test in read_cells(path)[1]):
                matches.append(path)
        except SubmissionError:
            continue
    if len(matches) != 1:
        found = "none" if not matches else ", ".join(p.name for p in matches)
        raise SubmissionError(
            f"cannot tell which notebook to check for {question!r} (found: {found}); pass notebook=..."
        )
    return matches[0]
