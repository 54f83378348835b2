"""Feedback a student can act on: every check's text a whole sentence, and the look at what a failing
question gave the functions it uses (autograder/causes.py) safe against a submission that forges it."""

from __future__ import annotations

import re

import pytest

from autograder.assignment import load_assignment
from autograder.batch import GradeOptions, grade_batch, load_reference
from autograder.explain import same_way
from autograder.grading import grade_submission
from autograder.submissions import find_submissions
from autograder.suite import hidden_suite

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .fake_runner import InProcessRunner

SUITES = [
    ASSIGNMENTS / "sequences-and-attention",
    ASSIGNMENTS / "attention-not-explanation",
    ROOT / "course" / "skeleton" / "assignments" / "example",
]


def _starts_a_sentence(text: str, functions: set[str]) -> bool:
    """A capital letter, or code (a function of the assignment, a call, a name with an underscore)."""
    first = re.split(r"[\s(]", text, maxsplit=1)[0]
    return text[:1].isupper() or first in functions or "_" in first


@pytest.mark.parametrize("folder", SUITES, ids=lambda folder: folder.name)
def test_every_checks_text_is_one_whole_sentence(folder):
    assignment = load_assignment(folder)
    labels = list(hidden_suite(assignment).plugin.labels.values())
    assert labels
    for label in labels:
        text = label["description"]
        assert text[:1].isupper() and text.endswith(".") and "\n" not in text, label
        assert not re.search(r"[:;,]\.$", text) and len(text) <= 200, label  # never cut mid-way


def test_every_message_a_known_submission_gets_is_a_whole_sentence():
    for folder in SUITES[:2]:
        assignment = load_assignment(folder)
        functions = {f for question in assignment.questions for f in question.functions}
        reference = load_reference(assignment, "numpy")
        messages = 0
        for submission in find_submissions([folder / "known"]).submissions:
            report = grade_submission(assignment, submission, InProcessRunner(), reference, secret="first")
            for question in report.questions:
                for test in question.tests:
                    if test.status == "passed":
                        continue
                    messages += 1
                    assert test.message.endswith("."), (submission.path.name, test.message)
                    assert _starts_a_sentence(test.message, functions), (submission.path.name, test.message)
                    if "checks passed" in question.feedback:  # not when a function is missing altogether
                        # Each way of failing once, what went wrong before the check's rule; the same
                        # way again folded under it.
                        heads = [
                            line[2:].split(" Checked: ")[0]
                            for line in question.feedback.splitlines()
                            if line.startswith("- ")
                        ]
                        assert f"- {test.message} Checked: {test.description}" in question.feedback or (
                            any(same_way(head) == same_way(test.message) for head in heads)
                            and "the same way." in question.feedback
                        )
        assert messages > 20, folder  # the known wrong submissions fail many checks


# The submission rewrites the worker's answer to "what did the watched functions get?": records of
# every wrong type, one array named by many records, and many more records than the worker keeps.
FORGES_THE_WATCH = """
import sys
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x)  # no maximum subtracted: overflows on large scores
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


def _worker_globals():
    # The worker's module's names, reached through the frames that run this cell (the submission's
    # __main__ is its own, not the worker's).
    frame = sys._getframe()
    while "_watched" not in frame.f_globals:
        frame = frame.f_back
    return frame.f_globals


def _forged():
    blob = np.zeros(1 << 20).tobytes()
    array = {"$array": 0, "dtype": "<f8", "shape": [1 << 17]}
    calls = [{"name": "softmax", "args": [array], "kwargs": {}, "value": array} for _ in range(10_000)]
    calls += [None, 7, {"name": 3}, {"name": "softmax", "args": "x", "kwargs": []}]
    return {"ok": True, "calls": calls, "dropped": "none"}, [blob]


_worker_globals()["_watched"] = _forged
"""


@needs_sandbox
def test_a_forged_watch_changes_no_score_and_breaks_nothing(tmp_path):
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "forger.py").write_text(FORGES_THE_WATCH)
    (folder / "honest.py").write_text(FORGES_THE_WATCH.replace('_worker_globals()["_watched"] = _forged', ""))
    result = grade_batch(
        assignment, find_submissions([folder]).submissions, tmp_path / "out", GradeOptions(reference="numpy", jobs=1)
    )
    assert not result.failed
    reports = {report.student: report for report in result.reports}
    forged, honest = reports["forger"], reports["honest"]
    assert [(q.id, q.status, q.score) for q in forged.questions] == [
        (q.id, q.status, q.score) for q in honest.questions
    ]
    attention = next(q for q in honest.questions if q.id == "attention")
    assert attention.status == "partial"
    # (after the known mistake it makes, named first: mistakes.py)
    assert "\nYour softmax fails its own tests; fix it first: it goes wrong" in attention.feedback
    forged_attention = next(q for q in forged.questions if q.id == "attention")
    # What the forger's records could not be read as: none kept, so the grader cannot tell.
    assert "\nYour softmax fails its own tests; fix it first: these failures may" in forged_attention.feedback
