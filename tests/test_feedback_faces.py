"""Everywhere a student reads feedback it is the one text autograder/explain.py writes, laid out for
the face: the feedback file, the Gradescope results, `gradewright.submit()` in a notebook (the site's
page and `autograder submit` are driven in tests/test_service_hand_ins.py), never a hidden input."""

from __future__ import annotations

import json

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.explain import checks_feedback, parts
from autograder.grading import grade_submission
from autograder.known import known_sentences
from autograder.reports import PER_STUDENT
from autograder.reports.model import TestOutcome
from autograder.submissions import find_submissions
from gradewright.cell import Feedback

from .conftest import ASSIGNMENTS
from .fake_runner import InProcessRunner

FOLDER = ASSIGNMENTS / "sequences-and-attention"
# The mutant of the reference that missing_sqrt.py matches, named below the known mistake (issue #50).
MUTANT = "Your scaled_dot_product_attention matches one that does not divide by np.sqrt(d_k)."


def _graded_missing_sqrt():
    assignment = load_assignment(FOLDER)
    (submission,) = find_submissions([FOLDER / "known" / "missing_sqrt.py"]).submissions
    runner = InProcessRunner()
    report = grade_submission(assignment, submission, runner, load_reference(assignment, "numpy"), secret="first")
    return report, runner, known_sentences(assignment)["missing_sqrt.py"]


def test_every_file_a_student_reads_opens_the_question_with_its_mistake(tmp_path):
    report, runner, sentence = _graded_missing_sqrt()
    attention = next(q for q in report.questions if q.id == "attention")
    lead, checks = parts(attention.feedback)
    assert lead[:2] == [sentence, MUTANT] and lead[2].startswith("1 of 8 checks passed")
    # Seven failing checks: each way of failing once, the others folded under it.
    assert len(checks) == 2 and checks[0][1] == "And 5 more checks fail the same way."
    assert checks[0][0].startswith("Wrong values in the weights of") and " Checked: " in checks[0][0]

    written = {kind: write(report, tmp_path) for kind, write in PER_STUDENT.items()}
    text = written["feedback"].read_text()
    assert f"(partial)\n    {sentence}\n    {MUTANT}\n    1 of 8 checks passed" in text
    gradescope = json.loads(written["gradescope"].read_text())
    test = next(t for t in gradescope["tests"] if t["name"] == attention.title)
    assert test["output"] == attention.feedback
    # No input the grader sent, and no value it expected, appears in anything the student reads.
    reference = load_reference(load_assignment(FOLDER), "numpy")
    shown = text + json.dumps(gradescope)
    for call in (call for call in runner.calls() if call["name"] == "scaled_dot_product_attention"):
        hidden = [*call["args"], *reference.attention(*call["args"][:3])]
        for value in (float(v) for array in hidden for v in array.flat[:3] if abs(v) > 0.01 and v != round(v)):
            assert f"{value:.4g}" not in shown, value


def test_a_notebooks_submit_shows_what_went_wrong_under_each_question():
    report, _, sentence = _graded_missing_sqrt()
    job = {
        "id": 7,
        "assignment": report.assignment,
        "state": "graded",
        "page": "submissions/7/",
        "report": {**report.model_dump(mode="json"), "final_score": report.final_score},
    }
    lines = Feedback(job, "http://hub/services/gradewright").summary().splitlines()
    at = lines.index("  attention: 0.38 / 3 partial")
    assert lines[at + 1] == f"      {sentence}"
    assert lines[at + 2] == f"      {MUTANT}"
    assert lines[at + 3].startswith("      1 of 8 checks passed")
    assert lines[at + 4].startswith("      - Wrong values in the weights of")
    softmax = lines.index("  softmax: 2 / 2 passed")
    assert lines[softmax + 1] == "  attention: 0.38 / 3 partial"  # a passed question says nothing more


def test_checks_that_fail_the_same_way_are_folded_and_their_common_problem_named():
    def failing(name: str, message: str) -> TestOutcome:
        return TestOutcome(question="q", name=name, description=f"Rule {name}.", status="failed", message=message)

    tests = [
        TestOutcome(question="q", name="ok", description="Rule ok.", status="passed"),
        failing("a", "Found NaN or infinity in softmax of inputs of magnitude around 1000."),
        failing("b", "Found NaN or infinity in softmax of inputs of magnitude around 1e+05."),
    ]
    assert checks_feedback(tests).splitlines() == [
        "1 of 3 checks passed; the 2 that fail show: NaN or infinity in softmax.",
        "- Found NaN or infinity in softmax of inputs of magnitude around 1000. Checked: Rule a.",
        "  And 1 more check fails the same way.",
    ]
    tests.append(failing("c", "Wrong shape for the output of 3 rows: 2 dimensions expected, 1 found."))
    lines = checks_feedback(tests).splitlines()
    assert lines[0] == "1 of 4 checks passed."  # nothing in common to name
    assert lines[-1] == "- Wrong shape for the output of 3 rows: 2 dimensions expected, 1 found. Checked: Rule c."
