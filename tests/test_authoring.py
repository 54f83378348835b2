"""Writing an assignment in one master notebook (issue #36): `autograder new`, `autograder assign`
(and its refusal to overwrite what was edited by hand), nbgrader's own cell metadata taken, `course
validate` checking assignments, and math Jupyter renders (the shipped assignments' masters:
test_master_equivalence.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from autograder.assignment import load_assignment
from autograder.assignment_checks import assignment_problems
from autograder.authoring.assign import AssignRefused, assign
from autograder.authoring.math import jupyter_math, unrendered_math
from autograder.release import check_source, read_source_notebook

from .conftest import ASSIGNMENTS, needs_sandbox

pytestmark = pytest.mark.timeout(300)
SHIPPED = ("sequences-and-attention", "attention-not-explanation")


def run(command: str, *args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", command, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=280
    )


@pytest.mark.slow
@needs_sandbox
def test_new_then_assign_verify_and_grade_a_master_notebook(tmp_path):
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    created = run("autograder", "new", "averages", cwd=course)
    assert created.returncode == 0, created.stderr
    master = course / "assignments" / "averages" / "averages.master.ipynb"
    assert created.stdout.splitlines()[0] == str(master)
    assigned = run("autograder", "assign", master, cwd=course)
    assert assigned.returncode == 0, assigned.stderr
    assert 'assignments = ["assignments/example", "assignments/averages"]' in (course / "course.toml").read_text()
    folder = master.parent
    verdicts = tomllib.loads((folder / "known" / "verdicts.toml").read_text())
    assert verdicts["mean_off_by_one.py"] == {
        "mistake": "It divides by one less than the number of values.",
        "mean": "failed",
        "spread": "failed",  # spread uses mean_of: charged, as charge_dependents says by default
        "written": "manual",
    }
    validated = run("course", "validate", cwd=course)
    assert validated.returncode == 0, validated.stdout
    assert "2 assignments, 0 errors, 0 warnings" in validated.stderr

    verified = run("autograder", "verify", "averages", "--secret", "s1", "--margin", "1", cwd=course)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.splitlines()[0] == "averages: 2 known submissions, 1 secret, 2 gradings (margin 1)"
    graded = run("autograder", "grade", "averages", folder / "known" / "mean_off_by_one.py", "--out", "g", cwd=course)
    assert graded.returncode == 0, graded.stderr
    report = json.loads((course / "g" / "mean_off_by_one.json").read_text())
    assert {q["id"]: q["status"] for q in report["questions"]} == {
        "mean": "failed",
        "spread": "failed",
        "written": "manual",
    }
    assert report["reference"] == "solution"  # the reference's NAME: the solution itself
    assert "Your mean_of fails its own tests" in report["questions"][1]["feedback"]

    # A file edited by hand is named, and nothing is written, not even what the master changed.
    hidden = folder / "hidden" / "test_mean.py"
    hidden.write_text(hidden.read_text() + "\n# a hand edit\n")
    notebook = nbformat.read(master, as_version=4)
    notebook.cells[0].source = notebook.cells[0].source.replace('title = "Averages"', 'title = "Means"')
    nbformat.write(notebook, master)
    manifest = (folder / "assignment.toml").read_text()
    refused = run("autograder", "assign", master, cwd=course)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"autograder: {hidden}: edited by hand since autograder assign wrote it; edit the master notebook instead",
        "autograder: nothing written",
    ]
    assert (folder / "assignment.toml").read_text() == manifest
    forced = run("autograder", "assign", master, "--force", cwd=course)
    assert forced.returncode == 0 and 'title = "Means"' in (folder / "assignment.toml").read_text()
    assert f"wrote {hidden}" in forced.stdout and "already up to date" in forced.stdout


def _nbgrader_cell(cell, grade_id: str, **flags) -> nbformat.NotebookNode:
    """A cell as nbgrader's Create Assignment toolbar leaves it."""
    cell.metadata["nbgrader"] = {
        "grade": False,
        "grade_id": grade_id,
        "locked": False,
        "schema_version": 3,
        "solution": False,
        "task": False,
        **flags,
    }
    return cell


