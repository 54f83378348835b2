"""The assignment's faults are the assignment's (issue #46): a hidden test that fails by its own code
is not charged to the student and is told to the staff; a solution that fails its own public test is
refused by `assign` and `verify`, and `check` on a master notebook checks the solution; every message
names the master notebook's cell (number and first line, and the line in it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograder.authoring.assign import assign
from autograder.authoring.template import new_master
from autograder.errors import AssignmentError

from .conftest import needs_sandbox

pytestmark = pytest.mark.timeout(300)

# The new master notebook's cells (autograder new): what the messages below name.
SPREAD_QUESTION, SPREAD_HIDDEN, MEAN_HIDDEN, MEAN_PUBLIC, MEAN_SOLUTION, RUBRIC = 10, 14, 8, 7, 6, 15
# Two hidden tests added to the spread question's cell: one that uses np, which the cell never
# imports (the instructor's mistake), and one that fails on an answer of the wrong kind (the student's).
BROKEN_TESTS = '''


def test_zero_values(student):
    """Zeros have no spread."""
    values = np.zeros(4)
    expect_close(expect_number(student.variance_of(values), "zeros"), 0.0, "the variance of zeros")


def test_the_variance_is_a_number(student, reference, rng):
    """The variance of five values is a number."""
    values = rng.normal(size=5)
    real = student.variance_of(values).real
    expect_close(expect_number(real, "five values"), reference.variance_of(values), "five values")
'''
# Right about the mean, but the variance comes back in a list: test_the_variance_is_a_number fails
# in its own code (a list has no .real), as it does not with the reference: the student's fault.
IN_A_LIST = """import numpy as np


def mean_of(values):
    return float(np.sum(values) / len(values))


def variance_of(values):
    values = np.asarray(values, dtype=float)
    return [mean_of((values - mean_of(values)) ** 2)]
