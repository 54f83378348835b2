"""Gradescope: the exported autograder bundle, run as Gradescope runs it, gives the same verdicts as
grading here; and the results file follows Gradescope's specification."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
import zipfile

import jsonschema
import pytest

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

KNOWN = ASSIGNMENTS / "attention-not-explanation" / "known"
# Gradescope's results.json, field by field as its autograder specification lists them
# (gradescope-autograders.readthedocs.io, "Autograder Specifications", "Output format"): nothing else
# may be written, and each field has the specification's type.
FORMATS = ["text", "html", "simple_format", "md", "ansi"]
VISIBILITY = ["hidden", "after_due_date", "after_published", "visible"]
TEST_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number"},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": {"enum": FORMATS},
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": {"enum": FORMATS},
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": {"enum": VISIBILITY},
        "extra_data": {"type": "object"},
    },
}
RESULTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],  # a score, or one on every test
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "integer", "minimum": 0},  # whole seconds
        "output": {"type": "string"},
        "output_format": {"enum": FORMATS},
        "test_output_format": {"enum": FORMATS},
        "test_name_format": {"enum": FORMATS},
        "visibility": {"enum": VISIBILITY},
        "stdout_visibility": {"enum": VISIBILITY},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST_SCHEMA},
        "leaderboard": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "value"],
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": ["number", "string"]},
                    "order": {"enum": ["asc", "desc"]},
                },
            },
        },
    },
}


def follows_the_specification(results: dict) -> dict:
    jsonschema.validate(results, RESULTS_SCHEMA)  # raises, naming the field, where it does not
    if "tests" in results and "score" not in results:
        assert all("score" in test for test in results["tests"])
    return results


def test_the_schema_catches_what_the_specification_does_not_allow():
    good = {"score": 1.5, "execution_time": 2, "tests": [{"score": 1, "max_score": 2, "name": "q", "number": "1"}]}
    follows_the_specification(good)
    for bad in (
        {**good, "execution_time": 2.5},
        {**good, "visibility": "soon"},
        {**good, "elapsed": 1},
        {**good, "tests": [{"score": 1, "number": 1}]},
        {"output": "no score anywhere"},
    ):
        try:
            follows_the_specification(bad)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"accepted {bad}")


def autograder(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=env,
    )


def laid_out(tmp_path):
    """The exported zip unpacked as Gradescope lays it out: ROOT/source, ROOT/submission, ROOT/results."""
    bundle = tmp_path / "autograder.zip"
    made = autograder("export", "gradescope", "attention-not-explanation", "--out", bundle)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        archive.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        assert modes[name] & stat.S_IXUSR  # Gradescope runs them as they are
        (root / "source" / name).chmod(0o755)
    assert {
        "project/pyproject.toml",
        "project/autograder/grading.py",
        "course/course.toml",
        "course/assignments/attention-not-explanation/assignment.toml",
        "course/assignments/references/numpy_reference.py",
        "course/assignments/.grader-secret",
    } <= names
    # Of known/, what names a known mistake in feedback, as grade does: the files with a sentence (issue #46).
    known = "course/assignments/attention-not-explanation/known/"
    verdicts = tomllib.loads((KNOWN / "verdicts.toml").read_text())
    mistakes = {f"{known}{file}" for file, entry in verdicts.items() if "mistake" in entry}
    assert {name for name in names if name.startswith(known)} == mistakes | {f"{known}verdicts.toml"}
    assert f"{known}top_pairs_ties_reversed.py" in mistakes and not any("correct" in name for name in mistakes)
    assert not any("__pycache__" in name for name in names)
    (root / "submission").mkdir()
    return root


def run_autograder(root):
    env = {**os.environ, "GRADEWRIGHT_ROOT": str(root), "PYTHON": sys.executable}
    completed = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True, env=env, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    return follows_the_specification(json.loads((root / "results" / "results.json").read_text()))


@pytest.mark.slow
@needs_sandbox
def test_the_bundle_run_as_gradescope_runs_it_gives_the_same_verdicts(tmp_path):
    root = laid_out(tmp_path)
    shutil.copy(KNOWN / "top_pairs_ties_reversed.py", root / "submission" / "answer.py")
    results = run_autograder(root)

    here = tmp_path / "here"
    assert (
        autograder(
            "grade",
            "attention-not-explanation",
            KNOWN / "top_pairs_ties_reversed.py",
            "--out",
            here,
            "--reference",
            "numpy",
        ).returncode
        == 0
    )
    expected = follows_the_specification(json.loads((here / "top_pairs_ties_reversed.gradescope.json").read_text()))
    assert results["score"] == expected["score"] and 0 < results["score"] < 7
    assert [(t["number"], t["name"], t["score"], t["max_score"]) for t in results["tests"]] == [
        (t["number"], t["name"], t["score"], t["max_score"]) for t in expected["tests"]
    ]
    # The feedback as grade words it, the known mistake's sentence first (issue #46).
    assert [t["output"] for t in results["tests"]] == [t["output"] for t in expected["tests"]]
    assert results["tests"][0]["output"].startswith("Your top_pairs breaks ties by the last position first")
    # Gradescope's specification: every test named and numbered, the hand-graded question informational.
    assert all({"number", "name", "score", "max_score", "output", "visibility"} <= set(t) for t in results["tests"])
    written = results["tests"][3]
    assert (written["max_score"], "status" in written) == (0, False)
    assert results["extra_data"]["sha256"] == expected["extra_data"]["sha256"]
    assert isinstance(results["execution_time"], int) and results["execution_time"] >= 1
    assert isinstance(expected["execution_time"], int) and results["visibility"] == "visible"


def test_a_submission_folder_without_one_notebook_gets_a_results_file_saying_why(tmp_path):
    root = laid_out(tmp_path)
    results = run_autograder(root)
    assert results["score"] == 0 and results["output"].startswith("Nothing to grade:")
    for name in ("a.py", "b.py"):
        (root / "submission" / name).write_text("x = 1\n")
    results = run_autograder(root)
    assert results == {"score": 0, "output": "Hand in one notebook, attention-not-explanation.ipynb; found a.py, b.py."}
