"""The shipped assignments re-expressed as master notebooks (issue #36): each writes a folder with
the same questions, hidden tests, references, notebook cells and verdicts as the shipped folder,
and known submissions graded through both get the same verdicts, scores and feedback."""

from __future__ import annotations

import ast
import shutil
import tomllib
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.assign import assign
from autograder.release import read_source_notebook

from .conftest import ASSIGNMENTS, needs_sandbox

pytestmark = pytest.mark.timeout(300)
SHIPPED = ("sequences-and-attention", "attention-not-explanation")


@pytest.fixture(scope="module")
def masters(tmp_path_factory) -> dict[str, Path]:
    """Each shipped master notebook's folder, written once for the module's tests (they only read it)."""
    folder = tmp_path_factory.mktemp("masters")
    return {name: assign(ASSIGNMENTS / name / f"{name}.master.ipynb", folder / name).folder for name in SHIPPED}


def _functions(folder: Path) -> dict[str, str]:
    """Every hidden test function, by name, as source: what the grader runs."""
    found = {}
    for path in sorted(folder.glob("hidden/test_*.py")):
        text = path.read_text()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Assign) and not (
                isinstance(node, ast.Assign) and ast.unparse(node).startswith("pytestmark")
            ):
                found[f"{path.name}:{ast.unparse(node)[:40]}"] = ast.unparse(node)
    return found


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_master_notebooks_write_what_the_folders_hold(name, masters):
    """The generated folder has the same questions, hidden tests, references, source notebook cells
    and known verdicts as the shipped one; only the order of questions follows the notebook's."""
    today, generated = load_assignment(ASSIGNMENTS / name), load_assignment(masters[name])
    key = lambda q: q.id  # noqa: E731
    assert sorted(today.questions, key=key) == sorted(generated.questions, key=key)
    assert today.reference_paths == generated.reference_paths
    assert (today.limits, today.charge_dependents, today.title) == (
        generated.limits,
        generated.charge_dependents,
        generated.title,
    )
    assert _functions(ASSIGNMENTS / name) == _functions(generated.folder)
    assert today.answer_headings == generated.answer_headings
    shipped_cells = read_source_notebook(today).cells
    generated_cells = read_source_notebook(generated).cells
    assert [c.source for c in shipped_cells] == [c.source for c in generated_cells]
    shipped_verdicts = tomllib.loads((today.folder / "known" / "verdicts.toml").read_text())
    for file, table in tomllib.loads((generated.folder / "known" / "verdicts.toml").read_text()).items():
        if file != "correct.py":
            assert table == shipped_verdicts[file], file  # its verdicts, mistake sentence and feedback rules


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_master_notebooks_grade_known_submissions_as_the_folders_do(name, masters, tmp_path, monkeypatch):
    from autograder.batch import GradeOptions, grade_batch
    from autograder.submissions import find_submissions

    monkeypatch.setenv("GRADEWRIGHT_SECRET", "one secret for both folders")  # the same draws
    known = ASSIGNMENTS / name / "known"
    picked = sorted(p for p in known.iterdir() if p.suffix in {".py", ".ipynb"})[::4]  # a spread of styles
    folder = tmp_path / "submissions"
    folder.mkdir()
    for path in picked:
        shutil.copy(path, folder)
    submissions = find_submissions([folder]).submissions
    graded = {}
    for label, source in (("today", ASSIGNMENTS / name), ("master", masters[name])):
        assignment = load_assignment(source)
        result = grade_batch(assignment, submissions, tmp_path / label, GradeOptions(reference="numpy", jobs=2))
        graded[label] = {
            Path(r.submission).name: {q.id: (q.status, q.score, q.feedback) for q in r.questions}
            for r in result.reports
        }
    assert len(graded["today"]) == len(picked) and graded["today"] == graded["master"]
