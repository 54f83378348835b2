"""The student's side in Jupyter, without a hub: the panel's score lines are the site's (one function,
autograder/reports/summary.py), lateness says how the days are charged, a traceback's line is paired
with the cell it is in, and the server side answers each kind of refusal with its own status (by the
error's type), a notebook that names no assignment with the course's assignments to choose from."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from autograder.reports.summary import score_summary
from autograder.sandbox.limits import Limits
from autograder.sandbox.runners import UnsafeRunner
from autograder.sandbox.session import Cell, StudentSession
from gradewright import cell
from gradewright.errors import GradewrightError, NotebookExists, Unreachable, WhichAssignment

DUE = datetime(2026, 11, 2, 9, 0)


def late_report(hours_late: float) -> dict:
    """A report as the API gives it: 5 of 10 earned so far, 3 points awaiting a hand mark, 10% a day late."""
    submitted = DUE + timedelta(hours=hours_late)
    return {
        "score": 5.0,
        "max_score": 10.0,
        "final_score": 4.0,
        "questions": [
            {"id": "q1", "score": 5.0, "max_score": 7.0, "status": "partial"},
            {"id": "essay", "score": 0.0, "max_score": 3.0, "status": "manual", "mark": None},
        ],
        "late": {
            "due": DUE.isoformat(),
            "submitted_at": submitted.isoformat(),
            "late": True,
            "units_late": 2,
            "unit": "day",
            "percent": 20.0,
            "points": 1.0,
        },
    }


def test_the_panel_and_the_cell_say_the_score_as_the_site_does():
    from jupyterlab_gradewright.handlers import _job
    from service.templatetags.scores import summary

    report = late_report(26)
    told = score_summary(report)
    assert told is not None and told.lines() == [
        "Score: 5 / 10 so far; 3 points await hand grading",
        "Late by 2 days: penalty 1 (20%); final score 4 / 10 (handed in 1 day 2 hours after the due time; "
        "each day begun is charged as a whole day)",
    ]
    assert summary(report) == told  # the site's submission page renders this very summary
    job = {"id": 7, "assignment": "a", "state": "graded", "report": report, "page": "/submissions/7/"}
    shown = _job(job, "http://site.example")
    assert shown["score_lines"] == told.lines()  # what the JupyterLab panel shows
    assert all(line in shown["summary"] for line in told.lines())  # and gradewright.submit() in a cell
    on_time = {**report, "late": None, "questions": report["questions"][:1], "final_score": 5.0}
    assert score_summary(on_time).lines() == ["Score: 5 / 10"]
    assert score_summary({"score": None, "hidden_results": "after the due date"}) is None


def test_a_tracebacks_line_is_paired_with_the_cell_it_is_in():
    cells = [
        Cell(index=18, source="def answer(x):\n    y = x\n    z = y\n    raise NotImplementedError('write answer')\n"),
        Cell(index=19, source="assert answer(1) == 1\n"),
        Cell(index=20, source="x = 1\ny = undefined_name\n"),
    ]
    with StudentSession(UnsafeRunner(), cells, Limits(call_timeout=30, submission_timeout=60)) as session:
        loaded = session.load()
    called, own = loaded.cell_errors
    assert str(called) == "cell 18, line 4 (called from cell 19): NotImplementedError: write answer"
    assert called.running == 19  # the public test that called it is the one that failed
    assert str(own) == "cell 20, line 2: NameError: name 'undefined_name' is not defined"


def test_the_server_side_answers_each_refusal_by_its_type(tmp_path, monkeypatch):
    from jupyterlab_gradewright.handlers import status_of

    notebook = tmp_path / "mine.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}}), encoding="utf-8")
    with pytest.raises(WhichAssignment) as which:
        cell.assignment_of(notebook, ["week-1", "week-2"])
    assert which.value.known == ["week-1", "week-2"]  # the panel offers these
    assert status_of(which.value) == 422
    monkeypatch.setenv("GRADEWRIGHT_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t")
    with pytest.raises(Unreachable) as down:
        cell.connect().json("GET", "/api/v1/assignments")
    assert status_of(down.value) == 502
    assert status_of(NotebookExists("x exists already")) == 409
    # The status follows the type, whatever the words.
    assert status_of(GradewrightError("pass overwrite=True to replace it")) == 400


def test_the_panel_shows_titles_due_times_rounded_scores_and_a_notebook_named_from_the_students_folder(
    tmp_path, monkeypatch
):
    """What JupyterLab's panel shows comes written by its server side, in the site's words: Fetch's
    list by title and due time, each question's score rounded as the site rounds (0.38, not 0.375),
    and a notebook there already named from the student's own folder, never the server's path."""
    import httpx

    from jupyterlab_gradewright.handlers import _job, _listed, fetched, status_of

    listed = _listed(
        {
            "assignments": [
                {"name": "week-1", "title": "Attention", "due": "2026-12-03T20:00:00+00:00"},
                {"name": "week-2", "title": "", "due": None},
                {"name": "week-3", "title": "Same", "due": None},
                {"name": "week-4", "title": "Same", "due": None},
            ]
        }
    )
    assert [entry["label"] for entry in listed["assignments"]] == [
        "Attention (due 3 Dec 2026, 20:00 UTC)",
        "week-2 (no due time)",
        "Same (no due time) [week-3]",
        "Same (no due time) [week-4]",
    ]
    questions = [
        {"id": "q1", "score": 0.375, "max_score": 0.5},
        {"id": "q2", "score": 1 / 3, "max_score": 1.0},
        {"id": "q3", "score": None, "max_score": 2.0},
    ]
    job = {"id": 7, "assignment": "a", "state": "graded", "report": {"questions": questions}, "page": "/s/7/"}
    shown = _job(job, "http://site.example")
    assert [question["shown"] for question in shown["report"]["questions"]] == ["0.38 / 0.5", "0.33 / 1", "hidden"]
    assert "q1: 0.38 / 0.5" in shown["summary"]  # submit()'s summary in a cell: the same words

    class Server:  # the service's notebook download, as the API answers it
        def call(self, method: str, path: str, **options) -> httpx.Response:
            assert (method, path) == ("GET", "/api/v1/assignments/week-1/notebook")
            disposition = {"Content-Disposition": 'attachment; filename="week-1.ipynb"'}
            return httpx.Response(200, json={"cells": [], "metadata": {}}, headers=disposition)

    monkeypatch.setattr(cell, "connect", lambda server=None: Server())
    root = tmp_path / "home"
    assert fetched(root, "week-1", overwrite=False) == {"path": "week-1/week-1.ipynb"}
    with pytest.raises(NotebookExists) as exists:
        fetched(root, "week-1", overwrite=False)
    assert str(exists.value).startswith("week-1/week-1.ipynb exists already (your work?): kept")
    assert str(tmp_path) not in str(exists.value) and status_of(exists.value) == 409


def test_a_hand_in_after_the_due_time_is_warned_of_first_even_by_a_server_that_lists_no_warnings():
    """Submit (JupyterLab's and submit() in a cell) hands in only once the student confirms where the
    server warns (its hand_in_warnings, each a sentence); a server older than them lists none, and
    the due time passed is said all the same, as the site's hand-in page says it."""
    from datetime import UTC

    from gradewright.cell import hand_in_warnings
    from gradewright.errors import HandInWarned
    from jupyterlab_gradewright.handlers import status_of

    due, after, before = (
        "2026-12-03T20:00:00+00:00",
        datetime(2026, 12, 4, tzinfo=UTC),
        datetime(2026, 12, 3, tzinfo=UTC),
    )
    assert hand_in_warnings({"name": "a", "due": due}, now=after) == [
        "The due time (3 Dec 2026, 20:00 UTC) has passed: a hand-in now is late."
    ]
    assert hand_in_warnings({"name": "a", "due": due}, now=before) == []
    assert hand_in_warnings({"name": "a", "due": None}, now=after) == []
    # The server's own sentences win, and its silence (an empty list) is heeded.
    assert hand_in_warnings({"due": due, "hand_in_warnings": ["It replaces 10 of 10."]}, now=after) == [
        "It replaces 10 of 10."
    ]
    assert hand_in_warnings({"due": due, "hand_in_warnings": []}, now=after) == []
    assert status_of(HandInWarned(["It is late."])) == 428  # the panel asks before handing in
