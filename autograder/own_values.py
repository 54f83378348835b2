"""A notebook of one's own: values drawn for each student, in their notebook and in their grading.

An assignment may declare parameters (``[parameters.NAME]`` in assignment.toml, drawn as a
generated check question draws its own: ``range``, ``uniform`` or ``choices``, optionally
``size``). Its source notebook holds them in one code cell tagged ``parameters`` (papermill's tag),
as ``name = value`` lines: the instructor's own values, which the solution, the public tests and
the known versions are written with (the template's, ``template_values``).

- ``autograder release`` writes the template: that cell as the instructor wrote it, locked.
- ``autograder fetch`` (and the site, through ``own_notebook_file``) writes a student's copy: the cell
  holds the values drawn for that student (``student_values``), the notebook's metadata says whose.
- The grader draws the student's values from the student's id (never from the notebook, which the
  student controls); the hidden tests and the reference read them through the ``parameters``
  fixture. The notebook runs as handed in: a notebook holding someone else's values computes with
  theirs, and fails where the values matter. The report records the values the notebook holds
  beside the student's own (``OwnValues``), so a swapped notebook is plain to see.

The draw is the generated questions' rule (``course.generated.seed_of``): SHA-256 of what is
drawn (the course's seed and the assignment's name) and the student's id, fed to ``random.Random``:
the same student gets the same values on every machine, every time.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from course.generated import seed_of
from course.models import ParameterValue
from course.wording import plural

from .assignment import Assignment
from .errors import AssignmentError
from .reports.model import OwnValues

TAG = "parameters"
# A parameters cell is ``name = value`` lines; a value is read with ast.literal_eval (never run),
# and only from a line this long at most: the student's file is read in the grader's own process.
MAX_LINE_CHARS = 2_000


def draw_key(assignment: Assignment) -> str:
    """What is drawn, as ``seed_of`` names it: the assignment, within the course's seed."""
    return f"{assignment.course_seed}/{assignment.name}" if assignment.course_seed else assignment.name


def student_values(assignment: Assignment, student: str) -> dict[str, ParameterValue]:
    """The values drawn for ``student`` (their id, as grading and fetching name them); empty when
    the assignment declares no parameters."""
    rng = random.Random(seed_of(draw_key(assignment), student))
    return {name: spec.draw(rng) for name, spec in assignment.parameters.items()}


def assigned_values(sources: Iterable[str], names: Iterable[str]) -> dict[str, ParameterValue]:
    """Each of ``names`` as the first top-level ``name = literal`` line of ``sources`` (cells' code,
    in order) gives it; a name with no such line is left out. Nothing is run: a value that is not a
    literal (``seq_len = f(3)``) counts as missing."""
    wanted = set(names)
    found: dict[str, ParameterValue] = {}
    for source in sources:
        for line in source.splitlines():
            if len(line) > MAX_LINE_CHARS or line[:1].isspace() or "=" not in line:
                continue  # a top-level assignment starts its line
            name, _, text = line.partition("=")
            name = name.rstrip()
            if name not in wanted or name in found:
                continue
            try:
                value = ast.literal_eval(text.strip())  # a comment after the value is no part of it
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if _is_value(value):
                found[name] = list(value) if isinstance(value, tuple) else value
    return found


def with_values(code: str, values: Mapping[str, ParameterValue]) -> str:
    """``code`` with the first top-level ``name = ...`` line of each of ``values`` (the line
    ``assigned_values`` reads) made ``name = value``: a known version, written with the template's
    values, as a student with these values would have it."""
    lines = code.split("\n")
    left = dict(values)
    for index, line in enumerate(lines):
        name = line.partition("=")[0].rstrip()
        if name in left and assigned_values([line], [name]):  # the one rule of what a value's line is
            lines[index] = f"{name} = {left.pop(name)!r}"
    return "\n".join(lines)


def value_list(values: Mapping[str, ParameterValue]) -> str:
    """``seq_len = 7, d_model = 8``: values as a message shows them."""
    return ", ".join(f"{name} = {value!r}" for name, value in values.items())