"""


def run(command: str, *args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", command, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=280
    )


def _edit(master: Path, number: int, edit) -> None:
    notebook = nbformat.read(master, as_version=4)
    edit(notebook.cells[number - 1])
    nbformat.write(notebook, master)


def _append(text: str):
    def edit(cell) -> None:
        cell.source += text

    return edit


def _replace(old: str, new: str):
    def edit(cell) -> None:
        assert old in cell.source
        cell.source = cell.source.replace(old, new)

    return edit


@pytest.fixture
def course_folder(tmp_path) -> Path:
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    return tmp_path / "c"


@pytest.mark.slow
@needs_sandbox
def test_a_hidden_tests_own_error_is_not_charged_and_is_told_to_the_staff(course_folder):
    course = course_folder
    master = new_master("averages", course / "assignments" / "averages")
    _edit(master, SPREAD_HIDDEN, _append(BROKEN_TESTS))
    hidden_line = 1 + nbformat.read(master, as_version=4).cells[SPREAD_HIDDEN - 1].source.splitlines().index(
        "    values = np.zeros(4)"
    )
    place = f"{master}: cell {SPREAD_HIDDEN} (# HIDDEN TESTS: from autograder.testing import expect_clo...), line {hidden_line}"
    # assign warns (the solution passes its public tests, so it writes the folder all the same).
    assert assign(master, course_file=course / "course.toml").warnings == [
        f"{place}: np is not defined in the hidden tests (import it in the cell): every student's check would fail "
        "by the test's own code, and its question go ungraded"
    ]

    verified = run("autograder", "verify", "averages", "--secret", "s1", "--margin", "1", cwd=course)
    assert verified.returncode == 1
    lines = verified.stdout.splitlines()
    fault = lines.index(
        "FAIL the hidden test test_zero_values (question spread) fails by its own code, whatever the submission (its "
        "question is not graded for anyone until it is fixed):"
    )
    assert lines[fault + 1 : fault + 4] == [
        f"       {place}, in test_zero_values",
        "         values = np.zeros(4)",
        "     NameError: name 'np' is not defined",
    ]
    assert f"FAIL correct.py ({master}: the solution (its ### BEGIN SOLUTION cells))" in lines
    assert f'FAIL mean_off_by_one.py ({master}: cell 9 (# KNOWN WRONG: # file = "mean_off_by_one"))' in lines
    assert "1 hidden test fails by its own code" in lines
    assert f"2 verdicts differ from the master notebook {master}" in lines
    assert "known/verdicts.toml" not in verified.stdout and "hidden/test_" not in verified.stdout

    (course / "in_a_list.py").write_text(IN_A_LIST)
    known = master.parent / "known" / "correct.py"
    graded = run("autograder", "grade", "averages", known, course / "in_a_list.py", "--out", "g", cwd=course)
    assert graded.returncode == 0, graded.stderr
    assert "the hidden test test_zero_values of question spread failed by its own code at" in graded.stderr
    correct = json.loads((course / "g" / "correct.json").read_text())
    spread = correct["questions"][1]
    assert (spread["status"], spread["score"], correct["score"]) == ("not_graded", 2.0, 3.0)  # nothing charged
    assert spread["feedback"].startswith("Not graded: the assignment's tests failed (not your code): 1 check of 4")
    outcome = {test["name"]: test for test in spread["tests"]}["test_zero_values"]
    assert outcome["status"] == "error" and "np" not in json.dumps(spread)  # no hidden code for the student
    assert [(f["question"], f["test"], f["error"], f["where"]) for f in correct["test_faults"]] == [
        ("spread", "test_zero_values", "NameError: name 'np' is not defined", place)
    ]

    gradescope = json.loads((course / "g" / "correct.gradescope.json").read_text())
    assert (
        "status" not in gradescope["tests"][1] and gradescope["tests"][1]["score"] == 2.0
    )  # neither passed nor failed
    assert [f["test"] for f in gradescope["extra_data"]["test_faults"]] == ["test_zero_values"]  # no student reads it

    listed = json.loads((course / "g" / "in_a_list.json").read_text())
    spread = listed["questions"][1]
    outcomes = {test["name"]: (test["status"], test["message"]) for test in spread["tests"]}
    # Its own code failed on the student's answer, not with the reference's: a failure, charged.
    assert outcomes["test_the_variance_is_a_number"] == ("failed", "The result was not what the question asks for.")
    assert outcomes["test_zero_values"][0] == "error"
    assert spread["status"] == "not_graded" and spread["score"] == pytest.approx(2 * 1 / 4)
    assert [f["test"] for f in listed["test_faults"]] == ["test_zero_values"]


@pytest.mark.slow
@needs_sandbox
def test_a_solution_that_fails_its_public_test_is_refused_and_check_says_so(course_folder):
    course = course_folder
    master = new_master("averages", course / "assignments" / "averages")
    assign(master, course_file=course / "course.toml")

    # The folder's solution then edited by hand to return the minimum: verify refuses it.
    source = master.parent / "source" / "averages.ipynb"
    wrong = "return float(np.min(values))"
    source.write_text(source.read_text().replace("return float(np.sum(values) / len(values))", wrong))
    verified = run("autograder", "verify", "averages", "--secret", "s1", "--margin", "1", cwd=course)
    assert verified.returncode == 1
    public = f"{master}: cell {MEAN_PUBLIC} (# PUBLIC TESTS: assert mean_of(np.array([2.0, 4.0, 9.0]))...), line 2"
    said = f"{public}: the solution fails this public test (question mean): the mean of 2, 4 and 9 is 5"
    assert f"FAIL the solution: {said}" in verified.stdout.splitlines()  # and spread's, which uses mean_of
    assert "the solution fails 2 public tests: fix the solution or the test" in verified.stdout

    # The same mistake in the master: check names it, and assign writes nothing.
    _edit(master, MEAN_SOLUTION, _replace("return float(np.sum(values) / len(values))", wrong))
    checked = run("autograder", "check", master, cwd=course)
    assert checked.returncode == 1
    spread = (
        f"{master}: cell 13 (# PUBLIC TESTS: assert variance_of(np.array([1.0, 3.0])) ...), line 2: the solution "
        "fails this public test (question spread): the variance of 1 and 3 is 1"  # its variance_of uses mean_of
    )
    assert checked.stdout.splitlines() == [
        f"\u2717 mean: {said}",
        f"\u2717 spread: {spread}",
        "the solution passes 0 of 2 public tests",
    ]
    before = source.read_text()
    refused = run("autograder", "assign", master, cwd=course)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"autograder: {said}",
        f"autograder: {spread}",
        "autograder: nothing written",
    ]
    assert source.read_text() == before


CASES = {
    "uses names a question": (
        SPREAD_QUESTION,
        _replace('uses = ["mean_of"]', 'uses = ["mean"]'),
        f"cell {SPREAD_QUESTION} (# BEGIN QUESTION: id = \"spread\"), line 5: uses = ['mean']: 'mean' is no "
        "function a question grades ('mean' is a question; name the function it grades) (graded functions: "
        "mean_of, variance_of)",
    ),
    "a test marked with an unknown question": (
        MEAN_HIDDEN,
        _replace("@pytest.mark.parametrize", '@pytest.mark.question("meen")\n@pytest.mark.parametrize'),
        f"cell {MEAN_HIDDEN} (# HIDDEN TESTS: import pytest), line 7: pytest.mark.question('meen') marks a test "
        "with no question of the master (its questions: mean, spread, written)",
    ),
    "a rubric id used twice": (
        RUBRIC,
        _replace('id = "median"', 'id = "outlier"'),
        f"cell {RUBRIC} (# BEGIN QUESTION: id = \"written\"), line 12: rubric id 'outlier' is already used in "
        "question 'written'",
    ),
    "a setting that is not TOML": (
        SPREAD_QUESTION,
        _replace("points = 2", "points = "),
        f'cell {SPREAD_QUESTION} (# BEGIN QUESTION: id = "spread"): Invalid value (at line 4 of the cell, column 10)',
    ),
    "points that are no number of points": (
        SPREAD_QUESTION,
        _replace("points = 2", "points = -2"),
        f'cell {SPREAD_QUESTION} (# BEGIN QUESTION: id = "spread"), line 4: points: Input should be greater than 0',
    ),
    "a setting of the assignment": (
        1,
        _append("\nmax_submissions = 0"),
        'cell 1 (# ASSIGNMENT: name = "averages"), line 4: max_submissions: Input should be greater than or equal to 1',
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_assign_names_the_masters_cell_and_line(case, tmp_path):
    master = new_master("averages", tmp_path / "averages")
    number, edit, said = CASES[case]
    _edit(master, number, edit)
    with pytest.raises(AssignmentError) as refused:
        assign(master)
    assert str(refused.value).startswith(f"{master}: ") and said in str(refused.value)
    assert not (tmp_path / "averages" / "hidden").exists()


def test_assign_leaves_saved_outputs_out_with_a_warning(tmp_path):
    master = new_master("averages", tmp_path / "averages")
    _edit(master, 3, lambda cell: cell.outputs.append(new_output("stream", text="the answer is 5\n")))
    assigned = run("autograder", "assign", master, cwd=tmp_path)
    assert assigned.returncode == 0, assigned.stderr
    assert assigned.stderr.splitlines() == [
        f"autograder: warning: {master}: cell 3 (import numpy as np): its saved output is left out of "
        "source/averages.ipynb (an output can show the answer); clear the master's outputs before saving it"
    ]
    source = nbformat.read(master.parent / "source" / "averages.ipynb", as_version=4)
    assert all(not cell.get("outputs") for cell in source.cells) and "the answer" not in json.dumps(source)


def test_check_on_a_notebook_without_public_tests_says_so(tmp_path):
    notebook = tmp_path / "plain.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), notebook)
    checked = run("autograder", "check", notebook, "--allow-unsandboxed", cwd=tmp_path)
    assert checked.returncode == 2 and checked.stdout == ""  # never "0 of 0 questions pass", exit 0
    assert checked.stderr.splitlines() == [
        f"autograder: {notebook}: no public tests to run (nbgrader's graded code cells)"
    ]
