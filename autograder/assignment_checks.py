"""An assignment folder checked before any student meets it (``course validate``): every problem one
line naming the file and the cell or line.

The manifest's syntax and fields; in the source notebook, graded cells that belong to no question,
repeated grade_ids, points that disagree with the manifest, math Jupyter will not render (a warning);
in the hidden suite, a test marked with a question the manifest lacks (or with none); in each
reference, a function the hidden tests take from it (``reference.name``) that it does not define. Files are read, never run.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from course.errors import Problem
from course.wording import plural

from .assignment import MANIFEST, Assignment, load_assignment
from .authoring.math import unrendered_math
from .errors import AssignmentError


def assignments_problems(paths: list[Path], course: Path | None = None) -> tuple[list[Path], list[Problem]]:
    """The assignment folders among ``paths`` (with none given, every assignment of the course) and
    their problems."""
    from course.folder import find_course

    folders = [path for path in paths if (path / MANIFEST).is_file()]
    if not paths:
        folders = list(find_course(course).assignment_folders.values())
    return folders, [problem for folder in folders for problem in assignment_problems(folder)]


def assignment_problems(folder: Path) -> list[Problem]:
    """Every problem found in the assignment folder ``folder``, in file order."""
    try:
        assignment = load_assignment(folder)
    except AssignmentError as exc:
        text = str(exc)
        file, _, what = text.partition(": ")
        place, _, rest = what.partition(": ")
        if file.endswith(MANIFEST) and rest:
            return [Problem(file=file, where=place, what=rest)]
        return [Problem(file=str(folder / MANIFEST), where="manifest", what=text)]
    used: dict[str, tuple[Path, int]] = {}
    hidden = _hidden_problems(assignment, used)
    return [*_notebook_problems(assignment), *hidden, *_reference_problems(assignment, used)]


def _notebook_problems(assignment: Assignment) -> list[Problem]:
    path = assignment.notebook_path
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [Problem(file=str(path), where="notebook", what=f"cannot be read as a notebook ({exc})")]
    problems = []
    seen: dict[str, int] = {}
    points: dict[str, float] = {}
    for number, cell in enumerate(cells, start=1):
        where = f"cell {number}"
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            for formula in unrendered_math(source):
                problems.append(
                    Problem(
                        file=str(path),
                        where=where,
                        what=f"Jupyter does not render {formula[:40]!r}: write $...$ or $$...$$",
                        severity="warning",
                    )
                )
        meta: dict[str, Any] = (cell.get("metadata") or {}).get("nbgrader") or {}
        grade_id = meta.get("grade_id")
        if not meta or not isinstance(grade_id, str):
            continue
        if grade_id in seen:
            problems.append(
                Problem(file=str(path), where=where, what=f"grade_id {grade_id!r} is already cell {seen[grade_id]}'s")
            )
        seen.setdefault(grade_id, number)
        if not meta.get("grade"):
            continue
        question = assignment.question_of_cell(grade_id)
        if question is None:
            problems.append(
                Problem(
                    file=str(path),
                    where=f"{where} ({grade_id})",
                    what="a graded cell that belongs to no question: its grade_id begins with no question's id "
                    f"({', '.join(q.id for q in assignment.questions)})",
                )
            )
            continue
        points[question.id] = points.get(question.id, 0.0) + float(meta.get("points", 0) or 0)
    for question in assignment.questions:
        held = points.get(question.id, 0.0)
        if held != question.points:
            problems.append(
                Problem(
                    file=str(assignment.folder / MANIFEST),
                    where=f"question {question.id}",
                    what=f"worth {plural(question.points, 'point')} here, but its graded "
                    f"cells in {path.name} hold {held:g}",
                )
            )
    return problems


def _hidden_problems(assignment: Assignment, used: dict[str, tuple[Path, int]]) -> list[Problem]:
    """The hidden suite's problems; fills ``used`` with what its tests take from ``reference``."""
    ids = {question.id for question in assignment.questions}
    problems = []
    for path in sorted(assignment.hidden_path.rglob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            line = getattr(exc, "lineno", None)
            problems.append(Problem(file=str(path), where=f"line {line or 1}", what=f"cannot be read ({exc})"))
            continue
        module_mark = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "reference":
                used.setdefault(node.attr, (path, node.lineno))
            if isinstance(node, ast.Call) and _is_question_mark(node.func):
                module_mark = True
                named = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                if named not in ids:
                    problems.append(
                        Problem(
                            file=str(path),
                            where=f"line {node.lineno}",
                            what=f"marked with question {named!r}, which {MANIFEST} lacks "
                            f"(its questions: {', '.join(sorted(ids))})",
                        )
                    )
        if not module_mark and any(isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in tree.body):
            problems.append(
                Problem(
                    file=str(path),
                    where="line 1",
                    what='no question marks its tests: add pytestmark = pytest.mark.question("<id>")',
                )
            )
    return problems


def _is_question_mark(func: ast.expr) -> bool:
    """``pytest.mark.question`` (or ``mark.question``)."""
    return isinstance(func, ast.Attribute) and func.attr == "question" and _attribute_tail(func.value) == "mark"


def _attribute_tail(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _reference_problems(assignment: Assignment, used: dict[str, tuple[Path, int]]) -> list[Problem]:
    """What a hidden test takes from the ``reference`` fixture that a reference does not define."""
    problems = []
    for name, path in assignment.reference_paths.items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            problems.append(
                Problem(file=str(assignment.folder / MANIFEST), where="references", what=f"{name}: no file {path}")
            )
            continue
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            problems.append(Problem(file=str(path), where="line 1", what=f"cannot be read ({exc})"))
            continue
        defined = _top_level_names(tree)
        for function, (test_file, line) in used.items():
            if function not in defined:
                problems.append(
                    Problem(
                        file=str(path),
                        where=f"reference {name}",
                        what=f"defines no {function}, which {test_file.name} line {line} calls (reference.{function})",
                    )
                )
    return problems


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
