"""Feedback that names the mistake first (autograder/mistakes.py): every known wrong submission of
both assignments gets its own sentence first; a second implementation of each mistake, written
differently, gets it too; a mistake no known submission makes gets none. Graded with the
in-process runner (trusted code only); tests/test_known_submissions.py grades through the sandbox."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.errors import AssignmentError
from autograder.grading import grade_submission
from autograder.known import known_sentences, known_verdicts
from autograder.submissions import find_submissions
from autograder.verify import verify_known

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .fake_runner import InProcessRunner

FIXTURES = Path(__file__).parent / "fixtures" / "mistakes"
CORRECT = {"sequences-and-attention": "correct_vectorised.py", "attention-not-explanation": "correct_projection.py"}
NAMES = list(CORRECT)


def _grade(name: str, path: Path, secret: str = "first") -> dict:
    assignment = load_assignment(ASSIGNMENTS / name)
    (submission,) = find_submissions([path]).submissions
    report = grade_submission(
        assignment, submission, InProcessRunner(), load_reference(assignment, "numpy"), secret=secret
    )
    return {q.id: q for q in report.questions}


def _wrong(verdicts: dict[str, str]) -> list[str]:
    return [question for question, verdict in verdicts.items() if verdict not in ("passed", "manual")]


def _known_wrong():
    for name in NAMES:
        assignment = load_assignment(ASSIGNMENTS / name)
        verdicts = known_verdicts(assignment)
        for file, sentence in known_sentences(assignment).items():
            yield pytest.param(name, file, sentence, _wrong(verdicts[file]), id=f"{name}/{file}")


def test_every_known_wrong_submission_has_a_sentence():
    for name in NAMES:
        assignment = load_assignment(ASSIGNMENTS / name)
        wrong = {file for file, verdicts in known_verdicts(assignment).items() if _wrong(verdicts)}
        assert wrong and wrong == set(known_sentences(assignment)), name


@pytest.mark.parametrize("name, file, sentence, wrong", list(_known_wrong()))
def test_a_known_mistake_is_named_first(name, file, sentence, wrong):
    for secret in ("first", "second"):
        results = _grade(name, ASSIGNMENTS / name / "known" / file, secret)
        for question in wrong:
            assert results[question].feedback.startswith(f"{sentence}\n"), (
                secret,
                question,
                results[question].feedback,
            )


def _second_implementations():
    for name in NAMES:
        assignment = load_assignment(ASSIGNMENTS / name)
        verdicts = known_verdicts(assignment)
        by_stem = {Path(file).stem: file for file in known_sentences(assignment)}
        for fixture in sorted((FIXTURES / name).glob("*.py")):
            if not fixture.stem.startswith("unknown_"):
                file = by_stem[fixture.stem]
                sentence = known_sentences(assignment)[file]
                yield pytest.param(name, fixture, sentence, _wrong(verdicts[file]), id=f"{name}/{fixture.stem}")


def _written_differently(name: str, fixture: Path, folder: Path) -> Path:
    """A correct submission with the fixture's functions in place of its own."""
    base = (ASSIGNMENTS / name / "known" / CORRECT[name]).read_text(encoding="utf-8")
    path = folder / fixture.name
    path.write_text(f"{base}\n\n{fixture.read_text(encoding='utf-8')}", encoding="utf-8")
    return path


def test_every_known_mistake_has_a_second_implementation():
    for name in NAMES:
        stems = {Path(file).stem for file in known_sentences(load_assignment(ASSIGNMENTS / name))}
        assert stems == {p.stem for p in (FIXTURES / name).glob("*.py") if not p.stem.startswith("unknown_")}, name


@pytest.mark.parametrize("name, fixture, sentence, wrong", list(_second_implementations()))
def test_the_same_mistake_written_differently_is_named_too(tmp_path, name, fixture, sentence, wrong):
    results = _grade(name, _written_differently(name, fixture, tmp_path))
    assert {q for q, result in results.items() if result.status not in ("passed", "manual")} == set(wrong)
    for question in wrong:
        assert results[question].feedback.startswith(f"{sentence}\n"), (question, results[question].feedback)


@pytest.mark.parametrize(
    "name, fixture, question",
    [
        ("sequences-and-attention", "unknown_scaled_by_width.py", "attention"),
        ("attention-not-explanation", "unknown_top_pairs_by_row.py", "top_pairs"),
    ],
)
def test_a_mistake_no_known_submission_makes_is_not_named(tmp_path, name, fixture, question):
    results = _grade(name, _written_differently(name, FIXTURES / name / fixture, tmp_path))
    sentences = set(known_sentences(load_assignment(ASSIGNMENTS / name)).values())
    feedback = results[question].feedback
    assert results[question].status in ("partial", "failed")
    assert not any(sentence in feedback for sentence in sentences), feedback
    lines = feedback.splitlines()
    if " matches one that " in lines[0]:  # no known mistake, but a mutant of the solution (tests/test_mutants.py)
        lines = lines[1:]
    assert lines[0].split(" ")[1:4] == ["of", str(len(results[question].tests)), "checks"]


