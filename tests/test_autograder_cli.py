"""`autograder grade` and `autograder check`, driven as an instructor and a student drive them."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from commands.autograder import build_parser

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .gradebook_view import hashes, recorded

KNOWN = ASSIGNMENTS / "sequences-and-attention" / "known"


def run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )


@needs_sandbox
def test_grade_writes_every_report_and_the_gradebook(tmp_path):
    submitted = tmp_path / "submitted"
    for student, file in (("alice", "correct_loops.py"), ("bob", "missing_sqrt.py")):
        (submitted / student / "sequences-and-attention").mkdir(parents=True)
        shutil.copy(KNOWN / file, submitted / student / "sequences-and-attention" / file)
    out = tmp_path / "out"
    completed = run("grade", "sequences-and-attention", submitted, "--out", out, "--jobs", "2", "--reference", "numpy")
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    assert "alice" in completed.stdout and "10 / 10" in completed.stdout

    report = json.loads((out / "bob.json").read_text())
    assert {"student", "assignment", "score", "max_score", "questions", "errors", "graded_at", "grader_version"} <= set(
        report
    )
    assert report["student"] == "bob" and report["max_score"] == 10
    attention = next(q for q in report["questions"] if q["id"] == "attention")
    assert attention["status"] == "partial" and 0 < attention["score"] < 3
    assert set(attention) >= {"id", "score", "max_score", "status", "feedback"}

    gradescope = json.loads((out / "alice.gradescope.json").read_text())
    assert gradescope["score"] == 10
    assert [(t["number"], t["name"]) for t in gradescope["tests"]] == [
        ("1", "A numerically stable softmax"),
        ("2", "Scaled dot-product attention with masks and batches"),
        ("3", "Why divide by sqrt(d): softmax saturation, measured"),
        ("4", "Self-attention of a sequence"),
        ("5", "Multi-head attention"),
        ("6", "Sinusoidal positional encoding"),
    ]
    assert all(t["score"] == t["max_score"] and t["status"] == "passed" for t in gradescope["tests"])
    assert all(t["visibility"] == "visible" for t in gradescope["tests"])  # feedback = "immediate"
    assert gradescope["extra_data"]["sha256"] == report_of_alice_sha(out)
    assert 0 < gradescope["execution_time"] < 300
    bobs = json.loads((out / "bob.gradescope.json").read_text())
    assert bobs["score"] == report["score"] and bobs["tests"][1]["score"] == attention["score"]  # never rounded

    assert "Score: 10 / 10" in (out / "alice.feedback.txt").read_text()
    rows = list(csv.DictReader((out / "grades.csv").open()))
    # grades.csv is a download: its scores follow the one rounding rule (course.wording.shown_score,
    # issue #40); the report and the gradebook keep full precision.
    assert report["score"] == 7.375 and report_attention(report) == "0.375"
    assert [(r["student"], r["attention"], r["score"]) for r in rows] == [
        ("alice", "3", "10"),
        ("bob", "0.38", "7.38"),
    ]

    assert recorded(out / "gradebook.db") == {"alice": [(10, 6)], "bob": [(7.375, 6)]}


def report_of_alice_sha(out) -> str:
    return json.loads((out / "alice.json").read_text())["sha256"]


def report_attention(report) -> str:
    return f"{next(q for q in report['questions'] if q['id'] == 'attention')['score']:g}"


@pytest.mark.slow
@needs_sandbox
def test_rerun_skips_graded_hashes_and_force_regrades(tmp_path):
    """A rerun skips the same file; --force regrades that very file; a changed file is graded again
    without --force (it has a new hash)."""
    submission = tmp_path / "carol.py"
    shutil.copy(KNOWN / "correct_loops.py", submission)
    out = tmp_path / "out"
    grade = ["grade", "sequences-and-attention", submission, "--out", out, "--jobs", "1", "--reference", "numpy"]
    first = run(*grade)
    assert first.returncode == 0 and "1 graded, 0 skipped" in first.stdout
    again = run(*grade)
    assert again.returncode == 0 and "0 graded, 1 skipped" in again.stdout
    assert "skipped 1 already graded" in again.stderr
    forced = run(*grade, "--force")
    assert forced.returncode == 0 and "1 graded, 0 skipped" in forced.stdout  # the same file, graded again
    submission.write_text(submission.read_text() + "\n# changed\n")
    changed = run(*grade)
    assert changed.returncode == 0 and "1 graded, 0 skipped" in changed.stdout
    # Every submission is kept: the first file's, then the changed one's, which is the current one.
    first_hash, latest_hash = hashes(out / "gradebook.db", "carol")
    assert latest_hash == hashlib.sha256(submission.read_bytes()).hexdigest() != first_hash


@needs_sandbox
@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("dave.ipynb", b"{not json", "the notebook is not valid JSON"),
        ("erin.py", b"\xff\xfe\x00binary", "not UTF-8 text"),
        ("frank.ipynb", b'{"cells": "nope"}', "the notebook has no list of cells"),
    ],
)
def test_unreadable_submission_gets_a_zero_report_and_exit_1(tmp_path, name, content, reason):
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tmp_path / "grace.py"
    shutil.copy(KNOWN / "correct_loops.py", good)
    out = tmp_path / "out"
    completed = run("grade", "sequences-and-attention", bad, good, "--out", out, "--jobs", "1")
    assert completed.returncode == 1
    report = json.loads((out / f"{bad.stem}.json").read_text())
    assert report["score"] == 0 and reason in report["errors"][0]
    assert json.loads((out / "grace.json").read_text())["score"] == 10
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["grade", "no-such-assignment", "x.py", "--out", "o"],
            "no-such-assignment: no such assignment in the course; its assignments: attention-not-explanation, sequences-and-attention",
        ),
        (["grade", "sequences-and-attention", "missing.py", "--out", "o"], "missing.py: no such file or folder"),
        (
            ["check", "missing.ipynb", "--allow-unsandboxed"],
            "missing.ipynb: the file cannot be read (No such file or directory)",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args, message):
    completed = run(*args)
    assert completed.returncode == 2
    assert completed.stderr == f"autograder: {message}\n"


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--timeout", "-1", "argument --timeout: '-1' is not a positive number of seconds"),
        ("--timeout", "nan", "argument --timeout: 'nan' is not a positive number of seconds"),
        ("--memory", "10", "argument --memory: '10' is not a whole number of MiB, at least 64"),
        ("--jobs", "0", "argument --jobs: '0' is not a whole number of at least 1"),
    ],
)
def test_malformed_options_are_one_line_usage_errors_naming_the_option(tmp_path, option, value, message):
    completed = run("grade", "sequences-and-attention", KNOWN / "correct_loops.py", "--out", tmp_path, option, value)
    assert completed.returncode == 2
    assert completed.stderr == f"autograder grade: error: {message} (see autograder grade --help)\n"


def test_a_site_answers_at_least_one_request_at_a_time():
    completed = run("serve", "--threads", "0")
    assert completed.returncode == 2
    assert completed.stderr == (
        "autograder serve: error: argument --threads: '0' is not a whole number of at least 1 "
        "(see autograder serve --help)\n"
    )


@needs_sandbox
def test_a_memory_limit_too_low_for_the_runtime_is_the_instructors_error(tmp_path):
    completed = run(
        "grade", "sequences-and-attention", KNOWN / "correct_loops.py", "--out", tmp_path, "--memory", "100"
    )
    assert completed.returncode == 2
    (line,) = completed.stderr.splitlines()
    assert line.startswith("autograder: the sandbox's Python cannot start within these limits (memory 100 MiB")
    assert line.endswith("raise --memory (or [limits] in assignment.toml)")
    assert not (tmp_path / "correct_loops.json").exists()  # no student was charged for it


@needs_sandbox
def test_figures_are_not_shown_while_grading(tmp_path):
    """plt.show() does nothing and says nothing; a notebook's display() is no NameError."""
    notebook = tmp_path / "plots.py"
    notebook.write_text(
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\ndisplay(plt.gcf())\nprint('after show')\n"
        + (KNOWN / "correct_vectorised.py").read_text()
    )
    completed = run("grade", "sequences-and-attention", notebook, "--out", tmp_path / "out", "--reference", "numpy")
    assert completed.returncode == 0, completed.stderr
    report = json.loads((tmp_path / "out" / "plots.json").read_text())
    assert report["output"] == "after show\n" and report["errors"] == [] and report["score"] == 10


