"""A grader killed mid-batch loses nothing already graded, and a rerun finishes the rest."""

from __future__ import annotations

import ast
import json
import shutil
import signal
import subprocess
import sys
import time
from importlib.metadata import version

from autograder.grading import grader_version

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .gradebook_view import recorded

KNOWN = ASSIGNMENTS / "sequences-and-attention" / "known"


@needs_sandbox
def test_killed_batch_keeps_whole_submissions_and_a_rerun_finishes(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for number in range(8):
        shutil.copy(KNOWN / "correct_vectorised.py", submissions / f"student{number}.py")
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        "sequences-and-attention",
        str(submissions),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--reference",
        "numpy",
    ]
    grader = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / "student1.json").exists():
        time.sleep(0.05)
    grader.send_signal(signal.SIGKILL)
    grader.wait()

    before = recorded(out / "gradebook.db")
    assert 1 <= len(before) < 8
    assert all(rows == [(10, 6)] for rows in before.values())  # never half a submission

    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"skipped {len(before)} already graded" in rerun.stderr
    assert recorded(out / "gradebook.db") == {f"student{n}": [(10, 6)] for n in range(8)}
    # Every report says which grader made it: the installed distribution's version, never "unknown".
    versions = {
        json.loads(path.read_text())["grader_version"] for path in out.glob("*.json") if ".gradescope" not in path.name
    }
    assert versions == {version("gradewright")} == {grader_version()}


def test_student_facing_package_holds_no_reference_or_hidden_test():
    import autograder

    package = ROOT / "autograder"
    assert autograder.__file__.startswith(str(package))
    # Authoring's templates, text that `autograder new` and `autograder assign` write into an
    # instructor's folder: the starter notebook's example tests (of mean_of, an assignment of no
    # course) and the wrapper that runs a master notebook's own tests (its tests come from the
    # notebook). Neither holds an assignment's hidden inputs or reference, and neither is a test here.
    templates = {package / "authoring" / "template.py", package / "authoring" / "master.py"}
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "def multi_head_attention" not in text and "def permutation_gap" not in text, path
        if path in templates:
            defined = {node.name for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)}
            assert not any(name.startswith("test_") for name in defined), path
        else:
            assert "def test_" not in text, path  # no hidden test ships with it


@needs_sandbox
def test_a_local_worker_process_killed_mid_job_is_retried(tmp_path):
    from autograder.assignment import load_assignment
    from autograder.batch import GradeOptions
    from autograder.submissions import find_submissions
    from gradebook.grading import grade_into_gradebook

    from . import dask_jobs

    folder = tmp_path / "submissions"
    folder.mkdir()
    for student in ("ada", "alan", "grace"):
        shutil.copy(KNOWN / "correct_loops.py", folder / f"{student}.py")
    out = tmp_path / "out"
    result = grade_into_gradebook(
        load_assignment(ASSIGNMENTS / "sequences-and-attention"),
        find_submissions([folder]).submissions,
        out,
        GradeOptions(reference="numpy", jobs=2),
        job=dask_jobs.dies_once,
    ).batch
    assert result.failed == [] and sorted(r.score for r in result.reports) == [10, 10, 10]
    assert recorded(out / "gradebook.db") == {student: [(10, 6)] for student in ("ada", "alan", "grace")}