def test_a_mistake_sentence_is_one_line_of_text(tmp_path):
    folder = tmp_path / "example"
    shutil.copytree(ROOT / "course" / "skeleton" / "assignments" / "example", folder)
    verdicts = folder / "known" / "verdicts.toml"
    text = verdicts.read_text()
    for bad in ("3", '""', '"two\\nlines"'):
        verdicts.write_text(text.replace('["correct.py"]\n', f'["correct.py"]\nmistake = {bad}\n', 1))
        with pytest.raises(AssignmentError, match=r"verdicts.toml: \['correct.py'\] mistake: should be one sentence"):
            known_sentences(load_assignment(folder))
    verdicts.write_text(text.replace('["correct.py"]\n', '["correct.py"]\nmistake = "Says why."\n', 1))
    assert known_sentences(load_assignment(folder)) == {"correct.py": "Says why."}


@pytest.mark.slow  # about 10 s: the known submissions graded twice
def test_verify_says_when_a_mistake_is_not_named_and_which_it_cannot_be_told_from(tmp_path):
    """Two known mistakes that answer alike on a question, with different sentences, and that get the
    same questions wrong: neither can be named there, and `autograder verify` says so."""
    folder = tmp_path / "sequences-and-attention"
    shutil.copytree(ASSIGNMENTS / "sequences-and-attention", folder)
    shutil.copytree(ASSIGNMENTS / "references", tmp_path / "references")  # the manifest's ../references
    assignment = load_assignment(folder)
    reference = load_reference(assignment, "numpy")
    verdicts = {file: known_verdicts(assignment)[file] for file in ("hardcoded.py", "missing_sqrt.py")}
    verdicts["constant_answers.py"] = known_verdicts(assignment)["constant_answers.py"]
    result = verify_known(assignment, verdicts, ["first"], InProcessRunner(), reference, margin=1)
    assert not result.disagreements and not result.alike  # hardcoded and constant answers share one sentence

    path = folder / "known" / "verdicts.toml"
    text = path.read_text()
    path.write_text(text.replace('["hardcoded.py"]\nmistake = "', '["hardcoded.py"]\nmistake = "Copied answers. ', 1))
    assignment = load_assignment(folder)
    result = verify_known(assignment, verdicts, ["first"], InProcessRunner(), reference, margin=1)
    unnamed = {(d.file, d.question) for d in result.disagreements}
    assert all(d.kind == "mistake" and d.got == "none named" for d in result.disagreements)
    assert {("hardcoded.py", "saturation"), ("constant_answers.py", "saturation")} <= unnamed
    assert not any(file == "missing_sqrt.py" for file, _ in unnamed)
    assert result.alike_pairs()[("constant_answers.py", "hardcoded.py", "saturation")] == 1
    assert result.mistakes_unnamed == len(result.disagreements)


@needs_sandbox
@pytest.mark.slow  # about 30 s: the command, through the sandbox
def test_autograder_verify_lists_mistakes_it_cannot_tell_apart(tmp_path):
    """Two known mistakes of a new course's example, written apart, answering alike, with different
    sentences: the command says neither is named and that they answer alike, and exits 1."""
    assert subprocess.run([sys.executable, "-m", "course", "init", "c"], cwd=tmp_path, timeout=60).returncode == 0
    known = tmp_path / "c" / "assignments" / "example" / "known"
    (known / "summed.py").write_text("def mean_of(values):\n    return float(sum(values))\n")
    (known / "added.py").write_text(
        "import numpy as np\n\ndef mean_of(values):\n    return float(np.add.reduce(values))\n"
    )
    with (known / "verdicts.toml").open("a") as verdicts:
        verdicts.write('\n["summed.py"]\nmistake = "Your mean_of sums."\nmean = "partial"\n')
        verdicts.write('\n["added.py"]\nmistake = "Your mean_of adds."\nmean = "partial"\n')
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "verify", "example", "--secret", "s1"],
        capture_output=True,
        text=True,
        cwd=tmp_path / "c",
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    assert "FAIL summed.py" in lines and "FAIL added.py" in lines
    assert "     mean: expected its mistake named first, got none named under 1 of 1 secret (first: s1): " in "\n".join(
        lines
    )
    assert any(
        line.startswith("alike added.py and summed.py on mean: their answers cannot be told apart") for line in lines
    )
    assert lines[-1] == "2 times a known mistake's sentence was not the first thing its feedback says"


def test_a_broken_list_of_known_submissions_never_stops_grading(tmp_path, caplog):
    shutil.copytree(ROOT / "course" / "skeleton" / "assignments", tmp_path / "assignments")
    folder = tmp_path / "assignments" / "example"
    (folder / "known" / "verdicts.toml").write_text('["correct.py"]\nmistake = 3\nmean = "passed"\n')
    (tmp_path / "wrong.py").write_text("def mean_of(values):\n    return 0.0\n")
    assignment = load_assignment(folder)
    (submission,) = find_submissions([tmp_path / "wrong.py"]).submissions
    report = grade_submission(assignment, submission, InProcessRunner(), load_reference(assignment, "numpy"))
    assert report.questions[0].status == "failed" and report.questions[0].feedback.startswith("0 of 3 checks passed")
    assert "known mistakes not used" in caplog.text and "mistake: should be one sentence" in caplog.text
