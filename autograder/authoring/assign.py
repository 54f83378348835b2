"""``autograder assign``: a master notebook written out as the assignment folder the grader reads.

From the master (``master.read_master``) it writes, into the assignment's folder: ``assignment.toml``,
``source/<name>.ipynb`` (nbgrader's format: the master's cells less the instructor's own, with
nbgrader metadata on every cell of a question), ``hidden/test_<question>.py``, ``reference.py`` (the
solution itself, unless the master names references), ``known/correct.py`` (the solution),
``known/<file>.py`` for each known version (the solution with that version's functions) and
``known/verdicts.toml``; and lists the folder in ``course.toml``.

What it wrote is recorded, with each file's SHA-256, in ``.assign-record.json``: a later run
rewrites only files still as it wrote them, and refuses, naming each file, when one was edited by
hand (or was never its own), before anything is written.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import os
import re
import symtable
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import nbformat
import tomli_w
from pydantic import BaseModel, ValidationError

from course.wording import plural

from ..assignment import MANIFEST, Assignment, question_of_cell
from ..errors import AssignmentError
from ..release import BEGIN_HIDDEN, END_HIDDEN
from ..reports.model import Status
from .master import NBGRADER_CELL_ID, WRITTEN_SOLUTION, Master, StudentCell, defined_functions, read_master
from .math import jupyter_math
from .origin import RECORD, marked_cell, origin_mark

if TYPE_CHECKING:
    from ..public_tests import PublicResult
    from ..sandbox.runners import Runner

REFERENCE_FILE = "reference.py"
# The reference's NAME when the solution is the reference: what reports say they were graded against.
SOLUTION_REFERENCE = "solution"
QUESTION_KEYS = {"id", "title", "points", "functions", "uses", "manual", "rubric", "mutants", "visibility", "checks"}
SETTINGS_NOT_ALLOWED = {"notebook", "hidden_tests", "questions", "folder"}
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class AssignRefused(AssignmentError):
    """Why nothing is written, one line each: files the run would overwrite that were edited by hand
    (or never written by it), or the public tests the solution fails."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


class Assigned(BaseModel):
    """What a run did: the folder, the files written, those already as they should be, removed ones."""

    folder: Path
    written: list[str]
    unchanged: list[str]
    removed: list[str]
    registered: Path | None  # the course.toml that now lists the folder, when this run added it
    warnings: list[str] = []  # what was written but deserves a look (a saved output left out), one line each


def default_folder(master: Path, name: str) -> Path:
    """The master's own folder when it has the assignment's name, else a folder of that name beside it."""
    return master.parent if master.parent.name == name else master.parent / name


def assign(
    master_path: Path, out: Path | None = None, course_file: Path | None = None, force: bool = False
) -> Assigned:
    """Write the assignment folder of the master notebook at ``master_path`` (into ``out``, else
    ``default_folder``), and list it in ``course_file`` (a course.toml) when given."""
    master = read_master(master_path)
    name = master.name
    if not NAME.match(name):
        raise AssignmentError(
            f"{master.where(master.settings_cell)}: name = {name!r}: lowercase words joined by -, e.g. "
            '"recurrent-networks"'
        )
    folder = (out or default_folder(master_path, name)).resolve()
    files = assignment_files(master, folder)
    failing = _solution_failures(master, files[f"source/{name}.ipynb"])
    if failing:
        raise AssignRefused(failing)
    record = _read_record(folder)
    problems, unchanged = _check_overwrites(folder, files, record)
    stale = [rel for rel in record if rel not in files and (folder / rel).is_file()]
    for rel in stale:
        if _sha(folder / rel) != record[rel]:
            problems.append(f"{folder / rel}: edited by hand since autograder assign wrote it, and no longer written")
    if problems and not force:
        raise AssignRefused(problems)
    written = []
    for rel, text in files.items():
        if rel in unchanged:
            continue
        _write(folder / rel, text)
        written.append(rel)
    for rel in stale:
        (folder / rel).unlink()
    kept = {
        "master": os.path.relpath(master.path.resolve(), folder),
        "files": {rel: _hash(t) for rel, t in files.items()},
    }
    _write(folder / RECORD, json.dumps(kept, indent=1) + "\n")
    registered = register(course_file, folder) if course_file is not None else None
    return Assigned(
        folder=folder,
        written=written,
        unchanged=sorted(unchanged),
        removed=stale,
        registered=registered,
        warnings=saved_outputs(master, f"source/{name}.ipynb") + undefined_names(master, files),
    )


