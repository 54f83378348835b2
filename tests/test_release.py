"""`autograder release`: the student notebook, made with nbgrader's preprocessors."""

from __future__ import annotations

import json
import os
import re
import shutil

import nbformat
import pytest

from autograder.assignment import load_assignment
from autograder.errors import ReleaseError
from autograder.public_tests import check_notebook
from autograder.release import release, secret_lines
from commands.autograder import main as autograder_main

from .conftest import ASSIGNMENTS

NAMES = ["sequences-and-attention", "attention-not-explanation"]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("released")
    return {name: release(load_assignment(ASSIGNMENTS / name), out / name) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_released_notebook_is_valid_and_locked_with_stubs(released, name):
    notebook = nbformat.read(released[name], as_version=4)
    nbformat.validate(notebook)
    solutions = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    assert solutions and all("raise NotImplementedError()" in c.source for c in solutions)
    tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    assert tests and all(c.metadata.get("editable") is False and c.metadata.get("deletable") is False for c in tests)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")


@pytest.mark.parametrize("name", NAMES)
def test_no_file_under_the_release_folder_holds_hidden_tests_or_solutions(released, name):
    assignment = load_assignment(ASSIGNMENTS / name)
    source = nbformat.read(assignment.notebook_path, as_version=4)
    secrets = secret_lines(assignment, source)
    assert len(secrets) > 20  # the check has something to look for
    for path in released[name].parent.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
            assert [line for line in secrets if line in text] == []


@pytest.mark.parametrize("name", NAMES)
def test_released_notebook_fails_its_public_tests_and_passes_once_solved(released, name, tmp_path):
    results = check_notebook(released[name])
    assert results and not any(result.passed for result in results)
    assert {result.message for result in results} == {"NotImplementedError"}

    source = nbformat.read(load_assignment(ASSIGNMENTS / name).notebook_path, as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    student = nbformat.read(released[name], as_version=4)
    for cell in student.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            cell.source = re.sub(r"\s*### (BEGIN|END) SOLUTION", "", answers[grade_id])
    solved = tmp_path / f"{name}.ipynb"
    nbformat.write(student, solved)
    results = check_notebook(solved)
    assert results and all(result.passed for result in results), results


def _broken_copy(tmp_path, mutate):
    folder = tmp_path / "assignment"
    shutil.copytree(ASSIGNMENTS / "sequences-and-attention", folder, ignore=shutil.ignore_patterns("known"))
    manifest = folder / "assignment.toml"
    manifest.write_text(
        manifest.read_text().replace('references = "../references"', f'references = "{ASSIGNMENTS / "references"}"')
    )
    notebook_path = folder / "source" / "sequences-and-attention.ipynb"
    notebook = json.loads(notebook_path.read_text())
    mutate(notebook)
    notebook_path.write_text(json.dumps(notebook))
    return folder


def _cell(notebook, grade_id):
    return next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda nb: _cell(nb, "softmax").update(source="def softmax(x):\n    return x"),
            "cell 5 (softmax): a solution cell needs ### BEGIN SOLUTION and ### END SOLUTION",
        ),
        (
            lambda nb: _cell(nb, "softmax_tests")["metadata"]["nbgrader"].update(points=5),
            "question 'softmax' is worth 2 points in assignment.toml but its graded cells hold 5",
        ),
        (
            lambda nb: _cell(nb, "attention")["metadata"]["nbgrader"].update(grade_id="softmax"),
            "cell 9: grade_id 'softmax' is already used by cell 5",
        ),
        (
            lambda nb: _cell(nb, "softmax_tests").update(
                source="".join(_cell(nb, "softmax_tests")["source"])
                + "\n### BEGIN HIDDEN TESTS\nassert True\n### END HIDDEN TESTS"
            ),
            "holds ### BEGIN HIDDEN TESTS; hidden tests belong in hidden/test_*.py, which the grader runs",
        ),
    ],
    ids=["no-delimiters", "points-disagree", "duplicate-grade-id", "hidden-region"],
)
def test_bad_source_notebooks_are_refused_with_one_line(tmp_path, mutate, message):
    folder = _broken_copy(tmp_path, mutate)
    with pytest.raises(ReleaseError) as caught:
        release(load_assignment(folder), tmp_path / "out")
    assert message in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_release_command_prints_the_notebook_path(tmp_path, capsys):
    code = autograder_main(["release", str(ASSIGNMENTS / "attention-not-explanation"), "--out", str(tmp_path)])
    assert code == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "attention-not-explanation.ipynb")


def test_one_rule_maps_a_cells_grade_id_to_its_question():
    from autograder.assignment import question_of_cell

    ids = ["softmax", "attention", "self_attention", "written"]
    assert question_of_cell("softmax", ids) == "softmax"
    assert question_of_cell("softmax_tests", ids) == "softmax"
    assert question_of_cell("self_attention_tests", ids) == "self_attention"  # the longest id wins
    assert question_of_cell("written_1", ids) == "written"
    assert question_of_cell("attentions", ids) is None  # a prefix must end at an underscore
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    assert assignment.question_of_cell("multi_head_tests").id == "multi_head"


def test_files_the_project_writes_get_the_users_normal_permissions(tmp_path):
    from course.exports import export_checks
    from course.imports import import_checks

    previous = os.umask(0o022)
    try:
        released = release(load_assignment(ASSIGNMENTS / "sequences-and-attention"), tmp_path / "release")
        exported = export_checks([ASSIGNMENTS.parent / "lesson_data"], "gift", tmp_path / "checks.gift").path
        imported, _ = import_checks(exported, tmp_path / "imported.lesson.json")
        folder = export_checks([ASSIGNMENTS.parent / "lesson_data"], "olx", tmp_path / "olx").path
    finally:
        os.umask(previous)
    for path in (released, exported, imported):
        assert path.stat().st_mode & 0o777 == 0o644, path
    assert folder.stat().st_mode & 0o777 == 0o755
    assert list(tmp_path.glob(".*")) == []  # no temporary file left behind
