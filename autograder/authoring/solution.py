"""The solution against its own public tests: ``assign``, ``verify`` and ``check`` on a master notebook.

A solution that fails its public test (a ``max_pool1d`` returning the minimum) passes everything
that compares with the reference, since the reference is the solution; a correct student then fails
the hidden tests. So the source notebook, solutions in place, is run with its public test cells,
and each one that fails is named by the master notebook's cell (``Master.where``) when the notebook
was written from one, else by the source notebook's own cell.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat

from ..public_tests import PublicResult, read_cells, run_public_tests
from ..sandbox.limits import Limits
from ..sandbox.runners import Runner
from .master import Master, describe
from .origin import cell_place

# A solution is the instructor's: as long as check gives a student's notebook.
SOLUTION_LIMITS = Limits(call_timeout=120.0, submission_timeout=120.0)


def solution_failures(
    notebook: Path, runner: Runner, master: Master | None = None, limits: Limits = SOLUTION_LIMITS
) -> list[PublicResult]:
    """Each public test cell of ``notebook`` (a source notebook, solutions in place) run with
    ``runner``: its result, its ``message`` naming the cell (the master's, when ``master`` wrote the
    notebook) and, for a failure, what failed and where. A cell that is not a test and raises is a
    failure too (of question "solution")."""
    cells, tests = read_cells(notebook)
    results, others = run_public_tests(cells, tests, runner, limits)
    place = _places(notebook, master)
    named = []
    for result in results:
        raised = result.raised
        here = raised is not None and raised.cell == result.cell
        where = place(result.cell or 0, raised.line if here and raised is not None else None)
        if result.passed:
            named.append(result.model_copy(update={"message": f"{where}: passes"}))
            continue
        elsewhere = ""
        if raised is not None and not here:
            path = master.path if master is not None else notebook
            elsewhere = f", raised at {place(raised.cell, raised.line).removeprefix(f'{path}: ')}"
        message = (
            f"{where}: the solution fails this public test (question {result.question}{elsewhere}): {result.message}"
        )
        named.append(result.model_copy(update={"message": message}))
    for error in others:
        message = f"{place(error.cell, error.line)}: the solution raises {error.type}: {error.message}".rstrip(": ")
        named.append(PublicResult(question="solution", passed=False, message=message, cell=error.cell, raised=error))
    return named


def _places(notebook: Path, master: Master | None) -> Callable[[int, int | None], str]:
    """A function naming cell ``index`` (1-based) of ``notebook``, and a line in it: the master's
    cell when the notebook has the master's student cells (one for one, in order)."""
    cells = nbformat.read(notebook, as_version=4).cells
    if master is not None and len(master.cells) == len(cells):
        numbers = [cell.number for cell in master.cells]
        return lambda index, line: (
            master.where(numbers[index - 1], line) if 0 < index <= len(numbers) else str(master.path)
        )

    def own(index: int, line: int | None) -> str:
        if not 0 < index <= len(cells):
            return str(notebook)
        source = cells[index - 1].source
        return cell_place(notebook, index, describe(source if isinstance(source, str) else "".join(source)), line)

    return own
