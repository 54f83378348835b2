"""The logic that the commands' handlers held, now one library function per command: which
assignment a command names, verify's findings grouped, the scores sent to the platforms, the
project a Gradescope bundle carries, the packages doctor checks, the state folder and gradebook a
backup takes, the executor a grading runs on. Through the real command where a user sees it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.assignment import find_assignment, find_assignments
from autograder.errors import AssignmentError
from autograder.verify import Disagreement, Verification
from commands.autograder import main

from .conftest import ASSIGNMENTS, ROOT

ASSIGNMENT = "attention-not-explanation"


def test_an_assignment_is_named_in_its_course_or_given_by_its_folder(tmp_path, monkeypatch):
    in_course = find_assignment(ASSIGNMENT, ROOT)
    assert in_course.name == ASSIGNMENT and in_course.folder == ASSIGNMENTS / ASSIGNMENT
    assert [spec.name for spec in find_assignments([], ROOT)] == ["sequences-and-attention", ASSIGNMENT]
    assert [spec.name for spec in find_assignments([ASSIGNMENT], ROOT)] == [ASSIGNMENT]
    # Outside any course: a folder holding assignment.toml, with the default packages; a name is refused.
    outside = tmp_path / "alone"
    shutil.copytree(ASSIGNMENTS / ASSIGNMENT, outside, ignore=shutil.ignore_patterns("known"))
    monkeypatch.chdir(tmp_path)
    assert find_assignment(str(outside)).sandbox_packages == ["numpy", "matplotlib"]
    with pytest.raises(AssignmentError, match=rf"^{ASSIGNMENT}: no course.toml"):
        find_assignment(ASSIGNMENT)
    with pytest.raises(AssignmentError, match=r"^nonesuch: no such assignment in the course; its assignments: "):
        find_assignment("nonesuch", ROOT)


def test_a_command_naming_an_unknown_assignment_says_so_in_one_line(tmp_path, capsys):
    assert main(["--course", str(ROOT), "release", "nonesuch", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autograder: nonesuch: no such assignment in the course; its assignments: ")
    assert err.count("\n") == 1


def _disagreement(file: str, secret: str, got: str = "failed", margin: float = 1.0, **fields) -> Disagreement:
    return Disagreement(
        file=file,
        question="mean",
        expected="passed",
        got=got,
        secret=secret,
        margin=margin,
        feedback="Score 0\n- the mean of [1, 2] is 1.5, not 2\n- another check",
        **fields,
    )


def test_verify_findings_are_grouped_by_kind_of_difference_with_the_first_secret():
    result = Verification(
        assignment="a",
        files=["x.py", "y.py"],
        secrets=["s1", "s2", "s3"],
        margin=4.0,
        gradings=6,
        disagreements=[
            _disagreement("x.py", "s2"),
            _disagreement("x.py", "s3"),
            _disagreement("x.py", "s1", margin=4.0),
            _disagreement("y.py", "s1", got="partial", kind="feedback"),
        ],
    )
    first, stricter = result.findings("x.py")
    assert (first.secrets, first.first_secret, first.margin) == (2, "s2", 1.0)
    assert first.first_check == "the mean of [1, 2] is 1.5, not 2"  # the first failed check, not the whole feedback
    assert (stricter.secrets, stricter.first_secret, stricter.margin) == (1, "s1", 4.0)
    (other,) = result.findings("y.py")
    assert (other.got, other.secrets) == ("partial", 1)
    assert result.findings("z.py") == []
    # Each differing verdict once, however many secrets showed it: x.py's under s2 and s3 are one.
    assert (result.verdicts_wrong, result.rules_broken) == (2, 1)


def test_scores_are_sent_for_an_assignment_of_the_course_named_as_the_command_names_it(empty_queue):
    from course.folder import find_course
    from service.lti.outbox import Outcome, send_course_scores

    with pytest.raises(AssignmentError, match=r"^nonesuch: no such assignment in the course"):
        send_course_scores(find_course(ROOT), "nonesuch")
    assert Outcome(sent=2, waiting=["w"], failed=["f"]).not_sent == ["f", "w"]  # given up first, as the command lists


def test_the_gradescope_bundle_carries_this_project_and_the_title_of_its_course(tmp_path, monkeypatch):
    from autograder.gradescope import export_for_course, project_root

    assert project_root() == ROOT and (project_root() / "pyproject.toml").is_file()
    outside = tmp_path / "alone"
    shutil.copytree(ASSIGNMENTS / ASSIGNMENT, outside)
    monkeypatch.chdir(tmp_path)  # no course.toml here or above: titled as the assignment
    spec = find_assignment(str(outside))
    with zipfile.ZipFile(export_for_course(spec, tmp_path / "alone.zip")) as bundle:
        assert f'title = "{spec.title}"' in bundle.read("course/course.toml").decode()
        assert "project/commands/autograder/__init__.py" in bundle.namelist()  # the commands, as a package
    with zipfile.ZipFile(export_for_course(find_assignment(ASSIGNMENT, ROOT), tmp_path / "in.zip", ROOT)) as bundle:
        assert 'title = "Machine Learning, Foundations"' in bundle.read("course/course.toml").decode()


def test_doctor_checks_the_named_course_and_refuses_a_folder_that_is_none(tmp_path, capsys):
    assert main(["--course", str(tmp_path), "doctor"]) == 2
    assert capsys.readouterr().err == f"autograder: {tmp_path}: no course.toml in this folder\n"


def test_a_backup_takes_the_courses_state_folder_and_the_gradebook_in_it(tmp_path, monkeypatch):
    from course.errors import CourseFolderError
    from course.folder import init_course
    from gradebook.backup import backup
    from gradebook.book import Gradebook
    from gradebook.errors import GradebookError
    from service.settings import course_state_folder

    monkeypatch.delenv("GRADEWRIGHT_DATABASE_URL", raising=False)
    course = tmp_path / "course"
    init_course(course, "A course")
    assert course_state_folder(course, must_exist=True) is None  # a backup: no state folder yet, none taken
    assert course_state_folder(course, must_exist=False) == course.resolve() / ".gradewright"  # a restore: there
    with pytest.raises(CourseFolderError, match="no course.toml in this folder"):
        course_state_folder(tmp_path, must_exist=True)
    monkeypatch.chdir(tmp_path)
    assert course_state_folder(None, must_exist=True) is None  # outside any course
    state = course / ".gradewright"
    state.mkdir()
    with Gradebook.open(state / "gradebook.db"):
        pass
    assert course_state_folder(course, must_exist=True) == state.resolve()
    made = backup(tmp_path / "b.tar.gz", None, None, state.resolve())
    assert made.manifest.gradebook_in_state and made.manifest.state
    with pytest.raises(GradebookError, match=r"^gradebook.db: no gradebook here"):
        backup(tmp_path / "c.tar.gz", None, None, None)  # no state folder: ./gradebook.db, and there is none


def test_grading_runs_here_unless_a_scheduler_is_named(monkeypatch):
    from autograder.cluster import GradingNeeds
    from autograder.distributed import executor_for

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    with executor_for(None, GradingNeeds.here(("numpy",), True, [ASSIGNMENTS])) as executor:
        assert executor is None


def test_the_grade_file_format_is_refused_unless_registered(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(ROOT),
            "grades",
            "export",
            ASSIGNMENT,
            "--format",
            "xlsx",
            "--out",
            str(tmp_path / "g.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert completed.returncode == 2
    assert completed.stderr == (
        "autograder grades export: error: argument --format: invalid choice: 'xlsx' (choose from 'canvas', "
        "'moodle', 'csv') (see autograder grades export --help)\n"
    )
    assert not Path(tmp_path / "g.csv").exists()


def test_a_lesson_command_takes_the_paths_it_is_given_else_its_courses_lessons(tmp_path, monkeypatch):
    from course.catalog import load_lessons
    from course.errors import CourseFolderError, LessonFolderError
    from course.folder import course_or_none, lesson_paths

    assert lesson_paths([tmp_path / "a.md"], ROOT) == [tmp_path / "a.md"]
    assert lesson_paths(None, ROOT) == [ROOT / "lesson_data"]
    monkeypatch.chdir(tmp_path)
    assert course_or_none() is None  # no course here: the command's own defaults
    assert course_or_none(ROOT).title == "Machine Learning, Foundations"
    with pytest.raises(CourseFolderError, match="no course.toml in this folder"):
        course_or_none(tmp_path)  # a folder named is a course, or an error
    with pytest.raises(CourseFolderError):
        lesson_paths([], None)
    assert {lesson.slug for lesson in load_lessons([ROOT / "lesson_data"]).lessons} >= {"from-sequences-to-attention"}
    with pytest.raises(LessonFolderError, match="folder not found"):
        load_lessons([tmp_path / "missing"])  # one folder: it must be there


def test_an_exam_is_graded_into_the_gradebook_only_when_one_is_named(tmp_path, monkeypatch):
    from course.exams import build_exam
    from gradebook.exams import grade_exam_with_marks

    monkeypatch.delenv("GRADEWRIGHT_DATABASE_URL", raising=False)
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\nada,Ada,ada@example.org\n", encoding="utf-8")
    build_exam(roster, tmp_path / "exam", seed=1, questions=2, lessons=[ROOT / "lesson_data"])
    responses = tmp_path / "responses.csv"
    responses.write_text("student_id,q1,q2\nada,A,B\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert grade_exam_with_marks(tmp_path / "exam", responses, tmp_path / "alone").graded == 1
    assert not (tmp_path / "gradebook.db").exists()  # none named: none made
    book = tmp_path / "book.db"
    assert grade_exam_with_marks(tmp_path / "exam", responses, tmp_path / "kept", book).graded == 1
    assert book.is_file()