def _solution_failures(master: Master, source: str) -> list[str]:
    """Each public test the solution fails, run from the source notebook as written (unsandboxed: the
    instructor's own code, as running the master in Jupyter would), one line naming its cell."""
    from ..sandbox.runners import UnsafeRunner
    from .solution import solution_failures

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{master.name}.ipynb"
        path.write_text(source, encoding="utf-8")
        results = solution_failures(path, UnsafeRunner(), master)
    return [result.message for result in results if not result.passed]


def undefined_names(master: Master, files: dict[str, str]) -> list[str]:
    """A warning for each name a hidden test's function uses that its module never defines nor
    imports, and Python does not have (a ``np`` the cell never imports): a NameError when it runs,
    the assignment's fault for every student. Warned, not refused: a module that fills its globals
    at run time (a ``*`` import, ``globals()``) can still define it."""
    warnings = []
    for rel, text in files.items():
        if not rel.startswith("hidden/"):
            continue
        try:
            tree, table = ast.parse(text), symtable.symtable(text, rel, "exec")
        except SyntaxError:
            continue  # _check_marks names the cell
        if "*" in text and any(isinstance(n, ast.ImportFrom) and n.names[0].name == "*" for n in ast.walk(tree)):
            continue
        defined = {symbol.get_name() for symbol in table.get_symbols() if symbol.is_assigned() or symbol.is_imported()}
        missing = set(_global_references(table)) - defined - set(dir(builtins))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in missing:
                missing.discard(node.id)
                found = marked_cell(text, node.lineno)
                where = master.where(found[1], found[3]) if found else f"{rel}, line {node.lineno}"
                warnings.append(
                    f"{where}: {node.id} is not defined in the hidden tests (import it in the cell): every "
                    "student's check would fail by the test's own code, and its question go ungraded"
                )
    return warnings


def _global_references(table: symtable.SymbolTable) -> list[str]:
    """The names the functions below ``table`` read from their module (not their own, nor enclosing)."""
    names = []
    for child in table.get_children():
        if child.get_type() == "function":
            names += [s.get_name() for s in child.get_symbols() if s.is_referenced() and s.is_global()]
        names += _global_references(child)
    return names


def saved_outputs(master: Master, source_name: str) -> list[str]:
    """A warning for each cell of the student's notebook saved with outputs, which ``assign`` leaves
    out of it: an output can show the answer."""
    return [
        f"{master.where(cell.number)}: its saved output is left out of {source_name} (an output can show the answer); "
        "clear the master's outputs before saving it"
        for cell in master.cells
        if cell.cell["cell_type"] == "code" and cell.cell.get("outputs")
    ]