def test_a_notebook_with_nbgraders_own_metadata_is_taken(tmp_path):
    master = tmp_path / "toolbar.ipynb"
    notebook = new_notebook()
    notebook.cells = [
        new_raw_cell('# ASSIGNMENT\nname = "toolbar"\ntitle = "Made with the toolbar"'),
        new_code_cell("import numpy as np"),
        new_raw_cell('# BEGIN QUESTION\nid = "total"'),  # points and functions: from the cells
        _nbgrader_cell(new_markdown_cell("## Totals\n\nWrite `total(x)`, $\\sum_i x_i$."), "cell-3f2a", locked=True),
        _nbgrader_cell(
            new_code_cell("def total(x):\n    ### BEGIN SOLUTION\n    return float(np.sum(x))\n    ### END SOLUTION"),
            "cell-9b1c07e5",
            solution=True,
        ),
        _nbgrader_cell(new_code_cell("assert total([1, 2]) == 3"), "cell-0aa1", grade=True, locked=True, points=2),
        new_code_cell(
            "# HIDDEN TESTS\nfrom autograder.testing import expect_close, expect_number\n\n\n"
            'def test_total(student, reference, rng):\n    """The total of random values is right."""\n'
            "    x = rng.normal(size=5)\n    expect_close(expect_number(student.total(x), 'the total'), "
            "reference.total(x), 'the total')"
        ),
    ]
    nbformat.write(notebook, master)
    done = assign(master, tmp_path / "out")
    assignment = load_assignment(done.folder)
    assert [(q.id, q.points, q.functions) for q in assignment.questions] == [("total", 2.0, ["total"])]
    source = read_source_notebook(assignment)
    check_source(assignment, source)  # what release checks: grade_ids, markers, points
    ids = [(cell.metadata.get("nbgrader") or {}).get("grade_id") for cell in source.cells]
    assert ids == [None, "total_text", "total", "total_tests"]  # cell-<hex> ids replaced
    assert source.cells[3].metadata.nbgrader["points"] == 2
    assert assignment_problems(done.folder) == []

    # What assign wrote, edited by hand, is named; nothing is written; an unchanged rerun writes nothing.
    assert assign(master, tmp_path / "out").written == []
    (done.folder / "reference.py").write_text("# mine\n")
    (done.folder / "hidden" / "test_total.py").write_text("# mine\n")
    with pytest.raises(AssignRefused) as refused:
        assign(master, tmp_path / "out")
    assert [line.split(": ")[0] for line in refused.value.problems] == [
        str(done.folder / "hidden" / "test_total.py"),
        str(done.folder / "reference.py"),
    ]


def test_course_validate_names_each_assignment_problem_with_its_place(tmp_path, course):
    assert course("init", str(tmp_path / "c")).code == 0
    folder = tmp_path / "c" / "assignments" / "example"
    hidden = folder / "hidden" / "test_mean.py"
    hidden.write_text(hidden.read_text().replace('question("mean")', 'question("meen")'))
    notebook = json.loads((folder / "source" / "example.ipynb").read_text())
    notebook["cells"][3]["metadata"]["nbgrader"]["grade_id"] = "average_tests"
    notebook["cells"][0]["source"] = "# Averages\n\n\\(\\bar{x}\\) by hand"
    (folder / "source" / "example.ipynb").write_text(json.dumps(notebook))
    reference = folder.parent / "references" / "reference.py"
    reference.write_text(reference.read_text().replace("def mean_of", "def mean"))
    result = course("validate", str(folder))
    assert result.code == 2
    notebook_file = folder / "source" / "example.ipynb"
    assert result.out.splitlines() == [
        f"{notebook_file}: cell 1: warning: Jupyter does not render '\\\\(\\\\bar{{x}}\\\\)': write $...$ or $$...$$",
        f"{notebook_file}: cell 4 (average_tests): a graded cell that belongs to no question: its grade_id begins "
        "with no question's id (mean)",
        f"{folder / 'assignment.toml'}: question mean: worth 1 point here, but its graded cells in example.ipynb "
        "hold 0",
        f"{hidden}: line 8: marked with question 'meen', which assignment.toml lacks (its questions: mean)",
        f"{reference}: reference numpy: defines no mean_of, which test_mean.py line 16 calls (reference.mean_of)",
    ]
    manifest = folder / "assignment.toml"
    manifest.write_text(manifest.read_text() + '\n[[questions.rubric]]\nid = "Bad id"\ntext = "x"\npoints = 1\n')
    assert course("validate", str(folder)).out.startswith(f"{manifest}: questions.0.rubric.0.id: String should match")


@pytest.mark.slow
@needs_sandbox
def test_grade_refuses_a_hidden_test_of_no_question_before_grading_anyone(tmp_path):
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    hidden = course / "assignments" / "example" / "hidden" / "test_mean.py"
    hidden.write_text(hidden.read_text().replace('question("mean")', 'question("meen")'))
    graded = run("autograder", "grade", "example", "assignments/example/known", "--out", "g", cwd=course)
    assert graded.returncode == 2
    assert graded.stderr.splitlines() == [
        f"autograder: {hidden.resolve()}:11: test_matches_the_reference[1] is marked with question 'meen', which "
        "assignment.toml lacks (its questions: mean)"
    ]
    assert not (course / "g" / "correct.json").exists()


def test_math_is_written_as_jupyter_renders_it():
    written = "Softmax \\(e^{x_i}\\) and \\[ \\sum_j e^{x_j} \\] but `\\(code\\)` stays."
    assert jupyter_math(written) == "Softmax $e^{x_i}$ and $$\\sum_j e^{x_j}$$ but `\\(code\\)` stays."
    assert unrendered_math(jupyter_math(written)) == []
    for name in SHIPPED:  # the shipped notebooks' 17 formulas render
        cells = json.loads((ASSIGNMENTS / name / "source" / f"{name}.ipynb").read_text())["cells"]
        assert not [cell for cell in cells if unrendered_math("".join(cell["source"]))]