def _is_value(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return all(isinstance(item, int | float | str) and not isinstance(item, bool) for item in value)
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def compare(assignment: Assignment, student: str, sources: Iterable[str]) -> OwnValues | None:
    """The student's values beside the notebook's (None when the assignment declares none)."""
    if not assignment.parameters:
        return None
    own = student_values(assignment, student)
    held = assigned_values(sources, own)
    differing = [name for name, value in own.items() if name not in held or held[name] != value]
    return OwnValues(student=own, notebook=held, matches=not differing, differing=differing)


def mismatch_sentence(values: OwnValues) -> str:
    """What the student and the staff read when the notebook's values are not the student's."""
    shown = []
    for name in values.differing[:4]:
        there = repr(values.notebook[name]) if name in values.notebook else "missing"
        shown.append(f"{name} is {there} there, {values.student[name]!r} for you")
    more = f" and {len(values.differing) - 4} more" if len(values.differing) > 4 else ""
    return (
        f"This notebook's values are not the ones drawn for you ({'; '.join(shown)}{more}): it was graded "
        "with yours, so work computed with other values fails. Fetch your own notebook and work in it."
    )


# --- the notebook's cell ----------------------------------------------------------------------


def cell_text(cell: Mapping[str, Any]) -> str:
    """A notebook cell's source as one text (nbformat keeps it as a string or a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def parameters_cells(notebook: Mapping[str, Any]) -> list[int]:
    """The indexes of the notebook's code cells tagged ``parameters``."""
    return [
        index
        for index, cell in enumerate(notebook.get("cells", []))
        if cell.get("cell_type") == "code" and TAG in ((cell.get("metadata") or {}).get("tags") or [])
    ]


def parameters_cell(assignment: Assignment, notebook: Mapping[str, Any], where: str) -> int:
    """The index of the source notebook's one parameters cell, which assigns every parameter; raises
    AssignmentError naming ``where`` (the notebook's file) and what is wrong."""
    found = parameters_cells(notebook)
    names = list(assignment.parameters)
    if len(found) != 1:
        raise AssignmentError(
            f"{where}: assignment.toml declares parameters ({', '.join(names)}) but "
            f"{'no code cell is' if not found else plural(len(found), 'code cell') + ' are'} tagged {TAG!r}: tag the one cell "
            f"that assigns them ({names[0]} = ...)"
        )
    held = assigned_values([cell_text(notebook["cells"][found[0]])], names)
    missing = [name for name in names if name not in held]
    if missing:
        raise AssignmentError(
            f"{where}: cell {found[0] + 1} (tagged {TAG!r}) does not assign {', '.join(missing)} a plain value "
            f"({missing[0]} = 8)"
        )
    return found[0]


def template_values(assignment: Assignment, notebook: Mapping[str, Any], where: str) -> dict[str, ParameterValue]:
    """The values of the source notebook's parameters cell: the instructor's, which the solution and
    the known versions are written with (``autograder verify`` grades them with these)."""
    if not assignment.parameters:
        return {}
    index = parameters_cell(assignment, notebook, where)
    return assigned_values([cell_text(notebook["cells"][index])], assignment.parameters)


def cell_source(values: Mapping[str, ParameterValue], student: str) -> str:
    """The parameters cell of ``student``'s notebook."""
    lines = [
        f"# Your own values, drawn for you ({' '.join(student.split())}): leave them as they are. Your work is",
        "# graded with the values drawn for you, whatever this cell says.",
        *(f"{name} = {value!r}" for name, value in values.items()),
    ]
    return "\n".join(lines)


def own_notebook(assignment: Assignment, notebook: dict[str, Any], student: str) -> dict[str, Any]:
    """The released notebook (``notebook``, as JSON) made ``student``'s: their values in its
    parameters cell, which stays locked, and the notebook's metadata saying whose it is (for the
    student's tools; the grader never reads it). Changed in place and returned; unchanged when the
    assignment declares no parameters."""
    if not assignment.parameters:
        return notebook
    index = parameters_cell(assignment, notebook, assignment.released_notebook)
    values = student_values(assignment, student)
    cell = notebook["cells"][index]
    cell["source"] = cell_source(values, student)
    lock(cell)
    metadata = notebook.setdefault("metadata", {})
    metadata.setdefault("gradewright", {}).update({"assignment": assignment.name, "student": student})
    metadata["gradewright"]["parameters"] = dict(values)
    return notebook


def lock(cell: dict[str, Any]) -> None:
    """Jupyter's own locks on a cell: it can be neither edited nor deleted in the notebook's editor."""
    metadata = cell.setdefault("metadata", {})
    metadata["editable"] = False
    metadata["deletable"] = False


def known_values(assignment: Assignment) -> dict[str, ParameterValue] | None:
    """The values a grading of no student uses (``autograder verify``'s known versions and mutants,
    written with the instructor's values): the source notebook's parameters cell's; None when the
    assignment declares no parameters. AssignmentError when the source cannot say them."""
    if not assignment.parameters:
        return None
    path = assignment.notebook_path
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AssignmentError(f"{path}: cannot be read as a notebook ({exc})") from None
    if not isinstance(notebook, dict):
        raise AssignmentError(f"{path}: not a notebook")
    return template_values(assignment, notebook, str(path))


def own_notebook_file(assignment: Assignment, released: Path, student: str) -> bytes:
    """The released notebook's file (``autograder release``'s, as the site keeps it) made
    ``student``'s, as the bytes to send them: what the site's download and its API give a student
    (their id as grading names them). The file's own bytes when the assignment declares no
    parameters; AssignmentError when it is not a notebook."""
    data = released.read_bytes()
    if not assignment.parameters:
        return data
    try:
        notebook = json.loads(data)
    except ValueError as exc:
        raise AssignmentError(f"{released}: cannot be read as a notebook ({exc})") from None
    if not isinstance(notebook, dict):
        raise AssignmentError(f"{released}: not a notebook")
    import nbformat  # as release writes it: the same file as `autograder fetch` gives

    return nbformat.writes(nbformat.from_dict(own_notebook(assignment, notebook, student))).encode("utf-8")