def assignment_files(master: Master, folder: Path) -> dict[str, str]:
    """Every file of the assignment folder, by its path inside ``folder``, as text."""
    questions = [_question(master, settings) for settings in master.questions]
    _check_names(master, questions)
    notebook = student_notebook(master, questions)
    files: dict[str, str] = {}
    source_name = f"source/{master.name}.ipynb"
    files[source_name] = nbformat.writes(notebook) + "\n"
    for question in questions:
        cells = master.hidden.get(question["id"], [])
        if not cells and not question.get("manual"):
            raise AssignmentError(
                f"{master.where(question['cell'])}: question {question['id']!r} has no # HIDDEN TESTS cell: "
                "nothing would grade it"
            )
        if cells:
            files[f"hidden/test_{question['id']}.py"] = hidden_module(master, question["id"], cells)
        _check_checks(master, question, cells)
    solution = master.solution_code()
    references = master.settings.get("references")
    if references is None:
        files[REFERENCE_FILE] = (
            f'"""The reference: the solution of {master.path.name}, written by `autograder assign`."""\n\n'
            f'NAME = "{SOLUTION_REFERENCE}"  # what reports say they were graded against\n\n\n{solution}'
        )
        references = {SOLUTION_REFERENCE: REFERENCE_FILE}
    elif isinstance(references, dict):
        references = {
            str(key): os.path.relpath((master.path.parent / str(value)).resolve(), folder)
            for key, value in references.items()
        }
    files["known/correct.py"] = f"# The solution of {master.path.name}: every question passes.\n\n{solution}"
    manifest = _manifest(master, questions, references, source_name, folder)
    _check_parameters(master, manifest)
    files[MANIFEST] = (
        f"# Written by `autograder assign` from {master.path.name}: edit the master notebook, then run it again.\n"
        + tomli_w.dumps(manifest)
    )
    verdicts: dict[str, dict[str, Any]] = {"correct.py": _verdicts(questions, master, None)}
    for version in master.known:
        if version.file in verdicts:
            raise AssignmentError(f"{master.where(version.number)}: file {version.file!r} is already a known version's")
        mark = origin_mark(
            master.path.name, version.number, master.code_starts.get(version.number, 1), master.firsts[version.number]
        )
        files[f"known/{version.file}"] = (
            f"# A known {'correct' if version.correct else 'wrong'} version (cell {version.number} of "
            f"{master.path.name}): the solution, with {', '.join(version.defines)} replaced.\n\n"
            f"{solution}\n\n# The known version\n{mark}\n{version.code}"
        )
        table = _verdicts(questions, master, version)
        verdicts[version.file] = {"mistake": version.mistake, **table} if version.mistake else table
        if version.feedback:
            verdicts[version.file]["feedback"] = version.feedback
    files["known/verdicts.toml"] = (
        "# Written by `autograder assign`: each known submission's verdict per question, and the mistake it makes.\n"
        + tomli_w.dumps(verdicts)
    )
    return files


def _check_checks(master: Master, question: dict[str, Any], cells: list[tuple[int, str]]) -> None:
    """A question's ``checks`` name only tests its # HIDDEN TESTS cells define, or AssignmentError
    names the setting's line and the tests there are."""
    checks = question.get("checks", {})
    if not isinstance(checks, dict):
        return  # the manifest's own validation words it
    defined = {name for _, code in cells for name in defined_functions(code) if name.startswith("test")}
    unknown = sorted(set(checks) - defined)
    if unknown:
        number = question["cell"]
        where = master.where(number, master.line_of(number, r"^\s*checks\s*="))
        raise AssignmentError(
            f"{where}: checks: {unknown[0]} is no hidden "
            f"test of question {question['id']!r} (its tests: {', '.join(sorted(defined)) or 'none'})"
        )


def _check_parameters(master: Master, manifest: dict[str, Any]) -> None:
    """A master whose # ASSIGNMENT declares [parameters] has one code cell tagged ``parameters``
    that assigns each a plain value (own_values.py), or AssignmentError names the cell."""
    from ..own_values import TAG, assigned_values, cell_text

    names = list(manifest.get("parameters") or {})
    if not names:
        return
    tagged = [
        cell
        for cell in master.cells
        if cell.cell["cell_type"] == "code" and TAG in ((cell.cell.get("metadata") or {}).get("tags") or [])
    ]
    if len(tagged) != 1:
        where = master.where(tagged[1].number) if tagged else master.where(master.settings_cell)
        raise AssignmentError(
            f"{where}: [parameters] declares {', '.join(names)}: tag exactly one code cell {TAG!r} (it has "
            f"{len(tagged)}), its lines {names[0]} = ... holding your own values"
        )
    held = assigned_values([cell_text(tagged[0].cell)], names)
    missing = [name for name in names if name not in held]
    if missing:
        raise AssignmentError(
            f"{master.where(tagged[0].number)}: the cell tagged {TAG!r} does not assign {', '.join(missing)} a "
            f"plain value ({missing[0]} = 8)"
        )


