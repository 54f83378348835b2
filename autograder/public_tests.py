"""Public tests, for students checking their own work: fast, and without the sandbox.

``autograder check NOTEBOOK`` runs the notebook's code cells in a fresh process and reports the
public test cells (nbgrader's graded code cells) per question. Inside a notebook,
``check("softmax")`` runs that question's public test cells in the notebook's own namespace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from .assignment import question_of_cell
from .environment import read
from .errors import SubmissionError
from .sandbox.limits import Limits
from .sandbox.runners import UnsafeRunner
from .sandbox.session import Cell, StudentSession
from .submissions import strip_magics

TEST_SUFFIX = "_tests"


class PublicResult(BaseModel):
    question: str
    passed: bool
    message: str = ""


class TestCell(BaseModel):
    index: int
    question: str
    source: str


def check_notebook(path: Path, question: str | None = None, timeout: float = 120.0) -> list[PublicResult]:
    """Run the notebook and report its public test cells, per question (or one question)."""
    cells, tests = read_cells(path)
    if question is not None:
        tests = [test for test in tests if test.question == question]
        if not tests:
            raise SubmissionError(f"{path}: no public tests for question {question!r}")
    limits = Limits(call_timeout=timeout, submission_timeout=timeout)
    with StudentSession(UnsafeRunner(), cells, limits) as session:
        load = session.load()
    if load.failure:
        return [PublicResult(question=test.question, passed=False, message=load.failure) for test in tests]
    errors = {error.cell: error for error in load.cell_errors}
    results: dict[str, PublicResult] = {}
    for test in tests:
        error = errors.get(test.index)
        if test.question in results and not results[test.question].passed:
            continue
        if error is None:
            results[test.question] = PublicResult(question=test.question, passed=True)
        else:
            message = (
                error.message
                if error.type == "AssertionError" and error.message
                else f"{error.type}: {error.message}".rstrip(": ")
            )
            results[test.question] = PublicResult(question=test.question, passed=False, message=message)
    return list(results.values())


def read_cells(path: Path) -> tuple[list[Cell], list[TestCell]]:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        raw_cells = notebook["cells"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SubmissionError(f"{path}: not a readable notebook ({type(exc).__name__})") from None
    cells, graded = [], []
    for index, cell in enumerate(raw_cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        cells.append(Cell(index=index, source=strip_magics(source)))
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and meta.get("grade_id"):
            graded.append((index, meta["grade_id"], source))
    # The questions are the notebook's solution cells; each test cell belongs to one by the
    # assignment's one rule (without a manifest, a test cell's own grade_id less "_tests").
    questions = [
        cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        for cell in raw_cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]
    tests = [
        TestCell(
            index=index,
            question=question_of_cell(grade_id, [q for q in questions if q]) or grade_id.removesuffix(TEST_SUFFIX),
            source=source,
        )
        for index, grade_id, source in graded
    ]
    return cells, tests


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