def test_the_new_master_notebook_assigns_into_a_folder_that_validates(tmp_path):
    from autograder.authoring.template import new_master
    from autograder.suite import hidden_suite

    master = new_master("averages", tmp_path / "averages")
    assignment = load_assignment(assign(master).folder)
    assert [(q.id, q.points, q.functions, q.uses, q.manual) for q in assignment.questions] == [
        ("mean", 1, ["mean_of"], [], False),
        ("spread", 2, ["variance_of"], ["mean_of"], False),
        ("written", 2, [], [], True),
    ]
    assert assignment_problems(assignment.folder) == []
    assert assignment.answer_headings == {"written": "3. when does the mean mislead?"}
    for label in hidden_suite(assignment).plugin.labels.values():  # the docstring-sentence rule
        assert label["description"][:1].isupper() and label["description"].endswith("."), label


def _pure_nbgrader_notebook(path: Path) -> Path:
    """A notebook as nbgrader's Create Assignment toolbar makes it, and nothing else: cell-<hex> ids,
    solution markers, a graded test cell with a hidden region, a graded written answer."""
    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("# Sums\n\nWrite `total(x)`, \\(\\sum_i x_i\\)."),
        new_code_cell("import numpy as np"),
        _nbgrader_cell(
            new_code_cell("def total(x):\n    ### BEGIN SOLUTION\n    return float(np.sum(x))\n    ### END SOLUTION"),
            "cell-9b1c07e5",
            solution=True,
        ),
        _nbgrader_cell(
            new_code_cell(
                'assert total([1, 2]) == 3, "the total of 1 and 2 is 3"\n### BEGIN HIDDEN TESTS\n'
                'assert total(np.arange(5)) == 10, "the total of 0 to 4 is 10"\n### END HIDDEN TESTS'
            ),
            "cell-0aa1",
            grade=True,
            locked=True,
            points=2,
        ),
        new_markdown_cell("## Why\n\nWhen is a total misleading?"),
        _nbgrader_cell(new_markdown_cell("When values cancel."), "cell-77", grade=True, solution=True, points=1),
    ]
    nbformat.write(notebook, path)
    return path


def test_a_notebook_made_with_nbgraders_toolbar_alone_is_taken(tmp_path):
    done = assign(_pure_nbgrader_notebook(tmp_path / "Sums.ipynb"), tmp_path / "sums")
    assignment = load_assignment(done.folder)
    assert assignment.name == "sums"
    assert [(q.id, q.points, q.functions, q.manual) for q in assignment.questions] == [
        ("total", 2, ["total"], False),
        ("question_2", 1, [], True),
    ]
    source = read_source_notebook(assignment)
    check_source(assignment, source)
    assert "HIDDEN" not in nbformat.writes(source) and "$\\sum_i x_i$" in source.cells[0].source
    assert assignment_problems(done.folder) == []


@pytest.mark.slow
@needs_sandbox
def test_an_nbgrader_notebooks_tests_grade_in_the_sandbox(tmp_path):
    from autograder.batch import GradeOptions, grade_batch
    from autograder.submissions import find_submissions

    assignment = load_assignment(assign(_pure_nbgrader_notebook(tmp_path / "sums.ipynb"), tmp_path / "sums").folder)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "right.py").write_text("def total(x):\n    return sum(x)\n")
    (tmp_path / "in" / "shown_only.py").write_text("def total(x):\n    return 3 if len(x) == 2 else 0\n")
    submissions = find_submissions([tmp_path / "in"]).submissions
    result = grade_batch(assignment, submissions, tmp_path / "out", GradeOptions(jobs=1))
    graded = {Path(r.submission).name: r.questions[0] for r in result.reports}
    assert graded["right.py"].status == "passed"
    assert graded["shown_only.py"].status == "failed"  # the hidden region caught it
    assert graded["shown_only.py"].feedback.splitlines() == [
        "0 of 1 check passed; the one that fails shows: the total of 0 to 4 is 10.",
        "- The total of 0 to 4 is 10. Checked: The notebook's tests of total pass.",
    ]
    assert graded["right.py"].feedback == "the one check passed"


def test_submit_prints_the_problems_running_the_submission_as_the_site_does(monkeypatch, capsys, tmp_path):
    import service.handin.client
    from commands.autograder import main

    job = {
        "id": 7,
        "state": "graded",
        "server": "https://grades.example",
        "page": "/submissions/7/",
        "report": {
            "score": 0.0,
            "max_score": 1.0,
            "questions": [{"id": "mean", "score": 0.0, "max_score": 1.0, "status": "error", "feedback": "x"}],
            "errors": ["cell 2: NameError: name 'np' is not defined"],
        },
    }
    monkeypatch.setattr(service.handin.client, "submit", lambda *args, **kwargs: job)
    assert main(["submit", str(tmp_path / "a.ipynb"), "--assignment", "example", "--server", "https://x"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "Problems running your submission:",
        "  cell 2: NameError: name 'np' is not defined",
    ]