def _question(master: Master, settings: dict[str, Any]) -> dict[str, Any]:
    """A question's manifest entry: its settings, with functions, points and manual found in its cells
    when the settings leave them out."""
    where = master.where(settings["cell"])
    unknown = sorted(set(settings) - QUESTION_KEYS - {"cell"})
    if unknown:
        raise AssignmentError(f"{where}: unknown setting {unknown[0]!r} ({', '.join(sorted(QUESTION_KEYS))})")
    own = [cell for cell in master.cells if cell.question == settings["id"]]
    question = dict(settings)
    if "functions" not in question:
        question["functions"] = [
            name for cell in own if cell.role == "solution" for name in defined_functions("".join(cell.cell["source"]))
        ]
    if "manual" not in question:
        question["manual"] = not question["functions"] and any(c.role == "written_solution" for c in own)
    given = [(cell, (cell.cell.get("metadata", {}).get("nbgrader") or {}).get("points")) for cell in own]
    given_points = [(cell, points) for cell, points in given if points is not None and _graded(cell)]
    if "points" not in question and given_points:
        question["points"] = sum(float(points) for _, points in given_points)
    if "points" not in question:
        raise AssignmentError(f"{where}: question {settings['id']!r} needs points = N")
    if given_points and sum(float(p) for _, p in given_points) != float(question["points"]):
        cell = given_points[0][0]
        raise AssignmentError(
            f"{master.where(cell.number)}: its graded cells hold "
            f"{plural(sum(float(p) for _, p in given_points), 'point')}, question {settings['id']!r} says {question['points']:g}"
        )
    if not question["functions"] and not question["manual"]:
        raise AssignmentError(
            f"{where}: question {settings['id']!r} grades no function: write its solution (### BEGIN SOLUTION) "
            'in a def, name functions = ["..."], or mark it manual = true'
        )
    return question


RUBRIC_KEYS = {"id", "text", "points"}
ID = re.compile(r"^[a-z][a-z0-9_]*$")


def _check_names(master: Master, questions: list[dict[str, Any]]) -> None:
    """Every name the master uses is one it defines, or AssignmentError names the cell and line that
    uses it: a function in ``uses``, a rubric item's id, a question in a hidden test's mark or in a
    known version's feedback rules."""
    ids = [str(q["id"]) for q in questions]
    graded = sorted({f for q in questions for f in q["functions"]})
    for question in questions:
        number = question["cell"]
        uses = question.get("uses", [])
        if not isinstance(uses, list) or not all(isinstance(name, str) for name in uses):
            where = master.where(number, master.line_of(number, r"^\s*uses\s*="))
            raise AssignmentError(
                f'{where}: uses = ["function", ...]: the graded functions that this question\'s functions call'
            )
        for name in uses:
            if name not in graded:
                where = master.where(number, master.line_of(number, r"^\s*uses\s*="))
                hint = f" ({name!r} is a question; name the function it grades)" if name in ids else ""
                raise AssignmentError(
                    f"{where}: uses = {uses!r}: {name!r} is no function a question grades{hint} "
                    f"(graded functions: {', '.join(graded) or 'none'})"
                )
        _check_rubric(master, question)
    for number, code in [(n, c) for cells in master.hidden.values() for n, c in cells]:
        _check_marks(master, number, code, ids)
    for version in master.known:
        unknown = sorted(set(version.feedback) - set(ids))
        if unknown:
            where = master.where(version.number, master.line_of(version.number, r"feedback"))
            raise AssignmentError(
                f"{where}: feedback for {unknown[0]!r}, which is no question of the master (its questions: "
                f"{', '.join(ids)})"
            )


