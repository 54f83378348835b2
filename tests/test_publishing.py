"""Published grades (issue #51): the staff publish an assignment's grades, or one hand-graded
question's marks, through ``autograder grades publish`` (and undo it with ``unpublish``), each kept
with who, when and why; grade files write only published scores unless asked (``--unpublished``);
an assignment whose grades publish themselves (``publish = "automatic"``, every older course's) has
nothing to publish."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from django.db import connections

from autograder.assignment import load_assignment
from autograder.reports.model import QuestionResult, Report
from commands.autograder import main
from gradebook.book import Gradebook
from gradebook.errors import BadEdit
from gradebook.grading import record_report
from gradebook.publishing import publications, publish, published_state

from .conftest import ASSIGNMENTS

NAME = "sequences-and-attention"


@pytest.fixture
def course(tmp_path) -> tuple[Path, Path]:
    """A copy of the assignment whose grades the staff publish, and a gradebook holding one grade."""
    folder = tmp_path / "assignments" / NAME
    shutil.copytree(ASSIGNMENTS / NAME, folder)
    shutil.copytree(ASSIGNMENTS / "references", tmp_path / "assignments" / "references")
    manifest = folder / "assignment.toml"
    manifest.write_text('publish = "by_staff"\n' + manifest.read_text())
    spec = load_assignment(folder)
    database = tmp_path / "gradebook.db"
    questions = [
        QuestionResult(id=q.id, score=q.points, max_score=q.points, status="passed", feedback="")
        for q in spec.questions
    ]
    report = Report(
        student="ada",
        assignment=NAME,
        score=spec.max_score,
        max_score=spec.max_score,
        questions=questions,
        submission="ada.ipynb",
        sha256="a" * 64,
        reference="numpy",
        sandbox="test",
        graded_at="2026-12-01T10:00:00+00:00",
        grader_version="test",
    )
    with Gradebook.open(database) as book:
        row = book.run(lambda: book.sync_assignment(spec))
        book.run(lambda: record_report(book, row, report))
    return folder, database


def export(folder: Path, database: Path, out: Path, *more: str) -> str:
    code = main(
        ["grades", "export", str(folder), "--format", "csv", "--out", str(out), "--gradebook", str(database), *more]
    )
    assert code == 0
    return out.read_text()


def test_grades_reach_the_files_once_published_and_leave_them_when_undone(course, tmp_path, capsys):
    folder, database = course
    held = export(folder, database, tmp_path / "held.csv")
    assert NAME not in held  # no column: no score of it reaches the platform
    assert f"left out: {NAME}: its grades are not published" in capsys.readouterr().out
    assert NAME in export(folder, database, tmp_path / "asked.csv", "--unpublished")  # when asked
    capsys.readouterr()

    assert main(["grades", "publish", str(folder), "--gradebook", str(database), "--reason", "reviewed"]) == 0
    assert capsys.readouterr().out.strip() == f"{NAME}: grades published"
    assert NAME in export(folder, database, tmp_path / "published.csv")
    assert main(["grades", "publish", str(folder), "--gradebook", str(database)]) == 2  # nothing to change
    assert "already published" in capsys.readouterr().err

    assert main(["grades", "unpublish", str(folder), "--gradebook", str(database), "--reason", "a wrong test"]) == 0
    assert NAME not in export(folder, database, tmp_path / "again.csv")
    spec = load_assignment(folder)
    with Gradebook.open(database) as book:
        assert published_state(book, spec).assignment is False
        history = publications(book, spec)
    assert [(entry.published, entry.reason) for entry in history] == [(True, "reviewed"), (False, "a wrong test")]
    assert all(entry.by and entry.at for entry in history)
    capsys.readouterr()
    assert main(["history", "ada", str(folder), "--gradebook", str(database)]) == 0
    told = capsys.readouterr().out
    assert f"{NAME}: grades published by " in told and ": reviewed" in told
    assert f"{NAME}: grades unpublished by " in told and ": a wrong test" in told


def test_only_a_hand_graded_question_is_published_alone(course, capsys):
    folder, database = course
    assert main(["grades", "publish", str(folder), "--question", "softmax", "--gradebook", str(database)]) == 2
    assert "graded by its checks" in capsys.readouterr().err


def test_an_assignment_that_publishes_itself_has_nothing_to_publish(tmp_path, capsys):
    spec = load_assignment(ASSIGNMENTS / NAME)
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        assert published_state(book, spec).assignment  # every older course's grades, as before
    assert main(["grades", "publish", str(ASSIGNMENTS / NAME), "--gradebook", str(tmp_path / "gradebook.db")]) == 2
    assert 'publish = "automatic"' in capsys.readouterr().err


@pytest.mark.timeout(180)
def test_eight_publishings_at_once_are_recorded_once(course, database):
    """The staff's button pressed eight times at once (or eight staff): one publishing in the history,
    seven refused as already done, on either database."""
    folder, _ = course
    spec = load_assignment(folder)
    option, where = database
    url = where if option == "--database-url" else None
    with Gradebook.open(None if url else Path(where), url) as book:
        book.run(lambda: book.sync_assignment(spec))
        gate, refused, failures = threading.Barrier(8), [], []

        def press() -> None:
            try:
                gate.wait(timeout=30)
                publish(book, spec, by="staff")
            except BadEdit as already:
                refused.append(str(already))
            except Exception as exc:  # the test's own report: any other error is the failure
                failures.append(repr(exc))
            finally:
                connections[book.alias].close()

        threads = [threading.Thread(target=press) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert failures == []
        assert len(refused) == 7 and all("already published" in line for line in refused)
        assert [entry.published for entry in publications(book, spec)] == [True]
