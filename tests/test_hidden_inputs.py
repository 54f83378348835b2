"""Hidden inputs are drawn from the grader's secret, the submission's hash and the test: inputs that
leak from one submission are worth nothing for another, and a regrade of the same file is sent the
same inputs and gets the same verdict. Graded with the in-process runner (trusted code only)."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.grading import grade_submission
from autograder.submissions import find_submissions

from .conftest import ASSIGNMENTS
from .fake_runner import InProcessRunner

HONEST = (ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_vectorised.py").read_text()


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(ASSIGNMENTS / "sequences-and-attention")


def inputs_sent(assignment, path, secret):
    """The arguments of every graded call made to the submission at ``path``, and its report."""
    runner = InProcessRunner()
    (submission,) = find_submissions([path]).submissions
    report = grade_submission(assignment, submission, runner, load_reference(assignment, "numpy"), secret=secret)
    return [call["args"] for call in runner.calls()], report


def same(first, second) -> bool:
    if len(first) != len(second):
        return False
    return all(
        all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(x, y, strict=True))
        for x, y in zip(first, second, strict=True)
    )


def test_inputs_depend_on_the_submission_and_the_secret_not_on_the_run(tmp_path, assignment):
    original, edited = tmp_path / "a.py", tmp_path / "b.py"
    original.write_text(HONEST)
    edited.write_text(HONEST + "\n# the same code, another file\n")
    first, first_report = inputs_sent(assignment, original, "secret-1")
    again, again_report = inputs_sent(assignment, original, "secret-1")
    other_file, other_report = inputs_sent(assignment, edited, "secret-1")
    other_secret, _ = inputs_sent(assignment, original, "secret-2")
    assert len(first) > 30
    assert same(first, again)  # a regrade sends the same inputs...
    assert [q.status for q in first_report.questions] == [q.status for q in again_report.questions]
    assert not same(first, other_file)  # ...another file gets its own...
    assert not same(first, other_secret)  # ...and so does another course's secret
    assert first_report.score == other_report.score == 10