def _check_rubric(master: Master, question: dict[str, Any]) -> None:
    number, seen = question["cell"], set()
    rubric = question.get("rubric", [])
    if not isinstance(rubric, list):
        raise AssignmentError(f'{master.where(number)}: rubric: [[rubric]] items with id = "...", text and points')
    for index, item in enumerate(rubric, start=1):
        item_id = item.get("id") if isinstance(item, dict) else None
        # The item's own line: its id after its [[rubric]] header (the index-th), else that header.
        header = master.line_of(number, r"^\s*\[\[rubric\]\]", index) or 0
        below = master.sources.get(number, "").splitlines()[header:]
        own = next((header + i for i, text in enumerate(below, start=1) if re.match(r"\s*id\s*=", text)), None)
        where = master.where(number, own or header or None)
        if not isinstance(item, dict):
            raise AssignmentError(
                f'{where}: rubric item {index}: a table ([[rubric]]) with id = "...", text and points'
            )
        unknown = sorted(set(item) - RUBRIC_KEYS)
        if unknown:
            raise AssignmentError(f"{where}: rubric item {index}: unknown setting {unknown[0]!r} (id, text, points)")
        if not isinstance(item_id, str) or not ID.match(item_id):
            raise AssignmentError(
                f'{where}: rubric item {index}: id = "..." (lowercase letters, digits and _, a letter first), '
                f"not {item_id!r}"
            )
        if item_id in seen:
            raise AssignmentError(f"{where}: rubric id {item_id!r} is already used in question {question['id']!r}")
        seen.add(item_id)


def _check_marks(master: Master, number: int, code: str, ids: list[str]) -> None:
    """A hidden test cell parses, and marks its tests only with questions of the master."""
    start = master.code_starts.get(number)
    try:
        tree = ast.parse(code)
    except SyntaxError as error:
        line = start + (error.lineno or 1) - 1 if start else None
        raise AssignmentError(f"{master.where(number, line)}: {error.msg}") from None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "question"):
            continue
        if not (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "mark"):
            continue
        named = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if named not in ids:
            line = start + node.lineno - 1 if start else None
            raise AssignmentError(
                f"{master.where(number, line)}: pytest.mark.question({named!r}) marks a test with no question of "
                f"the master (its questions: {', '.join(ids)})"
            )


def _graded(cell: StudentCell) -> bool:
    return cell.role in ("public_tests", "written_solution")