def test_grade_refuses_without_a_sandbox_and_names_what_is_missing(tmp_path):
    environment = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    completed = run("grade", "sequences-and-attention", KNOWN / "correct_loops.py", "--out", tmp_path, env=environment)
    assert completed.returncode == 2
    assert completed.stderr.startswith("autograder: cannot start the sandbox: missing bubblewrap (the bwrap command")
    assert "--unsafe-no-sandbox" in completed.stderr


def test_unsafe_no_sandbox_grades_where_the_sandbox_is_missing(tmp_path):
    environment = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    completed = run(
        "grade",
        "sequences-and-attention",
        KNOWN / "swapped_sin_cos.py",
        "--out",
        tmp_path,
        "--unsafe-no-sandbox",
        "--jobs",
        "1",
        env=environment,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads((tmp_path / "swapped_sin_cos.json").read_text())
    assert report["sandbox"] == "unsafe-no-sandbox" and report["score"] == 9


def test_check_reports_public_tests_per_question(tmp_path):
    # Run as root here, inside the project's course (hidden tests beside): told to run anyway.
    completed = run(
        "check", ASSIGNMENTS / "sequences-and-attention" / "known" / "unstable_softmax.py", "--allow-unsandboxed"
    )
    assert completed.returncode == 2  # a .py file has no public test cells
    notebook = ASSIGNMENTS / "sequences-and-attention" / "known" / "released_unchanged.ipynb"
    completed = run("check", notebook, "--question", "softmax", "--allow-unsandboxed")
    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "\u2717 softmax: NotImplementedError",
        "0 of 1 question pass their public tests",
    ]
    source = ASSIGNMENTS / "sequences-and-attention" / "source" / "sequences-and-attention.ipynb"
    completed = run("check", source, "--allow-unsandboxed")
    assert completed.returncode == 0
    assert completed.stdout.splitlines()[-1] == "6 of 6 questions pass their public tests"


