"""Reading a master notebook: one notebook in which an instructor writes a whole assignment.

The markup (docs/reference/master-notebook.md) is a first line an instructor types in JupyterLab,
each followed by TOML where it takes settings:

    raw cell       # ASSIGNMENT           the manifest's top-level settings (name, title, limits, ...)
    raw cell       # BEGIN QUESTION       a question's settings (id, points, functions, uses, rubric)
    raw cell       # END QUESTION         optional: what follows belongs to no question
    code cell      ### BEGIN SOLUTION ... ### END SOLUTION   a solution (or nbgrader's solution metadata)
    markdown cell  <!-- SOLUTION -->      a written answer's model answer
    code cell      # PUBLIC TESTS         tests the student sees and runs (or nbgrader's grade metadata)
    code cell      # HIDDEN TESTS         pytest functions of the question's hidden suite (or a raw cell)
    raw cell       # KNOWN WRONG / # KNOWN CORRECT   a known version of some functions, with its settings
                                          as ``# key = value`` lines (file, mistake, verdicts, feedback);
                                          a raw cell, so running the notebook keeps the solution (a code
                                          cell is taken too)

Cells carrying nbgrader's own metadata (``nbgrader: {grade, solution, locked, grade_id, points}``, as
its Create Assignment toolbar writes it, ``cell-<hex>`` ids included) are taken as they are: the
metadata says what the markers would. ``read_master`` returns a ``Master``; nothing is written here.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import nbformat
from pydantic import BaseModel

from ..errors import AssignmentError
from ..release import BEGIN_SOLUTION, END_SOLUTION
from .origin import MASTER_MARKS, cell_place

ASSIGNMENT_MARK, BEGIN_QUESTION, HIDDEN_TESTS = MASTER_MARKS
END_QUESTION = "# END QUESTION"
PUBLIC_TESTS = "# PUBLIC TESTS"
KNOWN_WRONG = "# KNOWN WRONG"
KNOWN_CORRECT = "# KNOWN CORRECT"
WRITTEN_SOLUTION = "<!-- SOLUTION -->"
# The ids nbgrader's Create Assignment toolbar gives cells: they name no question, so assign replaces them.
NBGRADER_CELL_ID = re.compile(r"^cell-[0-9a-f]+$")
ID = re.compile(r"^[a-z][a-z0-9_]*$")

CellRole = Literal["plain", "solution", "written_solution", "public_tests"]


class StudentCell(BaseModel):
    """A cell of the student's notebook: where it was in the master, its question, and its role."""

    number: int  # 1-based, in the master
    question: str | None
    role: CellRole
    cell: dict[str, Any]


class KnownVersion(BaseModel):
    """A known version of some functions, graded by ``verify`` with the solution's other functions."""

    number: int
    question: str | None
    correct: bool
    file: str
    mistake: str | None = None
    verdicts: dict[str, str] = {}
    feedback: dict[str, Any] = {}  # verdicts.toml's ["file".feedback] rules, by question
    code: str
    defines: list[str]


class Master(BaseModel):
    path: Path
    settings: dict[str, Any]
    settings_cell: int
    questions: list[dict[str, Any]]  # each question's settings, in order, with "cell": its number
    cells: list[StudentCell]
    hidden: dict[str, list[tuple[int, str]]]  # question id -> its hidden test cells (number, code)
    known: list[KnownVersion]
    # Every cell's first line (``describe``), by number: what a message names a cell by; its source.
    firsts: dict[int, str] = {}
    sources: dict[int, str] = {}
    # For a cell whose code is taken after its marker (# HIDDEN TESTS, # KNOWN ...): the line of the
    # cell (1-based) that the code's first line is.
    code_starts: dict[int, int] = {}

    @property
    def name(self) -> str:
        return str(self.settings.get("name", ""))

    def where(self, number: int, line: int | None = None) -> str:
        """The place of cell ``number`` (and ``line`` in it) as every message names it: the master's
        path, the cell's number and first line."""
        return cell_place(self.path, number, self.firsts.get(number, ""), line)

    def line_of(self, number: int, pattern: str, nth: int = 1) -> int | None:
        """The ``nth`` line of cell ``number`` (1-based) that ``pattern`` (a regular expression) matches."""
        for index, line in enumerate(self.sources.get(number, "").splitlines(), start=1):
            if re.search(pattern, line):
                nth -= 1
                if nth == 0:
                    return index
        return None

    def solution_code(self) -> str:
        """The program a correct student writes: every code cell the student receives outside the
        questions and every solution cell, in order, the markers' lines left out."""
        parts = []
        for cell in self.cells:
            if cell.cell["cell_type"] != "code" or cell.role == "public_tests":
                continue
            if cell.role == "plain" and cell.question is not None:
                continue  # a demonstration inside a question: the student's notebook only
            parts.append(_without_markers(_source(cell.cell)))
        return "\n\n\n".join(part.strip("\n") for part in parts if part.strip()) + "\n"