def student_notebook(master: Master, questions: list[dict[str, Any]]) -> nbformat.NotebookNode:
    """The source notebook in nbgrader's format: the master less its instructor-only cells, each
    question's cells with nbgrader metadata (grade_ids derived from the question's id), math in the
    delimiters Jupyter renders."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = nbformat.from_dict(_master_metadata(master))
    points_left = {question["id"]: float(question["points"]) for question in questions}
    given = {
        question["id"]: any(
            (c.cell.get("metadata", {}).get("nbgrader") or {}).get("points") is not None
            for c in master.cells
            if c.question == question["id"] and _graded(c)
        )
        for question in questions
    }
    used: set[str] = set()
    cells = []
    for cell in master.cells:
        copy = nbformat.from_dict(json.loads(json.dumps(cell.cell)))
        copy["id"] = cell.cell.get("id") or f"master-cell-{cell.number}"
        if copy.cell_type == "markdown":
            text = "".join(copy.source) if isinstance(copy.source, list) else copy.source
            if cell.role == "written_solution":
                text = "\n".join(line for line in text.splitlines() if line.strip() != WRITTEN_SOLUTION).strip("\n")
            copy.source = jupyter_math(text)
        elif cell.role == "public_tests":  # nbgrader's hidden regions: graded from hidden/, never shown
            copy.source = _without_hidden_regions(
                "".join(copy.source) if isinstance(copy.source, list) else copy.source
            )
        if copy.cell_type == "code":  # a saved output can show the answer (saved_outputs warns)
            copy.outputs, copy.execution_count = [], None
        if cell.question is None:
            if _graded(cell):
                raise AssignmentError(f"{master.where(cell.number)}: a graded cell that belongs to no question")
            meta = copy.get("metadata", {}).get("nbgrader")
            if meta and meta.get("grade_id"):
                used.add(meta["grade_id"])
        else:
            copy.metadata["nbgrader"] = _nbgrader_metadata(cell, questions, used, points_left, given)
        cells.append(copy)
    notebook.cells = cells
    return notebook


def _without_hidden_regions(source: str) -> str:
    kept, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN_HIDDEN:
            inside = True
        elif line.strip() == END_HIDDEN:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept).rstrip("\n")


def _master_metadata(master: Master) -> dict[str, Any]:
    notebook = nbformat.read(master.path, as_version=4)
    return dict(notebook.metadata)


def _nbgrader_metadata(
    cell: StudentCell,
    questions: list[dict[str, Any]],
    used: set[str],
    points_left: dict[str, float],
    given: dict[str, bool],
) -> dict[str, Any]:
    question_id = str(cell.question)
    meta = dict(cell.cell.get("metadata", {}).get("nbgrader") or {})
    grade_id = meta.get("grade_id")
    ids = [str(q["id"]) for q in questions]
    if (
        not isinstance(grade_id, str)
        or NBGRADER_CELL_ID.match(grade_id)
        or question_of_cell(grade_id, ids) != question_id
        or grade_id in used
    ):
        suffix = {"solution": "", "public_tests": "_tests", "written_solution": "_answer", "plain": "_text"}[cell.role]
        grade_id = f"{question_id}{suffix}"
        number = 2
        while grade_id in used:
            grade_id = f"{question_id}{suffix}_{number}"
            number += 1
    used.add(grade_id)
    graded = _graded(cell)
    result = {
        "grade": graded,
        "grade_id": grade_id,
        "locked": cell.role in ("plain", "public_tests"),
        "schema_version": 3,
        "solution": cell.role in ("solution", "written_solution"),
        "task": False,
    }
    if graded:
        if given[question_id]:
            result["points"] = meta.get("points", 0)
        else:  # the question's first graded cell carries its points
            result["points"] = points_left[question_id]
            points_left[question_id] = 0.0
    return result


def hidden_module(master: Master, question_id: str, cells: list[tuple[int, str]]) -> str:
    """A question's hidden test module: its # HIDDEN TESTS cells, marked with the question once."""
    header = (
        f'"""Hidden tests of question {question_id}, written by `autograder assign` from {master.path.name} '
        f'(cell{"s" if len(cells) > 1 else ""} {", ".join(str(number) for number, _ in cells)}): edit the master notebook, not this file."""\n\n'
        "import pytest\n\n"
        f'pytestmark = pytest.mark.question("{question_id}")\n'
    )
    parts = []
    for number, code in cells:
        body = code.lstrip("\n")
        if number in master.code_starts:  # a # HIDDEN TESTS cell: each line maps back to the cell's (origin.py)
            start = master.code_starts[number] + len(code) - len(body)
            parts.append(f"{origin_mark(master.path.name, number, start, master.firsts[number])}\n{body.rstrip()}")
        else:
            parts.append(body.rstrip())
    body = "\n\n".join(parts)
    return f"{header}\n\n{body}\n"


def _verdicts(questions: list[dict[str, Any]], master: Master, version: Any) -> dict[str, str]:
    """A known submission's verdict per question: the version's own (``verdicts``) where it gives
    them; else failed for the questions grading a function it replaces, and for those that use one
    (not_graded when the master sets charge_dependents = false), passed (manual) for the rest."""
    charged = master.settings.get("charge_dependents", True)
    statuses = set(get_args(Status))
    ids = {q["id"] for q in questions}
    own = version.verdicts if version is not None else {}
    for question, verdict in own.items():
        if question not in ids or verdict not in statuses:
            raise AssignmentError(
                f"{master.where(version.number)}: verdicts: {question} = {verdict!r}: a question of the master "
                f"({', '.join(sorted(ids))}) and a verdict ({', '.join(sorted(statuses))})"
            )
    result = {}
    replaced = set(version.defines) if version is not None and not version.correct else set()
    for question in questions:
        if question["id"] in own:
            result[question["id"]] = own[question["id"]]
        elif question.get("manual"):
            result[question["id"]] = "manual"
        elif replaced & set(question["functions"]):
            result[question["id"]] = "failed"
        elif replaced & set(question.get("uses", [])):
            result[question["id"]] = "failed" if charged else "not_graded"
        else:
            result[question["id"]] = "passed"
    return result


