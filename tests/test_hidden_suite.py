"""A hidden suite is collected once per grading process and run for each submission: each assignment
gets its own tests even where two suites share a file name, an edited suite is collected again, and a
suite that cannot be collected is refused in one line before anything is graded."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.grading import grade_submission
from autograder.submissions import find_submissions
from course.folder import init_course

from .conftest import ROOT
from .fake_runner import InProcessRunner

OTHER_SUITE = '''
import pytest

from autograder.testing import expect

pytestmark = pytest.mark.question("mean")


def test_of_the_other_assignment(student):
    """a check only the other assignment has"""
    expect(student.mean_of([1.0, 3.0]) == 5.0, "not what the other assignment asks")
'''
# Counted beside the suite's folder: a file written in it would be a change to the suite.
COUNTING_LINE = "\nimport os\nopen(os.path.dirname(__file__) + '/../imports.txt', 'a').write('imported\\n')\n"


@pytest.fixture
def course(tmp_path) -> Path:
    folder = tmp_path / "course"
    init_course(folder)
    return folder


def _verdicts(folder: Path, submission: Path) -> list[tuple[str, str, str]]:
    """Each test that graded ``submission`` in this process: its name, status and message."""
    assignment = load_assignment(folder)
    (found,) = find_submissions([submission]).submissions
    report = grade_submission(assignment, found, InProcessRunner(), load_reference(assignment, "numpy"))
    return [(test.name, test.status, test.message) for question in report.questions for test in question.tests]


def _graded_tests(folder: Path, submission: Path) -> list[str]:
    return [name for name, _, _ in _verdicts(folder, submission)]


@pytest.mark.timeout(60)
def test_two_assignments_with_a_test_file_of_the_same_name_each_run_their_own(course):
    example = course / "assignments" / "example"
    other = course / "assignments" / "other"
    shutil.copytree(example, other)
    (other / "hidden" / "test_mean.py").write_text(OTHER_SUITE)  # the same file name, other tests
    correct = example / "known" / "correct.py"
    ours = [f"test_matches_the_reference[{size}]" for size in (1, 7, 1000)]
    assert _graded_tests(example, correct) == ours
    assert _graded_tests(other, correct) == ["test_of_the_other_assignment"]
    assert _graded_tests(example, correct) == ours


@pytest.mark.timeout(60)
def test_a_suite_is_collected_once_and_again_when_it_changes(course):
    example = course / "assignments" / "example"
    hidden = example / "hidden" / "test_mean.py"
    hidden.write_text(hidden.read_text() + COUNTING_LINE)  # the module counts its imports
    correct = example / "known" / "correct.py"
    for _ in range(3):
        assert len(_graded_tests(example, correct)) == 3
    imports = example / "imports.txt"
    assert imports.read_text().count("imported") == 1
    hidden.write_text(hidden.read_text() + '\n\ndef test_added(student):\n    """added later"""\n')
    assert _graded_tests(example, correct)[-1] == "test_added"  # the edit is graded at once
    assert imports.read_text().count("imported") == 2


@pytest.mark.timeout(60)
def test_a_conftest_above_the_suite_is_not_the_suites(course):
    """A course repository's own conftest.py (or this project's tests/conftest.py, around its fixtures'
    assignments) is not the hidden suite's: it neither hides the hidden tests nor runs while grading."""
    example = course / "assignments" / "example"
    (course / "conftest.py").write_text(
        'import pathlib\n\npathlib.Path(__file__).with_name("imported.txt").write_text("imported")\n'
        'collect_ignore_glob = ["*"]\n'
    )
    tests = _graded_tests(example, example / "known" / "correct.py")
    assert tests == [f"test_matches_the_reference[{size}]" for size in (1, 7, 1000)]
    assert not (course / "imported.txt").exists()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        (
            "test_mean.py",
            "\ndef test_broken(:\n    pass\n",
            "test_mean.py, line 18: a hidden test cannot be collected: SyntaxError: invalid syntax",
        ),
        (
            "test_extra.py",
            "import numpy\nimport no_such_module\n",
            "test_extra.py, line 2: a hidden test cannot be "
            "collected: ModuleNotFoundError: No module named 'no_such_module'",
        ),
        (
            "conftest.py",
            "import no_such_module\n",
            "conftest.py: the hidden tests' conftest cannot be imported: "
            "ModuleNotFoundError: No module named 'no_such_module'",
        ),
    ],
)
def test_a_suite_that_cannot_be_collected_is_one_line_before_anything_is_graded(course, file, text, message):
    hidden = course / "assignments" / "example" / "hidden"
    with (hidden / file).open("a") as handle:
        handle.write(text)
    out = course / "out"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "example",
            "assignments/example/known/correct.py",
            "--out",
            str(out),
            "--jobs",
            "1",
            "--unsafe-no-sandbox",
        ],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=course,
    )
    assert completed.returncode == 2
    (error,) = [line for line in completed.stderr.splitlines() if not line.startswith("warning:")]
    assert error == f"autograder: {hidden.resolve() / message}"
    assert not list(out.glob("*.json"))  # nothing graded, nothing recorded as graded


@pytest.mark.timeout(120)
def test_the_shipped_suite_run_again_and_again_gives_each_submission_its_own_verdicts():
    """Nothing of one submission's run (fixtures, outcomes) reaches the next one's."""
    folder = ROOT / "assignments" / "sequences-and-attention"
    known = sorted((folder / "known").glob("*.py"))
    first = {path.name: _verdicts(folder, path) for path in known}
    again = {path.name: _verdicts(folder, path) for path in reversed(known)}
    assert first == again
    statuses = {name: {status for _, status, _ in verdicts} for name, verdicts in first.items()}
    assert statuses["correct_vectorised.py"] == {"passed"} and "failed" in statuses["missing_sqrt.py"]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_long_running_grading_process_keeps_nothing_of_each_run():
    """A service worker grades thousands of submissions with one collected suite: what each run
    leaves behind (pytest keeps every report it shows) would grow it by 0.1 MiB a submission."""
    folder = ROOT / "assignments" / "sequences-and-attention"
    failing = folder / "known" / "missing_sqrt.py"  # failures make the largest reports
    for _ in range(3):
        _verdicts(folder, failing)
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(20):
            _verdicts(folder, failing)
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 512 * 1024, after - before


@pytest.mark.timeout(120)
def test_a_gradescope_bundle_is_not_made_of_a_suite_that_cannot_be_collected(course):
    hidden = course / "assignments" / "example" / "hidden"
    (hidden / "test_extra.py").write_text("import no_such_module\n")
    bundle = course / "autograder.zip"
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "export", "gradescope", "example", "--out", str(bundle)],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=course,
    )
    assert completed.returncode == 2
    assert completed.stderr == (
        f"autograder: {hidden.resolve() / 'test_extra.py'}, line 1: a hidden test cannot be collected: "
        "ModuleNotFoundError: No module named 'no_such_module'\n"
    )
    assert not bundle.exists()
