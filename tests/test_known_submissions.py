"""Every known submission of both assignments, graded through the real sandbox, gets the verdict
its folder's verdicts.toml records: correct ones pass everything, and each wrong one loses points
on the question it gets wrong, and only there."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import GradeOptions, grade_batch
from autograder.submissions import find_submissions
from autograder.verify import known_feedback, known_verdicts

from .conftest import ASSIGNMENTS, needs_sandbox

pytestmark = needs_sandbox


def _cases():
    for name in ("sequences-and-attention", "attention-not-explanation"):
        assignment = load_assignment(ASSIGNMENTS / name)
        rules = known_feedback(assignment)
        for file, expected in known_verdicts(assignment).items():
            yield pytest.param(name, file, expected, rules.get(file, {}), id=f"{name}/{file}")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Both assignments' known submissions, graded once (two jobs) for all the tests below."""
    reports = {}
    for name in ("sequences-and-attention", "attention-not-explanation"):
        assignment = load_assignment(ASSIGNMENTS / name)
        submissions = find_submissions([ASSIGNMENTS / name / "known"]).submissions
        out = tmp_path_factory.mktemp(name)
        result = grade_batch(assignment, submissions, out, GradeOptions(reference="numpy", jobs=2))
        assert not result.failed
        for report in result.reports:
            reports[f"{name}/{Path(report.submission).name}"] = report
    return reports


def test_every_known_submission_has_a_verdict():
    for name in ("sequences-and-attention", "attention-not-explanation"):
        verdicts = known_verdicts(load_assignment(ASSIGNMENTS / name))
        files = {p.name for p in (ASSIGNMENTS / name / "known").iterdir() if p.suffix in {".py", ".ipynb"}}
        assert files == set(verdicts), name
        assert len(files) >= 10


@pytest.mark.parametrize("assignment, file, expected, rules", list(_cases()))
def test_known_submission_verdicts(graded, assignment, file, expected, rules):
    report = graded[f"{assignment}/{file}"]
    assert {q.id: q.status for q in report.questions} == expected
    feedback = {q.id: q.feedback for q in report.questions}
    for question, rule in rules.items():  # feedback held to the cause (verdicts.toml's feedback rules)
        assert all(phrase in feedback[question] for phrase in rule.says), (question, feedback[question])
        assert not any(phrase in feedback[question] for phrase in rule.never), (question, feedback[question])
    for question in report.questions:
        if question.status == "passed":
            assert question.score == question.max_score
        elif question.status != "partial":
            assert question.score == 0
        else:
            assert 0 < question.score < question.max_score


def test_feedback_names_the_problem_in_plain_words(graded):
    report = graded["sequences-and-attention/unstable_softmax.py"]
    softmax = next(q for q in report.questions if q.id == "softmax")
    assert (
        "- Large-magnitude inputs give finite probabilities (no overflow). Found NaN or infinity in" in softmax.feedback
    )
    released = graded["sequences-and-attention/released_unchanged.ipynb"]
    assert all(
        "raised NotImplementedError" in q.feedback or "NotImplementedError" in str(q.tests) for q in released.questions
    )


def test_a_cell_that_fails_is_reported_and_the_rest_still_run(graded):
    report = graded["sequences-and-attention/syntax_error_in_one_cell.ipynb"]
    assert any("SyntaxError" in error for error in report.errors)
    multi_head = next(q for q in report.questions if q.id == "multi_head")
    assert multi_head.feedback == "multi_head_attention is not defined in your submission"
    fresh = graded["sequences-and-attention/correct_fresh_notebook.ipynb"]
    assert any("NameError" in error for error in fresh.errors)
    assert fresh.score == fresh.max_score
    assert "starting" in fresh.output


def test_manual_questions_are_marked_for_hand_grading(graded):
    report = graded["attention-not-explanation/correct_source_notebook.ipynb"]
    written = next(q for q in report.questions if q.id == "written")
    assert written.status == "manual" and written.score == 0 and written.max_score == 3
    assert "2 written answers to read" in written.feedback
