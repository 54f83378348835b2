"""The trust boundary, round four (issue #54), where student code runs without the sandbox: ``autograder
check`` refuses wherever hidden tests are in reach, from every placement, as root and not; Gradescope's
unsandboxed run (no working bubblewrap) cannot be forged by what the submission leaves running, nor
made to show the hidden tests."""

from __future__ import annotations

import json
import shutil
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


def test_a_notebooks_own_check_never_runs_it_beside_hidden_tests(tmp_path):
    """``check()`` from a notebook's cell (gradewright.cell.check) and the JupyterLab extension's Check
    call the same library function as the command: it refuses a notebook with hidden tests in reach."""
    from gradewright.cell import check
    from gradewright.errors import GradewrightError

    _course(tmp_path)
    mark = tmp_path / "ran.txt"
    for notebook in ("course/assignments/mine.ipynb", "course/assignments/first/mine.ipynb", "mine.ipynb"):
        path = _attacking_notebook(tmp_path / notebook, mark)
        with pytest.raises(GradewrightError, match=r"not run: .*course/assignments/first holds hidden tests"):
            check(path)
        assert not mark.exists()


# A submission graded without the sandbox: it finds the course and the results from its grader's command
# line, reads the first lines of two hidden test files, leaves a process in a session of its own that
# rewrites results.json for half a minute, and raises the hidden lines in its error message.
FORGER = """
import glob, json, os, time
said = open(f"/proc/{os.getppid()}/cmdline", "rb").read().split(b"\\0")
course, root = (said[said.index(flag) + 1].decode() for flag in (b"--course", b"--root"))
leaked = []
for path in sorted(glob.glob(course + "/assignments/*/hidden/*.py"))[:2]:
    try:
        with open(path) as handle:
            first, second = handle.readline().strip(), handle.readline().strip()
            leaked += [first, second, first[:24]]  # a line whole, and cut short
    except OSError as exc:
        leaked.append(type(exc).__name__)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open("__DROP__/forger.pid.new", "w") as handle:
            handle.write(str(os.getpid()))
        os.rename("__DROP__/forger.pid.new", "__DROP__/forger.pid")
        for _ in range(3000):
            try:
                with open(root + "/results/results.json", "w") as handle:
                    handle.write(json.dumps({"score": 10, "output": "forged"}))
            except OSError:
                pass
            time.sleep(0.01)
    os._exit(0)
for _ in range(500):  # until the forger is under way
    if os.path.exists("__DROP__/forger.pid"):
        break
    time.sleep(0.01)
raise RuntimeError("LEAK " + " | ".join(leaked))
"""


@pytest.mark.slow  # a Gradescope bundle exported and run: about ten seconds each
@pytest.mark.parametrize("as_root", [True, False], ids=["root", "not-root"])
def test_gradescope_without_the_sandbox_is_neither_forged_nor_leaks_the_hidden_tests(tmp_path, as_root):
    import os
    import signal
    import tempfile

    from .test_gradescope import laid_out

    root = laid_out(tmp_path)
    drop = Path(tempfile.mkdtemp(prefix="gradewright-forger-", dir="/tmp"))  # where any user may write
    drop.chmod(0o777)
    (root / "submission" / "answer.py").write_text(FORGER.replace("__DROP__", str(drop)))
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    environment = {**os.environ, "GRADEWRIGHT_ROOT": str(root), "PYTHON": sys.executable, "PATH": str(no_bwrap)}
    outer = [] if as_root else [shutil.which("bwrap"), *AS_USER[1:]]
    try:
        completed = subprocess.run(
            [*outer, "/bin/bash", str(root / "source" / "run_autograder")],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )
        forger = int((drop / "forger.pid").read_text())  # the attack ran
        with pytest.raises(ProcessLookupError):  # and nothing of it outlived the grader
            os.kill(forger, 0)
    finally:
        if (drop / "forger.pid").is_file():
            try:
                os.kill(int((drop / "forger.pid").read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        shutil.rmtree(drop, ignore_errors=True)
    assert completed.returncode == 0, completed.stderr
    written = (root / "results" / "results.json").read_text()
    results = json.loads(written)
    assert results["score"] == 0 and results["output"].startswith("Graded without the sandbox")
    assert "LEAK" in results["output"]  # the submission's own error is shown, less the hidden tests
    hidden = [
        line.strip()
        for path in sorted((root / "source" / "course" / "assignments").glob("*/hidden/*.py"))[:2]
        for line in path.read_text().splitlines()[:2]
        if len(line.strip()) >= 16
    ]
    assert hidden and not [line for line in hidden if line in written]
    if as_root:  # another user than the grader's: it could not even find them
        assert results["output"].endswith("RuntimeError: LEAK ")
    else:  # the grader's own user: it read them, and what it raised is shown without them
        assert "RuntimeError: LEAK [hidden]" in results["output"]


def test_what_a_submission_shapes_keeps_nothing_of_the_hidden_text():
    from autograder.gradescope import HIDDEN_TEXT, scrubbed

    hidden = "def test_softmax_rows_sum_to_one(secret_inputs):"
    runs = frozenset(hidden[i : i + 16] for i in range(len(hidden) - 15))
    for shaped in (hidden, hidden[:30] + "... (120 more characters)", "x" + hidden + hidden[5:]):
        said = scrubbed(f"RuntimeError: {shaped} | mine", runs)
        assert HIDDEN_TEXT in said and not any(run in said for run in runs), said
    assert scrubbed("import numpy as np; my own words", runs) == "import numpy as np; my own words"