MARKERS = frozenset(
    {ASSIGNMENT_MARK, BEGIN_QUESTION, END_QUESTION, PUBLIC_TESTS, HIDDEN_TESTS, KNOWN_WRONG, KNOWN_CORRECT}
    | {WRITTEN_SOLUTION, BEGIN_SOLUTION}
)
FIRST_LINE_CHARS = 60


def describe(source: str) -> str:
    """A cell's first line, as a message names the cell: after a marker, the line that follows it too
    (``# BEGIN QUESTION: id = "conv"``), at most ``FIRST_LINE_CHARS`` characters."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    if not lines:
        return "empty"
    text = f"{lines[0]}: {lines[1]}" if lines[0] in MARKERS and len(lines) > 1 else lines[0]
    return text if len(text) <= FIRST_LINE_CHARS else text[: FIRST_LINE_CHARS - 3] + "..."


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _without_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _after_first_line(source: str) -> str:
    lines = source.splitlines()
    for index, line in enumerate(lines):
        if line.strip():
            return "\n".join(lines[index + 1 :])
    return ""


def _code_start(source: str) -> int:
    """The line of a cell (1-based) that ``_after_first_line``'s first line is."""
    for index, line in enumerate(source.splitlines()):
        if line.strip():
            return index + 2
    return 1


def _toml(text: str, where: str, start: int = 2) -> dict[str, Any]:
    """``text``, the TOML of a cell from its line ``start``; an error names the cell's own line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        said = re.sub(r"\(at line (\d+)", lambda m: f"(at line {int(m.group(1)) + start - 1} of the cell", str(exc))
        raise AssignmentError(f"{where}: {said}") from None


def _known_header(body: str, where: str, start: int) -> tuple[dict[str, Any], str]:
    """A KNOWN cell's ``# key = value`` lines (TOML once the ``#`` goes) and the code after them."""
    lines = body.splitlines()
    header = []
    index = 0
    while index < len(lines) and lines[index].lstrip().startswith("#"):
        header.append(lines[index].lstrip()[1:].strip())
        index += 1
    return _toml("\n".join(header), where, start), "\n".join(lines[index:]).strip("\n") + "\n"


def defined_functions(code: str) -> list[str]:
    """The functions a cell defines at its top level (none when it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def read_master(path: Path) -> Master:
    """The master notebook at ``path``, its cells sorted by role; AssignmentError names the cell of
    the first problem found."""
    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise AssignmentError(f"{path}: cannot be read as a notebook ({exc})") from None
    settings: dict[str, Any] | None = None
    settings_cell = 0
    questions: list[dict[str, Any]] = []
    cells: list[StudentCell] = []
    hidden: dict[str, list[tuple[int, str]]] = {}
    known: list[KnownVersion] = []
    firsts: dict[int, str] = {}
    sources: dict[int, str] = {}
    code_starts: dict[int, int] = {}
    current: str | None = None
    for number, cell in enumerate(notebook.cells, start=1):
        source = _source(cell)
        first = _first_line(source)
        firsts[number], sources[number] = describe(source), source
        where = cell_place(path, number, firsts[number])
        nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.cell_type == "raw" and first == ASSIGNMENT_MARK:
            if settings is not None:
                raise AssignmentError(f"{where}: a second {ASSIGNMENT_MARK} cell (the first is cell {settings_cell})")
            settings, settings_cell = _toml(_after_first_line(source), where, _code_start(source)), number
        elif cell.cell_type == "raw" and first == BEGIN_QUESTION:
            question = _toml(_after_first_line(source), where, _code_start(source))
            question_id = question.get("id")
            if not isinstance(question_id, str) or not ID.match(question_id):
                raise AssignmentError(
                    f'{where}: a question needs id = "..." (lowercase letters, digits and _, a letter first)'
                )
            if any(q["id"] == question_id for q in questions):
                raise AssignmentError(f"{where}: question id {question_id!r} is already used")
            questions.append({**question, "cell": number})
            current = question_id
        elif cell.cell_type == "raw" and first == END_QUESTION:
            current = None
        elif cell.cell_type in ("code", "raw") and first == HIDDEN_TESTS:
            if current is None:
                raise AssignmentError(f"{where}: {HIDDEN_TESTS} outside a question (after its {BEGIN_QUESTION} cell)")
            hidden.setdefault(current, []).append((number, _after_first_line(source)))
            code_starts[number] = _code_start(source)
        elif cell.cell_type in ("code", "raw") and first in (KNOWN_WRONG, KNOWN_CORRECT):
            header, code = _known_header(_after_first_line(source), where, _code_start(source))
            code_starts[number] = _code_start(source)
            known.append(_known_version(header, code, number, current, first == KNOWN_CORRECT, where))
        else:
            cells.append(
                StudentCell(number=number, question=current, role=_role(cell, source, first, nbgrader), cell=cell)
            )
    if settings is None:  # nbgrader's notebook as it is: named after its file
        name = re.sub(r"[^a-z0-9]+", "-", path.name.removesuffix(".ipynb").removesuffix(".master").lower()).strip("-")
        settings, settings_cell = {"name": name}, 1
    if not questions:
        questions = _nbgrader_questions(cells, hidden, path)
    if not questions:
        raise AssignmentError(
            f'{path}: no question (a raw cell: {BEGIN_QUESTION}, then id = "..." and points = N; or nbgrader\'s '
            "graded cells)"
        )
    return Master(
        path=path,
        settings=settings,
        settings_cell=settings_cell,
        questions=questions,
        cells=cells,
        hidden=hidden,
        known=known,
        firsts=firsts,
        sources=sources,
        code_starts=code_starts,
    )


def _nbgrader_questions(
    cells: list[StudentCell], hidden: dict[str, list[tuple[int, str]]], path: Path
) -> list[dict[str, Any]]:
    """Questions found in a notebook with nbgrader's metadata and none of the markers, as nbgrader
    grades it: each graded cell closes a question made of the solution and Markdown cells since the
    last one; its id is its grade_id (else the first function its solutions define, else
    ``question_N``). A graded test cell's code, hidden regions included, becomes the question's hidden
    test, run on the student's functions (``autograder.testing.run_notebook_tests``)."""
    questions: list[dict[str, Any]] = []
    pending: list[int] = []  # indexes in ``cells`` of the question being gathered
    imports = []
    for index, cell in enumerate(cells):
        kind = cell.cell["cell_type"]
        if cell.role == "plain" and kind == "code":
            imports.append(_imports(_source(cell.cell)))  # what the tests may need, without running the demos
        if cell.role == "solution" or (cell.role == "plain" and kind == "markdown"):
            pending.append(index)
        if cell.role not in ("public_tests", "written_solution"):
            continue
        meta = (cell.cell.get("metadata") or {}).get("nbgrader") or {}
        solutions = [cells[i] for i in pending if cells[i].role == "solution"]
        functions = [name for c in solutions for name in defined_functions(_source(c.cell))]
        taken = {q["id"] for q in questions}
        candidates = [
            str(meta.get("grade_id", "")).removesuffix("_tests"),
            *functions,
            f"question_{len(questions) + 1}",
        ]
        question_id = next(c for c in candidates if ID.match(c) and not NBGRADER_CELL_ID.match(c) and c not in taken)
        questions.append({"id": question_id, "cell": cell.number})
        for member in [*pending, index]:
            cells[member] = cells[member].model_copy(update={"question": question_id})
        pending = []
        if cell.role == "public_tests" and functions:
            hidden[question_id] = [(cell.number, _notebook_tests_module(imports, _source(cell.cell), functions))]
    return questions


