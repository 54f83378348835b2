"""Practice checks (issue #51): hidden tests a student runs and never reads. Grading leaves them
out (they count in no score); ``run_practice`` runs them alone, in the real sandbox, and gives back
each one's sentence and pass or fail: never its code, its inputs or its message, whatever a hostile
submission does to smuggle them out (tests/hostile/leak_inputs.py, as the grading's never-leak tests
attack it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.grading import grade_submission
from autograder.practice import run_practice
from autograder.sandbox.runners import make_runner
from autograder.submissions import find_submissions
from autograder.suite import hidden_suite

from .conftest import ASSIGNMENTS, needs_sandbox

pytestmark = needs_sandbox
HOSTILE = Path(__file__).parent / "hostile"
PRACTICE = ["test_vector", "test_large_inputs_are_stable"]


@pytest.fixture(scope="module")
def assignment():
    """sequences-and-attention with two of softmax's hidden tests marked practice."""
    spec = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    softmax = spec.question("softmax").model_copy(update={"checks": dict.fromkeys(PRACTICE, "practice")})
    return spec.model_copy(update={"questions": [softmax if q.id == "softmax" else q for q in spec.questions]})


@pytest.fixture(scope="module")
def runner():
    return make_runner()


def submission(tmp_path, name: str, text: str, suffix: str = ".py"):
    path = tmp_path / f"{name}{suffix}"
    path.write_text(text)
    (found,) = find_submissions([path]).submissions
    return found


def test_practice_checks_run_alone_and_count_in_no_score(tmp_path, assignment, runner):
    honest = submission(
        tmp_path, "honest", (ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_vectorised.py").read_text()
    )
    reference = load_reference(assignment, "numpy")
    run = run_practice(assignment, honest, runner, reference, secret="s", question="softmax")
    assert run.problem is None
    sentences = {
        label["name"].split("[")[0]: label["description"] for label in hidden_suite(assignment).plugin.labels.values()
    }
    # pytest's parametrised copies of a test share its name: each is run and told as the same check.
    assert {check.sentence for check in run.checks} == {sentences[name] for name in PRACTICE}
    assert all(check.passed and check.question == "softmax" for check in run.checks)
    report = grade_submission(assignment, honest, runner, reference, secret="s", only_question="softmax")
    graded = {test.name for test in report.questions[0].tests}
    assert graded and not graded & set(PRACTICE)  # the grade never ran them
    assert report.score == 2.0


def test_a_practice_check_never_gives_away_its_code_or_inputs(tmp_path, assignment, runner):
    text = (HOSTILE / "leak_inputs.py").read_text()
    hostile = submission(tmp_path, "leak_inputs", text)
    run = run_practice(assignment, hostile, runner, load_reference(assignment, "numpy"), secret="s")
    told = run.model_dump_json()
    assert run.checks and not any(check.passed for check in run.checks)
    assert "SECRET" not in told  # nothing the submission printed or raised with the inputs
    hidden = (ASSIGNMENTS / "sequences-and-attention" / "hidden" / "test_softmax.py").read_text().splitlines()
    code = {line.strip() for line in hidden if len(line.strip()) > 20 and not line.strip().startswith(('"""', "#"))}
    assert [line for line in code if line in told] == []
    assert set(json.loads(told)["checks"][0]) == {"question", "sentence", "passed", "status"}


def test_an_unreadable_submission_is_told_why_and_runs_nothing(tmp_path, assignment, runner):
    broken = submission(tmp_path, "broken", "{ not a notebook", ".ipynb")
    run = run_practice(assignment, broken, runner, load_reference(assignment, "numpy"))
    assert run.checks == [] and run.problem
