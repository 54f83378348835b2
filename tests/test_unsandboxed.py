"""The trust boundary, round four (issue #54), where student code runs without the sandbox: ``autograder
check`` refuses wherever hidden tests are in reach, from every placement, as root and not; Gradescope's
unsandboxed run (no working bubblewrap) cannot be forged by what the submission leaves running, nor
made to show the hidden tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ASSIGNMENTS

RELEASED = ASSIGNMENTS / "sequences-and-attention" / "known" / "released_unchanged.ipynb"
HIDDEN_LINE = "SECRET_HIDDEN_LINE = 'the first line of a hidden test'"
# Not root, for a test run as root: a user namespace that shows the command uid 1000 (it keeps root's
# access to the files, so what it could read is what root could: the refusal must come from the rule).
AS_USER = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", "--uid", "1000", "--gid", "1000", "--"]


def _course(tmp_path: Path) -> Path:
    """A course in ``tmp_path/course``, its one assignment two folders down with its hidden tests."""
    course = tmp_path / "course"
    assignment = course / "assignments" / "first"
    (assignment / "hidden").mkdir(parents=True)
    (course / "course.toml").write_text('title = "A course"\n')
    (assignment / "assignment.toml").write_text('name = "first"\nhidden_tests = "hidden"\n')
    (assignment / "hidden" / "test_first.py").write_text(HIDDEN_LINE + "\n")
    return course


def _attacking_notebook(path: Path, mark: Path) -> Path:
    """The released notebook with a first cell that leaves ``mark`` (with what it read of the hidden tests)."""
    notebook = json.loads(RELEASED.read_text())
    attack = {
        "cell_type": "code",
        "execution_count": None,
        "id": "attack",
        "metadata": {},
        "outputs": [],
        "source": [
            "import pathlib\n",
            f"found = [p.read_text() for p in pathlib.Path({str(path.parents[2])!r}).rglob('test_first.py')]\n",
            f"pathlib.Path({str(mark)!r}).write_text('ran ' + ''.join(found))",
        ],
    }
    notebook["cells"].insert(1, attack)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook))
    return path


# (the folder check is started from, the notebook), relative to tmp_path; the course is tmp_path/course.
PLACEMENTS = [
    ("course", "elsewhere/mine.ipynb"),  # from the course's root
    ("course/assignments", "elsewhere/mine.ipynb"),  # from assignments/
    ("elsewhere", "course/assignments/mine.ipynb"),  # the notebook under assignments/
    ("elsewhere", "course/assignments/first/mine.ipynb"),  # beside an assignment's manifest
    ("course/assignments/first/hidden", "elsewhere/mine.ipynb"),  # inside the hidden tests
    (".", "elsewhere/mine.ipynb"),  # from a folder that holds a course
    ("elsewhere", "mine.ipynb"),  # the notebook in a folder that holds a course
]


@pytest.mark.parametrize("as_root", [True, False], ids=["root", "not-root"])
@pytest.mark.parametrize("start, notebook", PLACEMENTS)
def test_check_never_runs_a_notebook_where_hidden_tests_are_in_reach(tmp_path, start, notebook, as_root):
    _course(tmp_path)
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    mark = tmp_path / "elsewhere" / "ran.txt"
    path = _attacking_notebook(tmp_path / notebook, mark)
    completed = subprocess.run(
        [*([] if as_root else AS_USER), sys.executable, "-m", "autograder", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path / start,
    )
    assert completed.returncode == 2, completed.stdout + completed.stderr
    said = completed.stderr.strip()
    assert said.startswith(f"autograder: {path}: not run: ") and "\n" not in said  # one line
    assert ("as root" in said) if as_root else ("holds hidden tests" in said and "course/assignments/first" in said)
    assert not mark.exists() and completed.stdout == ""  # nothing of the notebook ran


def test_check_runs_a_students_notebook_away_from_any_course(tmp_path):
    """The same notebook, outside every course and started from outside: not root, it runs (the refusals
    above come from the placement, not from the notebook)."""
    _course(tmp_path)
    mark = tmp_path / "elsewhere" / "ran.txt"
    path = _attacking_notebook(tmp_path / "elsewhere" / "deeper" / "further" / "mine.ipynb", mark)
    completed = subprocess.run(
        [*AS_USER, sys.executable, "-m", "autograder", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path.parent,
    )
    assert completed.returncode == 1, completed.stderr  # the released notebook's answers are stubs
    assert "0 of 6 questions pass their public tests" in completed.stdout
    assert mark.read_text() == "ran "  # it ran, and found no hidden test from where it was