def test_check_inside_a_notebook_runs_that_questions_public_tests(tmp_path, monkeypatch, capsys):
    import __main__
    from autograder import check

    notebook = ASSIGNMENTS / "sequences-and-attention" / "source" / "sequences-and-attention.ipynb"
    monkeypatch.setattr(__main__, "np", __import__("numpy"), raising=False)
    monkeypatch.setattr(__main__, "softmax", lambda x, axis=-1: x, raising=False)
    assert check("softmax", notebook=notebook) is False
    assert capsys.readouterr().out.strip() == "\u2717 softmax: softmax([1, 2, 3]) is not right"

    def softmax(x, axis=-1):
        import numpy as np

        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    monkeypatch.setattr(__main__, "softmax", softmax)
    monkeypatch.chdir(notebook.parent)
    assert check("softmax") is True
    assert capsys.readouterr().out.strip() == "\u2713 softmax: public tests passed"


def _commands():
    parser = build_parser()
    return next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_has_help_and_is_in_the_readme(name):
    """Documented: in the README or a page of the documentation (docs/)."""
    assert _commands()[name].description
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # the README, or the docs site's pages
    assert any(f"autograder {name}" in page.read_text(encoding="utf-8") for page in pages)


def test_references_are_named_by_the_manifest(tmp_path):
    folder = tmp_path / "renamed"
    shutil.copytree(ASSIGNMENTS / "sequences-and-attention", folder, ignore=shutil.ignore_patterns("known"))
    manifest = folder / "assignment.toml"
    references = ASSIGNMENTS / "references"
    manifest.write_text(
        manifest.read_text().replace(
            manifest.read_text().split("\n")[4], f'references = {{ float64 = "{references / "numpy_reference.py"}" }}'
        )
    )
    completed = run(
        "grade",
        folder,
        KNOWN / "correct_vectorised.py",
        "--out",
        tmp_path / "out",
        "--reference",
        "float64",
        "--unsafe-no-sandbox",
        "--jobs",
        "1",
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads((tmp_path / "out" / "correct_vectorised.json").read_text())["reference"] == "numpy"
    wrong = run("grade", folder, KNOWN / "correct_vectorised.py", "--out", tmp_path / "o2", "--reference", "torch")
    assert wrong.returncode == 2
    assert (
        wrong.stderr
        == "autograder: --reference torch: sequences-and-attention has no such reference; its references: float64\n"
    )


def test_a_file_that_is_not_a_gradebook_is_one_line_and_nothing_is_graded(tmp_path):
    bogus = tmp_path / "gradebook.db"
    bogus.write_bytes(b"this is not an SQLite database, only text" * 100)
    completed = run(
        "grade",
        "sequences-and-attention",
        KNOWN / "correct_loops.py",
        "--out",
        tmp_path / "out",
        "--gradebook",
        bogus,
        "--unsafe-no-sandbox",
        "--jobs",
        "1",
    )
    assert completed.returncode == 2
    (error,) = [line for line in completed.stderr.splitlines() if not line.startswith("warning:")]
    assert error.startswith(f"autograder: {bogus}: not a gradebook, or a damaged one (")
    assert not (tmp_path / "out" / "correct_loops.json").exists()


@needs_sandbox
def test_a_regrade_of_one_question_runs_its_tests_alone_and_keeps_the_others(tmp_path):
    assignments = tmp_path / "assignments"
    shutil.copytree(ASSIGNMENTS, assignments, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    assignment = assignments / "sequences-and-attention"
    out, gradebook = tmp_path / "out", tmp_path / "out" / "gradebook.db"
    first = run("grade", assignment, KNOWN / "correct_loops.py", "--out", out, "--reference", "numpy")
    assert first.returncode == 0, first.stderr
    # A fix to the hidden tests (here: a new failing test) for attention, and another for softmax.
    for name, question in (("test_attention.py", "attention"), ("test_softmax.py", "softmax")):
        with (assignment / "hidden" / name).open("a") as handle:
            handle.write(
                f'\n\ndef test_added_later(student):\n    """a check added for {question}"""\n    assert False\n'
            )
    again = run(
        "grade", assignment, KNOWN / "correct_loops.py", "--out", out, "--reference", "numpy", "--question", "attention"
    )
    assert again.returncode == 0, again.stderr
    report = json.loads((out / "correct_loops.json").read_text())
    scores = {q["id"]: q["score"] for q in report["questions"]}
    attention = next(q for q in report["questions"] if q["id"] == "attention")
    assert [t["name"] for t in attention["tests"] if t["status"] != "passed"] == ["test_added_later"]
    assert 0 < scores["attention"] < 3  # its tests ran again, the new one among them
    assert scores["softmax"] == 2 and scores["multi_head"] == 2  # not run again: as recorded
    assert report["score"] == sum(scores.values()) and len(report["questions"]) == 6
    unknown = run("grade", assignment, KNOWN / "correct_loops.py", "--out", out, "--question", "nope")
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "autograder: sequences-and-attention: no question 'nope' (its questions: softmax, attention, saturation, "
        "self_attention, multi_head, positional_encoding)"
    )
    assert recorded(gradebook)["correct_loops"] == [(report["score"], 6)]