def _manifest(
    master: Master, questions: list[dict[str, Any]], references: Any, source_name: str, folder: Path
) -> dict[str, Any]:
    settings = dict(master.settings)
    bad = sorted(set(settings) & SETTINGS_NOT_ALLOWED)
    if bad:
        raise AssignmentError(
            f"{master.where(master.settings_cell)}: {bad[0]} is written by assign; leave it out of # ASSIGNMENT"
        )
    manifest = {
        "name": settings.pop("name"),
        "title": settings.pop("title", master.name),
        "notebook": source_name,
        "hidden_tests": "hidden",
        "references": references,
        **{key: value for key, value in settings.items() if key != "references"},
        "questions": [
            {key: value for key, value in q.items() if key != "cell" and value not in ([], None)} for q in questions
        ],
    }
    for question in manifest["questions"]:
        if not question.get("manual"):
            question.pop("manual", None)
    try:
        Assignment(**manifest, folder=folder)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        if loc and loc[0] == "questions" and len(loc) > 1 and loc[1].isdigit():
            cell, key = questions[int(loc[1])]["cell"], loc[2:]
        else:
            cell, key = master.settings_cell, loc
        line = master.line_of(cell, rf"^\s*{re.escape(key[0])}\s*=") if key else None  # the setting's own line
        raise AssignmentError(f"{master.where(cell, line)}: {'.'.join(key) or 'settings'}: {first['msg']}") from None
    except TypeError as exc:
        raise AssignmentError(f"{master.where(master.settings_cell)}: {exc}") from None
    return manifest


def _check_overwrites(folder: Path, files: dict[str, str], record: dict[str, str]) -> tuple[list[str], set[str]]:
    problems, unchanged = [], set()
    for rel, text in files.items():
        path = folder / rel
        if not path.is_file():
            continue
        current = _sha(path)
        if current == _hash(text):
            unchanged.add(rel)
        elif rel not in record:
            problems.append(f"{path}: not written by autograder assign; move it away, or pass --force to replace it")
        elif record[rel] != current:
            problems.append(
                f"{path}: edited by hand since autograder assign wrote it; edit the master notebook instead"
            )
    return problems, unchanged


def _read_record(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        files = data["files"]
        return {str(rel): str(digest) for rel, digest in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def register(course_file: Path, folder: Path) -> Path | None:
    """List ``folder`` in the last module's ``assignments`` of ``course_file``, unless it is listed
    already or lies outside the course's folder; returns the file when it changed it. Only that list's text changes (comments stay)."""
    import tomllib

    text = course_file.read_text(encoding="utf-8")
    root = course_file.parent.resolve()
    data = tomllib.loads(text)
    listed = {(root / path).resolve() for module in data.get("modules", []) for path in module.get("assignments", [])}
    if folder in listed:
        return None
    if not folder.is_relative_to(root):
        return None  # a folder outside the course (a trial run elsewhere): not the course's assignment
    relative = folder.relative_to(root).as_posix()
    matches = list(re.finditer(r"^assignments\s*=\s*\[(?P<items>[^\]]*)\]", text, re.MULTILINE))
    if matches:
        last = matches[-1]
        items = last.group("items").rstrip().rstrip(",")
        joined = f"{items}, {json.dumps(relative)}" if items.strip() else json.dumps(relative)
        text = text[: last.start("items")] + joined + text[last.end("items") :]
    else:
        raise AssignmentError(f'{course_file}: no module has assignments = [...]; add assignments = ["{relative}"]')
    course_file.write_text(text, encoding="utf-8")
    return course_file


def check_master(path: Path, runner: Runner) -> list[PublicResult]:
    """``autograder check`` on a master notebook: its solution (the student's notebook as ``assign``
    writes it, solutions in place) run in ``runner`` with its public tests, each test cell's result
    with a message naming the master's cell. AssignmentError for a master ``assign`` would refuse."""
    from .solution import solution_failures

    master = read_master(path)
    questions = [_question(master, settings) for settings in master.questions]
    _check_names(master, questions)
    with tempfile.TemporaryDirectory() as scratch:
        written = Path(scratch) / f"{master.name or 'master'}.ipynb"
        nbformat.write(student_notebook(master, questions), written)
        return solution_failures(written, runner, master)