def _notebook_tests_module(imports: list[str], tests: str, functions: list[str]) -> str:
    setup = "\n".join(line for line in imports if line)
    return (
        "from autograder.testing import run_notebook_tests\n\n"
        f"SETUP = {setup!r}\nTESTS = {tests!r}\n\n\n"
        "def test_the_notebooks_tests_pass(student):\n"
        f'    """The notebook\'s tests of {", ".join(functions)} pass."""\n'
        f"    run_notebook_tests(student, SETUP, TESTS, {functions!r})\n"
    )


def _imports(code: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def _role(cell: Any, source: str, first: str, nbgrader: dict[str, Any]) -> CellRole:
    if cell.cell_type == "markdown":
        if first == WRITTEN_SOLUTION or (nbgrader.get("solution") and nbgrader.get("grade")):
            return "written_solution"
        return "plain"
    if cell.cell_type != "code":
        return "plain"
    if BEGIN_SOLUTION in source or nbgrader.get("solution"):
        return "solution"
    if first == PUBLIC_TESTS or nbgrader.get("grade"):
        return "public_tests"
    return "plain"


def _known_version(
    header: dict[str, Any], code: str, number: int, question: str | None, correct: bool, where: str
) -> KnownVersion:
    unknown = sorted(set(header) - {"file", "mistake", "verdicts", "feedback"})
    if unknown:
        raise AssignmentError(f"{where}: unknown setting {unknown[0]!r} (file, mistake, verdicts, feedback)")
    file = header.get("file") or f"{question or 'known'}_{number}"
    file = str(file).removesuffix(".py")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", file) or file == "correct":
        raise AssignmentError(
            f"{where}: file = {file!r}: a file name of lowercase letters, digits, _ and - (not correct)"
        )
    mistake = header.get("mistake")
    if not correct and (not isinstance(mistake, str) or not mistake.strip()):
        raise AssignmentError(f'{where}: a known wrong version needs mistake = "the sentence that names its mistake"')
    verdicts = header.get("verdicts", {})
    if not isinstance(verdicts, dict) or not all(isinstance(v, str) for v in verdicts.values()):
        raise AssignmentError(f'{where}: verdicts = {{ question = "verdict", ... }}')
    defines = defined_functions(code)
    if not defines:
        raise AssignmentError(f"{where}: a known version defines no function")
    return KnownVersion(
        number=number,
        question=question,
        correct=correct,
        file=f"{file}.py",
        mistake=mistake.strip() if isinstance(mistake, str) else None,
        verdicts=verdicts,
        feedback=header.get("feedback", {}),
        code=code,
        defines=defines,
    )
