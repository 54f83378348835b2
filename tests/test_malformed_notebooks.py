"""Files that are valid JSON but not Jupyter notebooks, graded through the real command into the real
gradebook: each is its student's error (one line saying why, a zero), recorded like any graded
submission so that a rerun skips it; never "the grader failed", which is retried on every run. Nothing
in them (nesting 100,000 deep, 50,000 cells) crashes or stalls the grader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.submissions import NOT_A_NOTEBOOK, Unreadable, extract_bytes

from .conftest import ROOT, needs_sandbox
from .gradebook_view import recorded

ASSIGNMENT = "sequences-and-attention"
SOFTMAX = (
    "import numpy as np\n\n\ndef softmax(x, axis=-1):\n"
    "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n"
)


def code(source: object = SOFTMAX, **more: object) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None} | more


def notebook(cells: object, **more: object) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5} | more)


def nested(depth: int, opening: str, closing: str, inner: str = "1") -> str:
    return opening * depth + inner + closing * depth


# student: (the file's text, the one line their report gives)
MALFORMED = {
    "number_source": (notebook([code(), code(3)]), f"{NOT_A_NOTEBOOK}: cell 2's source is not text"),
    "dict_source": (notebook([code({"text": SOFTMAX})]), f"{NOT_A_NOTEBOOK}: cell 1's source is not text"),
    "list_source_with_a_number": (notebook([code(["x = 1\n", 2])]), f"{NOT_A_NOTEBOOK}: cell 1's source is not text"),
    "cells_not_a_list": (json.dumps({"cells": {"0": code()}, "nbformat": 4}), "the notebook has no list of cells"),
    "no_nbformat": (
        json.dumps({"cells": [code()], "metadata": {}}),
        f"{NOT_A_NOTEBOOK}: it has no nbformat version (every notebook Jupyter saves has one)",
    ),
    "old_nbformat": (
        notebook([code()], nbformat=3),
        f"{NOT_A_NOTEBOOK}: it is in nbformat 3; open it in Jupyter and save it again",
    ),
    "deep_metadata": (
        '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": ' + nested(10_000, '{"a": ', "}") + "}",
        f"{NOT_A_NOTEBOOK}: it is nested too deeply (hundreds of levels of objects and lists)",
    ),
    "deep_cell_metadata": (
        notebook([code()]).replace('"metadata": {}', '"metadata": {"x": ' + nested(100_000, "[", "]") + "}", 1),
        f"{NOT_A_NOTEBOOK}: it is nested too deeply (hundreds of levels of objects and lists)",
    ),
    "outputs_not_outputs": (
        notebook([code(outputs=[1, "text"])]),
        f"{NOT_A_NOTEBOOK}: cell 1's outputs are not a list of outputs",
    ),
    "cell_not_an_object": (
        notebook([code(), "print(1)"]),
        f"{NOT_A_NOTEBOOK}: cell 2 is not a cell (not a JSON object)",
    ),
    "no_cell_type": (
        notebook([{"source": SOFTMAX}]),
        f"{NOT_A_NOTEBOOK}: cell 1 has no cell_type of code, markdown or raw",
    ),
    "cell_metadata_a_list": (notebook([code(metadata=[])]), f"{NOT_A_NOTEBOOK}: cell 1's metadata is not an object"),
    "huge_number": (
        '{"cells": [], "nbformat": 4, "metadata": {"n": ' + "9" * 5000 + "}}",
        f"{NOT_A_NOTEBOOK}: it holds a number of more than {sys.get_int_max_str_digits()} digits",
    ),
}
# Valid notebooks that look odd: graded as usual.
VALID = {
    "fine": notebook([code()]),
    "many_cells": notebook([code("")] * 50_000 + [code()]),  # a huge number of cells: graded, in bounds
    "lines_as_a_list": notebook(
        [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Notes\n", "mine"]},
            code(SOFTMAX.splitlines(keepends=True)),
        ]
    ),
}


@pytest.mark.parametrize("student", sorted(MALFORMED))
def test_the_rule_says_why_a_file_is_not_a_notebook(student):
    """The grader's rule, which the site's upload form applies too."""
    text, reason = MALFORMED[student]
    with pytest.raises(Unreadable) as raised:
        extract_bytes(text.encode(), ".ipynb")
    assert str(raised.value) == reason


def test_odd_but_valid_notebooks_are_read():
    for student, text in VALID.items():
        assert "def softmax" in extract_bytes(text.encode(), ".ipynb").cells[-1].source, student


def grade(submitted: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            ASSIGNMENT,
            str(submitted),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--reference",
            "numpy",
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def graded_twice(tmp_path_factory):
    root = tmp_path_factory.mktemp("malformed")
    submitted = root / "submitted"
    for student, text in {**{s: t for s, (t, _) in MALFORMED.items()}, **VALID}.items():
        path = submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    out = root / "out"
    first = grade(submitted, out)
    reports = {
        path.name.removesuffix(".json"): json.loads(path.read_text())
        for path in out.glob("*.json")
        if not path.name.endswith(".gradescope.json")
    }
    after_first = recorded(out / "gradebook.db")
    second = grade(submitted, out)
    return {
        "first": first,
        "second": second,
        "reports": reports,
        "after_first": after_first,
        "after_second": recorded(out / "gradebook.db"),
    }


@pytest.mark.slow
@needs_sandbox
def test_each_malformed_notebook_is_its_students_error(graded_twice):
    first, reports = graded_twice["first"], graded_twice["reports"]
    assert first.returncode == 1, first.stderr  # some could not be read; all were graded
    assert "Traceback" not in first.stderr + first.stdout
    assert "RecursionError" not in first.stderr + json.dumps(reports)
    assert "the grader failed" not in first.stderr
    assert f"{len(MALFORMED) + len(VALID)} graded, 0 skipped, 0 failed" in first.stdout
    for student, (_, reason) in MALFORMED.items():
        report = reports[student]
        assert report["errors"] == [reason], student
        assert report["score"] == 0 and not report["ran"], student
        assert {q["status"] for q in report["questions"]} == {"error"}, student
        assert f"{student}: could not be read or run: {reason}" in first.stderr
    for student in VALID:
        softmax = next(q for q in reports[student]["questions"] if q["id"] == "softmax")
        assert reports[student]["ran"] and softmax["status"] == "passed", student


@pytest.mark.slow
@needs_sandbox
def test_each_is_recorded_once_and_a_rerun_skips_it(graded_twice):
    second = graded_twice["second"]
    students = len(MALFORMED) + len(VALID)
    assert second.returncode == 0, second.stderr  # nothing was graded this time, so nothing failed to run
    assert f"0 graded, {students} skipped, 0 failed" in second.stdout
    assert f"skipped {students} already graded" in second.stderr
    assert "the grader failed" not in second.stderr
    for student in MALFORMED:
        assert graded_twice["after_first"][student] == [(0.0, 6)], student  # one submission, six questions
    assert graded_twice["after_second"] == graded_twice["after_first"]
