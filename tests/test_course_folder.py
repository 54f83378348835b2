"""Any course: course.toml found upward from the working directory or named with --course, and a new
course from `course init` that validates, releases and grades out of the box, through the real commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from course.folder import NOT_FOUND, find_course

from .conftest import ROOT, needs_sandbox


def run(command: str, *args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", command, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_the_shipped_course_is_a_course_folder():
    course = find_course(start=ROOT / "assignments" / "references")
    assert course.root == ROOT and course.title == "Machine Learning, Foundations"
    assert course.lesson_folders == [ROOT / "lesson_data"]
    assert set(course.assignment_folders) == {"sequences-and-attention", "attention-not-explanation"}
    assert course.checks_title() == "Module 10: Sequences and attention, check questions"


def test_without_a_course_commands_say_how_to_get_one(tmp_path):
    for command, args in (("course", ["lessons"]), ("autograder", ["release", "example", "--out", "x"])):
        completed = run(command, *args, cwd=tmp_path)
        assert completed.returncode == 2
        assert NOT_FOUND in completed.stderr and completed.stderr.count("\n") == 1


def test_a_bad_course_toml_is_one_line_naming_the_place(tmp_path):
    (tmp_path / "course.toml").write_text('title = "x"\n[[modules]]\nnumber = "ten"\ntitle = "M"\n')
    completed = run("course", "lessons", cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.startswith(f"course: {tmp_path / 'course.toml'}: modules.0.number: ")


@pytest.mark.slow
@needs_sandbox
def test_course_init_gives_a_course_that_validates_releases_and_grades(tmp_path):
    created = run("course", "init", "demo-course", "--title", "Statistics 101", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    course = tmp_path / "demo-course"
    assert find_course(course).title == "Statistics 101"
    assert ".gradewright/" in (course / ".gitignore").read_text().splitlines()  # the site's secret key, gradebook
    validated = run("course", "validate", cwd=course)
    assert validated.returncode == 0 and "1 file: 1 lesson, 1 assignment, 0 errors, 0 warnings" in validated.stderr
    exported = run("course", "export", "checks", "--format", "json", "--out", "checks.json", cwd=course)
    assert exported.returncode == 0, exported.stderr
    assert json.loads((course / "checks.json").read_text())["title"] == "Module 1: Getting started, check questions"
    released = run("autograder", "release", "example", "--out", "release", cwd=course)
    assert released.returncode == 0, released.stderr
    assert "BEGIN SOLUTION" not in (course / "release" / "example.ipynb").read_text()
    inside = course / "assignments" / "example"
    next_step = created.stdout.splitlines()[-1].removeprefix("next: ")  # what course init says to do works
    graded = subprocess.run(next_step, shell=True, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert graded.returncode == 0, graded.stderr
    report = json.loads((course / "graded" / "correct.json").read_text())
    assert report["score"] == report["max_score"] == 1
    broken = inside / "known" / "wrong.py"
    broken.write_text("def mean_of(values):\n    return 0.0\n")
    graded = run(
        "autograder", "grade", "example", broken, "--out", course / "graded2", "--reference", "numpy", cwd=inside
    )  # the course is found from below its root too
    assert json.loads((course / "graded2" / "wrong.json").read_text())["score"] == 0


def test_course_init_refuses_a_folder_that_holds_something(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    completed = run("course", "init", "taken", cwd=tmp_path)
    assert completed.returncode == 2 and "exists and is not an empty folder" in completed.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("command", ["course", "autograder"])
def test_course_option_names_the_course_from_anywhere(tmp_path, command):
    args = (
        ["--course", ROOT, "lessons"]
        if command == "course"
        else ["--course", ROOT, "release", "sequences-and-attention", "--out", tmp_path / "r"]
    )
    completed = run(command, *args, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr


RICH_SUBMISSION = "import rich\n\n\ndef mean_of(values):\n    return float(sum(values) / len(values))\n"


@pytest.mark.slow
@needs_sandbox
def test_the_sandboxs_packages_come_from_the_course(tmp_path):
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    submission = tmp_path / "uses_rich.py"
    submission.write_text(RICH_SUBMISSION)
    grade = ["grade", "example", submission, "--reference", "numpy"]
    default = run("autograder", *grade, "--out", "default", cwd=course)
    report = json.loads((course / "default" / "uses_rich.json").read_text())
    assert default.returncode == 0 and "ModuleNotFoundError" in report["errors"][0]  # not in the sandbox
    manifest = course / "course.toml"
    manifest.write_text(manifest.read_text() + '\n[sandbox]\npackages = ["numpy", "rich"]\n')
    widened = run("autograder", *grade, "--out", "widened", cwd=course)
    report = json.loads((course / "widened" / "uses_rich.json").read_text())
    assert widened.returncode == 0 and report["errors"] == [] and report["score"] == 1
    doctor = run("autograder", "doctor", cwd=course)
    assert doctor.returncode == 0, doctor.stdout
    assert "ok   inside the sandbox: Python" in doctor.stdout and "rich" in doctor.stdout
    manifest.write_text(manifest.read_text().replace('"rich"', '"no_such_package_here"'))
    refused = run("autograder", *grade, "--out", "refused", cwd=course)
    assert refused.returncode == 2
    assert "the course's sandbox packages are not installed here: no_such_package_here" in refused.stderr
    assert run("autograder", "doctor", cwd=course).returncode == 1


@pytest.mark.slow
@needs_sandbox
def test_the_courses_default_limits_apply_under_an_assignments_own(tmp_path):
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\n\n\ndef mean_of(values):\n    time.sleep(1.5)\n    return float(sum(values) / len(values))\n"
    )
    grade = ["grade", "example", slow, "--reference", "numpy"]
    assert json.loads(_graded(course, grade, "a"))["score"] == 1  # the default 10 s per call
    manifest = course / "course.toml"
    manifest.write_text(manifest.read_text() + "\n[defaults.limits]\ncall_timeout = 0.5\n")
    report = json.loads(_graded(course, grade, "b"))
    assert report["score"] == 0 and report["questions"][0]["status"] == "timeout"
    assignment = course / "assignments" / "example" / "assignment.toml"
    assignment.write_text(assignment.read_text() + "\n[limits]\ncall_timeout = 5\n")
    assert json.loads(_graded(course, grade, "c"))["score"] == 1  # the assignment's own limit wins
    manifest.write_text(manifest.read_text().replace("call_timeout = 0.5", "call_timout = 0.5"))
    misspelt = run("autograder", *grade, "--out", "d", cwd=course)
    assert misspelt.returncode == 2 and "defaults.limits.call_timout: Extra inputs are not permitted" in misspelt.stderr


def _graded(course, grade, out, student="slow") -> str:
    completed = run("autograder", *grade, "--out", out, cwd=course)
    assert completed.returncode in {0, 1}, completed.stderr
    return (course / out / f"{student}.json").read_text()


@pytest.mark.slow
@needs_sandbox
def test_the_courses_late_policy_applies_to_an_assignment_with_a_due_time(tmp_path):
    assert run("course", "init", "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    late = tmp_path / "late.py"
    late.write_text((course / "assignments" / "example" / "known" / "correct.py").read_text())
    os.utime(late, (1_800_000_000, 1_800_000_000))  # 2027-01-15T08:00:00Z
    assignment = course / "assignments" / "example" / "assignment.toml"
    assignment.write_text("due = 2027-01-14T12:00:00+00:00\n" + assignment.read_text())
    manifest = course / "course.toml"
    manifest.write_text(manifest.read_text() + '\n[defaults]\nlate_penalty = "25% per day"\n')
    grade = ["grade", "example", late, "--reference", "numpy"]
    report = json.loads(_graded(course, grade, "a", "late"))
    assert (report["score"], report["late"]["percent"], report["final_score"]) == (1, 25, 0.75)
    assignment.write_text('late_penalty = "50% per day"\n' + assignment.read_text())
    assert json.loads(_graded(course, grade, "b", "late"))["final_score"] == 0.5  # the assignment's own wins
    manifest.write_text(manifest.read_text().replace('"25% per day"', '"25 percent"'))
    assignment.write_text(assignment.read_text().replace('late_penalty = "50% per day"\n', ""))
    refused = run("autograder", *grade, "--out", "c", cwd=course)
    assert refused.returncode == 2
    assert "course.toml: defaults.late_penalty: '25 percent' is not a late penalty" in refused.stderr
    assignment.write_text(assignment.read_text().replace("+00:00", ""))
    refused = run("autograder", *grade, "--out", "d", cwd=course)
    assert refused.returncode == 2 and "due: Value error, due needs a time zone" in refused.stderr
