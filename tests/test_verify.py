"""`autograder verify`: every known submission graded under several secrets, through the sandbox;
verdicts that depend on the secret, and answers that pass only by a hair, are listed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from autograder.testing import stricter, tolerance

from .conftest import needs_sandbox

pytestmark = pytest.mark.timeout(300)

LUCKY = """# Right only when the first value is above 3: its verdict is the draw's.
import numpy as np


def mean_of(values):
    return float(np.mean(values)) if values[0] > 3 else 0.0
"""
FLOAT32_EDGE = """# Right to 6e-5 in float32: inside float32's tolerance (1.2e-4), not inside a quarter of it.
import numpy as np


def mean_of(values):
    return np.float32(np.mean(values) * (1 + 6e-5))
"""


def run(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=240
    )


@pytest.fixture
def course(tmp_path):
    assert run_course("init", "c", cwd=tmp_path).returncode == 0
    return tmp_path / "c"


def run_course(*args, cwd):
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@needs_sandbox
def test_a_new_courses_example_holds_under_fresh_secrets(course):
    completed = run("verify", "example", "--secrets", "2", cwd=course)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "example: 1 known submission, 2 secrets, 4 gradings (margin 4)",  # correct.py at 1 and at 1/4
        "ok   correct.py",
        "mutants mean: 100%, 5 of 5 mutants killed",  # the hidden tests tested (tests/test_mutants.py)
        "every verdict holds",
    ]


@needs_sandbox
def test_a_verdict_that_depends_on_the_secret_and_a_pass_by_a_hair_are_listed(course):
    known = course / "assignments" / "example" / "known"
    (known / "lucky.py").write_text(LUCKY)
    (known / "float32_edge.py").write_text(FLOAT32_EDGE)
    verdicts = known / "verdicts.toml"
    verdicts.write_text(
        verdicts.read_text() + '\n["lucky.py"]\nmean = "partial"\n\n["float32_edge.py"]\nmean = "passed"\n'
    )

    # Under s1 lucky.py gets its partial; under s7 all three of its draws happen to be above 3.
    completed = run("verify", "example", "--secret", "s1", "--secret", "s7", cwd=course)
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "example: 3 known submissions, 2 secrets, 10 gradings (margin 4)"
    assert lines[1] == "ok   correct.py"
    assert lines[2:4] == [
        "FAIL lucky.py",
        "     mean: expected partial, got passed under 1 of 2 secrets (first: s7): all 3 checks passed",
    ]
    assert lines[4] == "FAIL float32_edge.py"
    assert lines[5].startswith(
        "     mean: expected passed, got failed with tolerances divided by 4 under 2 of 2 secrets (first: s1): "
        "Wrong values in the mean of 1 random value: the largest difference from the expected ones is"
    ) and lines[5].endswith("Checked: The mean of random values matches the reference.")
    assert lines[6] == "mutants mean: 100%, 5 of 5 mutants killed"  # the hidden tests tested (tests/test_mutants.py)
    assert lines[7] == "2 verdicts differ from known/verdicts.toml"  # each once, however many secrets

    (known / "forgotten.py").write_text(LUCKY)  # a known file the instructor did not list: said, not graded
    replayed = run("verify", "example", "--secret", "s1", "--margin", "1", cwd=course)
    assert "skip forgotten.py: not in known/verdicts.toml, so not graded" in replayed.stdout
    assert replayed.returncode == 0, replayed.stdout  # at the full tolerance float32_edge.py passes
    assert "1 secret, 3 gradings (margin 1)" in replayed.stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "known/verdicts.toml: not found; list each known submission's expected verdict per question there"),
        (
            '["correct.py"]\nmean = "passed"\nmean2 = "passed"\n',
            "known/verdicts.toml: ['correct.py'] mean2: no such question (its questions: mean)",
        ),
        (
            '["correct.py"]\nmean = "fine"\n',
            "known/verdicts.toml: ['correct.py'] mean = 'fine' is not a verdict (one of error, failed,",
        ),
        (
            '["../../../course.toml"]\nmean = "passed"\n',
            "known/verdicts.toml: ['../../../course.toml']: no such file in",
        ),
        ('["missing.py"]\nmean = "passed"\n', "known/verdicts.toml: ['missing.py']: no such file in"),
        (
            '["correct.py"\nmean = "passed"\n',
            "known/verdicts.toml: Expected ']' at the end of a table declaration (at line 1, column 14)",
        ),
        ('["correct.py"]\n', "known/verdicts.toml: ['correct.py'] lists no verdict"),
        ("", "known/verdicts.toml: lists no known submission"),
        (
            '["correct.py"]\nmean = "passed"\n["correct.py".feedback]\nmean = { say = ["x"] }\n',
            "known/verdicts.toml: ['correct.py'.feedback] mean: say: Extra inputs are not permitted",
        ),
        (
            '["correct.py"]\nmean = "passed"\n["correct.py".feedback]\nmedian = { says = ["x"] }\n',
            "known/verdicts.toml: ['correct.py'.feedback] median: no such question (its questions: mean)",
        ),
        (
            '["correct.py"]\nmean = "passed"\nfeedback = 3\n',
            "known/verdicts.toml: ['correct.py'.feedback] should be a table of question = { says = [...], never = [...] }",
        ),
    ],
)
def test_a_bad_verdicts_file_is_one_line_naming_it_and_the_place(course, content, message):
    verdicts = course / "assignments" / "example" / "known" / "verdicts.toml"
    if content is None:
        verdicts.unlink()
    else:
        verdicts.write_text(content)
    completed = run("verify", "example", "--secrets", "1", cwd=course)
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr.startswith("autograder: ") and message in completed.stderr, completed.stderr
    assert len(completed.stderr.splitlines()) == 1 and "Traceback" not in completed.stderr


def test_stricter_divides_every_tolerance_while_its_block_runs():
    rtol, atol = tolerance(np.float32)
    with stricter(4):
        assert tolerance(np.float32) == (rtol / 4, atol / 4)
        assert tolerance(np.float64) == (rtol / 4, atol / 4)  # one rule for every dtype
    with pytest.raises(RuntimeError), stricter(2):
        raise RuntimeError
    assert tolerance(np.float32) == (rtol, atol)


@needs_sandbox
def test_feedback_is_held_to_its_rules_as_verdicts_are(course):
    """``["file".feedback]`` rules: a phrase the feedback must say, or must never say, is checked on
    every grading, and a broken rule is listed as a verdict is."""
    verdicts = course / "assignments" / "example" / "known" / "verdicts.toml"
    verdicts.write_text(verdicts.read_text() + '\n["correct.py".feedback]\nmean = { says = ["checks passed"] }\n')
    completed = run("verify", "example", "--secret", "s1", "--margin", "1", cwd=course)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    verdicts.write_text(verdicts.read_text().replace('says = ["checks passed"]', 'never = ["all 3"], says = ["why"]'))
    completed = run("verify", "example", "--secret", "s1", "--margin", "1", cwd=course)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[1:] == [
        "FAIL correct.py",
        '     mean: expected feedback saying "why", got feedback without it under 1 of 1 secret (first: s1): '
        "all 3 checks passed",
        '     mean: expected feedback never saying "all 3", got feedback saying it under 1 of 1 secret (first: s1): '
        "all 3 checks passed",
        "mutants mean: 100%, 5 of 5 mutants killed",
        "2 feedback rules of known/verdicts.toml are broken",
    ]
