"""A hand-in is an event (issue #46): every hand-in its own submission with its own time, whatever its
bytes; a regrade grades a submission again and is never a hand-in; the submission that counts is the
assignment's rule's (last, best, last_before_due) or the staff's choice, with who and why, undone the
same way; the student is told before a hand-in that would replace a better or an on-time grade; and
a gradebook of the schema before keeps every row."""

from __future__ import annotations

import csv
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gradebook.book import Gradebook
from gradebook.grades import HandIn, counted_rows, current_grades, which_counts
from service.accounts.models import Member
from service.core.access import assignments
from service.handin.models import Job

from .conftest import needs_sandbox
from .served import CORRECT, PARTIAL, grade_queue, hand_in, openapi_validator, student
from .test_grade_versions import START
from .test_grade_versions import hand_in as _record  # a graded hand-in as grading records it

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here

GRADED = "sequences-and-attention"
DUE = START + timedelta(hours=10)


# The rule, in one place.


def test_the_rule_of_what_counts():
    a, b, c = (
        HandIn(1, START, 10.0),
        HandIn(2, START + timedelta(hours=20), 3.0),
        HandIn(3, START + timedelta(hours=30), 7.0),
    )
    assert which_counts("last", [a, b, c], DUE) == c
    assert which_counts("best", [a, b, c], DUE) == a
    assert which_counts("best", [a, HandIn(4, START + timedelta(hours=1), 10.0)], DUE).id == 4  # of equal, the later
    assert which_counts("last_before_due", [a, b, c], DUE) == a
    assert which_counts("last_before_due", [b, c], DUE) == c  # none on time: the last of all
    assert which_counts("last_before_due", [a, b, c], None) == c  # no due time: the last
    assert which_counts("last_before_due", [a, b, c], DUE + timedelta(hours=15)) == b  # the student's own (extended)
    assert which_counts("best", [a, b, c], DUE, chosen=2) == b  # the staff's choice wins while it is there
    assert which_counts("last", [a, c], DUE, chosen=2) == c
    assert which_counts("last", [], DUE) is None


@pytest.mark.parametrize(
    ("rule", "expected"),
    [("last", 0.9 * 0.5), ("best", 0.9 * 1.0), ("last_before_due", 0.6)],  # of the points, late penalty off
)
def test_each_rule_decides_the_grade_every_table_reads(tmp_path, rule, expected):
    """A on time (0.6 of the points), B late (all of them), A again later (half): the rule picks; the
    history marks the same one, and a grade file and the statistics read it too."""
    from gradebook.history import history
    from gradebook.reports import write_grades_csv
    from gradebook.stats import statistics

    spec = assignments()[GRADED].model_copy(update={"due": DUE, "late_penalty": "10% per day", "counts": rule})
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        _record(book, spec, "ann", 0.6, 1, "a")
        _record(book, spec, "ann", 1.0, 12, "b")
        _record(book, spec, "ann", 0.5, 13, "a")  # the same file as the first: a hand-in of its own
        (grade,) = current_grades(book, spec)
        assert grade.submissions == 3
        final = expected * spec.max_score
        assert grade.final_score == pytest.approx(final)
        (detailed,) = current_grades(book, spec, detail=False)
        assert detailed.final_score == pytest.approx(final)
        entries = history(book, "ann", [spec])
        assert [e.sha256 for e in entries] == ["a", "b", "a"] and len({e.submitted_at for e in entries}) == 3
        assert [e.final_score for e in entries if e.current] == [pytest.approx(final)]
        write_grades_csv(book, spec, tmp_path / "grades.csv")
        (row,) = csv.DictReader((tmp_path / "grades.csv").open())
        assert float(row["final_score"]) == pytest.approx(final, abs=0.01)
        stats = statistics(book, spec)
        assert stats.students == 1 and stats.final_scores == [pytest.approx(final)]
        # The marking pages, the answer groups and similarity read the same submission (counted_rows).
        counted = {"last": "a", "best": "b", "last_before_due": "a"}[rule]
        (row_counted,) = book.run(lambda: list(counted_rows(book, spec)))
        assert row_counted.sha256 == counted and row_counted.id == next(e.id for e in entries if e.current)
        if rule == "last_before_due":  # the student's own due time: with an extension, B was on time
            from gradebook.extensions import extend

            extend(book, "ann", spec, START + timedelta(hours=12, minutes=30))
            assert current_grades(book, spec)[0].final_score == pytest.approx(spec.max_score)
            assert [e.sha256 for e in history(book, "ann", [spec]) if e.current] == ["b"]


# Through the site and the API: A, B, A.


def _api_hand_in(client, path: Path) -> int:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.get("/assignments/")
    answer = client.post(
        "/api/v1/submissions",
        {"assignment": GRADED, "file": SimpleUploadedFile(path.name, path.read_bytes())},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


@needs_sandbox
def test_a_b_a_on_the_site_and_through_the_api_counts_a_with_three_hand_ins(tmp_path):
    from gradebook.exports import export_grades
    from service.core.access import book

    on_site, as_site = student()
    for path in (CORRECT, PARTIAL, CORRECT):
        assert hand_in(as_site, path).status_code == 302
    through_api, as_api = student()
    for path in (CORRECT, PARTIAL, CORRECT):
        _api_hand_in(as_api, path)
    grade_queue()
    _, ta = student(Member.TA)
    grades = {g["student_id"]: g for g in ta.get(f"/api/v1/assignments/{GRADED}/grades").json()["grades"]}
    for user, client in ((on_site, as_site), (through_api, as_api)):
        name = user.username
        assert (grades[name]["final_score"], grades[name]["submissions"]) == (10.0, 3)
        listed = client.get(f"/api/v1/submissions?assignment={GRADED}").json()["submissions"]
        assert len(listed) == 3 and len({s["submitted_at"] for s in listed} | {s["id"] for s in listed}) >= 3
        assert [s["counts"] for s in listed] == [True, False, False]  # the newest first: the last A
        validate = openapi_validator("Submission")
        for entry in listed:
            validate.validate(entry)
        page = client.get(f"/assignments/{GRADED}/").content.decode()
        assert page.count('<tr><td><a href="/submissions/') == 3
        assert len(re.findall(r">counts</span>", page)) == 1
        mine = client.get("/assignments/").content.decode()
        assert "10 / 10" in mine
        history = ta.get(f"/staff/students/{name}/").content.decode()
        assert len(re.findall(r"<time datetime=\"([^\"]+)\">", history.split("<h2>")[0])) >= 3
    first, _, last = Job.objects.filter(student__student_id=on_site.username).order_by("id")
    assert "Make this the one that counts" in ta.get(f"/submissions/{first.id}/").content.decode()
    assert "Your grade is this submission's." in as_site.get(f"/submissions/{last.id}/").content.decode()
    assert "Your grade is this submission's." not in as_site.get(f"/submissions/{first.id}/").content.decode()
    gradebook_page = ta.get(f"/staff/gradebook/{GRADED}/").content.decode()
    assert (
        on_site.username in gradebook_page
        and "the last submission counts (counts in assignment.toml)" in gradebook_page
    )
    out, _ = export_grades(book(), [assignments()[GRADED]], "csv", tmp_path / "grades.csv", "empty")
    rows = {row["student_id"]: row for row in csv.DictReader(out.open())}
    assert {rows[u.username][GRADED] for u in (on_site, through_api)} == {"10"}


@needs_sandbox
def test_a_regrade_is_seen_by_the_student_as_a_new_grading_of_their_hand_in_never_a_new_one():
    alice, as_alice = student()
    hand_in(as_alice, PARTIAL)
    grade_queue()
    (first,) = Job.objects.filter(student__student_id=alice.username)
    handed_at = first.submission.submitted_at
    _, ta = student(Member.TA)
    ta.get(f"/staff/gradebook/{GRADED}/")
    ta.post(f"/staff/regrade/{GRADED}/", {"csrfmiddlewaretoken": ta.cookies["csrftoken"].value})
    grade_queue()
    regrade = Job.objects.filter(student__student_id=alice.username, regrade=True).get()
    assert regrade.state == Job.GRADED and regrade.submission_id == first.submission_id
    first.submission.refresh_from_db()
    assert first.submission.submitted_at == handed_at and first.submission.graded_at >= handed_at
    page = as_alice.get(f"/assignments/{GRADED}/").content.decode()
    assert page.count('<tr><td><a href="/submissions/') == 1 and "graded again" in page
    listed = as_alice.get("/api/v1/submissions").json()["submissions"]
    assert [s["id"] for s in listed] == [first.id] and listed[0]["counts"]
    (grade,) = [
        g for g in ta.get(f"/api/v1/assignments/{GRADED}/grades").json()["grades"] if g["student_id"] == alice.username
    ]
    assert grade["submissions"] == 1


# The staff's choice, and its undoing, in the history.


def _two_hand_ins(spec):
    """A student with a full-marks hand-in and a later half-marks one, in the site's gradebook."""
    from gradebook.models import Submission
    from service.core.access import book

    user, client = student()
    _record(book(), spec, user.username, 1.0, 1, "a")
    _record(book(), spec, user.username, 0.5, 2, "b")
    ids = list(Submission.objects.filter(student__student_id=user.username).order_by("id").values_list("id", flat=True))
    return user.username, ids, client


def test_the_staff_make_a_submission_the_one_that_counts_and_undo_it_with_why():
    spec = assignments()[GRADED]
    name, (first, second), as_them = _two_hand_ins(spec)
    _, ta = student(Member.TA)
    ta.get(f"/staff/students/{name}/")
    token = ta.cookies["csrftoken"].value

    def final() -> float:
        return next(
            g for g in ta.get(f"/api/v1/assignments/{GRADED}/grades").json()["grades"] if g["student_id"] == name
        )["final_score"]

    assert final() == 5.0
    no_reason = ta.post(
        f"/staff/counts/{GRADED}/", {"student": name, "submission": first, "csrfmiddlewaretoken": token}
    )
    assert no_reason.status_code == 302 and final() == 5.0
    chosen = ta.post(
        f"/staff/counts/{GRADED}/",
        {"student": name, "submission": first, "reason": "the late file was a mistake", "csrfmiddlewaretoken": token},
    )
    assert chosen.status_code == 302 and final() == 10.0
    (told,) = [
        a["hand_in_warnings"] for a in as_them.get("/api/v1/assignments").json()["assignments"] if a["name"] == GRADED
    ]
    assert told == [
        "The staff chose which of your hand-ins counts: a new hand-in leaves your current grade, 10 of 10 points "
        "(your hand-in of 1 Nov 2026, 10:00 UTC) as it is, until they undo that choice."
    ]
    page = ta.get(f"/staff/students/{name}/").content.decode()
    assert "the late file was a mistake" in page and ">chosen<" in page and "Undo: the rule decides again" in page
    undone = ta.post(
        f"/staff/counts/{GRADED}/", {"student": name, "reason": "asked again", "csrfmiddlewaretoken": token}
    )
    assert undone.status_code == 302 and final() == 5.0
    page = ta.get(f"/staff/students/{name}/").content.decode()
    assert "undone: the rule decides" in page and "asked again" in page and "the late file was a mistake" in page
    # Another student's submission, a student, an anonymous visitor: refused, nothing recorded.
    other, _, _ = _two_hand_ins(spec)
    from gradebook.models import CountedChoice, Submission

    theirs = Submission.objects.filter(student__student_id=other).first().id
    stolen = ta.post(
        f"/staff/counts/{GRADED}/", {"student": name, "submission": theirs, "reason": "x", "csrfmiddlewaretoken": token}
    )
    assert stolen.status_code == 404
    _, as_student = student()
    as_student.get("/assignments/")
    assert (
        as_student.post(
            f"/staff/counts/{GRADED}/",
            {
                "student": name,
                "submission": second,
                "reason": "x",
                "csrfmiddlewaretoken": as_student.cookies["csrftoken"].value,
            },
        ).status_code
        == 404
    )
    from django.test import Client

    assert (
        Client().post(f"/staff/counts/{GRADED}/", {"student": name, "submission": second, "reason": "x"}).status_code
        == 302
    )
    assert Client().get(f"/staff/students/{name}/").status_code == 302
    assert CountedChoice.objects.filter(student__student_id=name).count() == 2


# Told before a hand-in.


def test_the_student_is_told_before_a_hand_in_that_would_replace_an_on_time_or_a_better_grade(monkeypatch):
    from service.core import access
    from service.core.access import book
    from service.handin import api
    from service.templatetags.pages import moment

    handed = (datetime.now(UTC) - timedelta(days=3)).replace(second=0, microsecond=0)  # on time, full marks
    due = handed + timedelta(hours=1)
    spec = assignments()[GRADED].model_copy(update={"due": due, "late_penalty": "10% per day"})
    user, client = student()
    _record(book(), spec, user.username, 1.0, 0, "a", start=handed)
    patched = {**assignments(), GRADED: spec}
    monkeypatch.setattr(access, "assignments", lambda: patched)
    monkeypatch.setattr(api, "assignments", lambda: patched)

    def told(client) -> list[str]:
        listed = {a["name"]: a for a in client.get("/api/v1/assignments").json()["assignments"]}
        openapi_validator("Assignment").validate(listed[GRADED])
        return listed[GRADED]["hand_in_warnings"]

    late, replaced = told(client)
    assert late == f"The due time ({moment(due)}) has passed: a hand-in now is late and loses 30% of its score."
    assert replaced == (
        f"A hand-in now replaces your current grade, 10 of 10 points (your hand-in of {moment(handed)}), which was "
        "on time, with a late one, even if it scores lower: on this assignment the last submission counts."
    )
    page = client.get(f"/assignments/{GRADED}/").content.decode()
    assert "which was on time, with a late one" in page and "the last submission counts" in page
    patched[GRADED] = spec.model_copy(update={"counts": "last_before_due"})
    assert told(client)[1].startswith(
        "A hand-in now does not count, on this assignment the last submission by the due time counts (the last of "
        "all when none was on time): your current grade, 10 of 10 points"
    )
    patched[GRADED] = spec.model_copy(update={"counts": "best", "due": None})
    assert told(client) == []
    patched[GRADED] = spec.model_copy(update={"due": None})  # before the due time: a better grade may be replaced
    assert told(client) == [
        f"A hand-in now replaces your current grade, 10 of 10 points (your hand-in of {moment(handed)}), even if it "
        "scores lower: on this assignment the last submission counts."
    ]
    patched[GRADED] = spec.model_copy(update={"due": None, "feedback": "hidden"})  # no score where scores are hidden
    assert told(client) == [
        f"A hand-in now replaces your current grade (your hand-in of {moment(handed)}), even if it scores lower: "
        "on this assignment the last submission counts."
    ]
    _, stranger = student()  # another student is told nothing of this one's grade
    assert told(stranger) == []


# A gradebook of the schema before keeps every row.


def test_a_gradebook_of_the_schema_before_migrates_without_losing_a_row(tmp_path):
    from django.core.management import call_command
    from django.db import connections

    from gradebook.models import Submission

    path = tmp_path / "gradebook.db"
    alias = "old_gradebook_test"
    connections.settings[alias] = connections.configure_settings(
        {"default": {}, alias: {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}}
    )[alias]
    try:
        call_command(
            "migrate", "gradebook", "0013_similarity_run_lease", database=alias, verbosity=0, interactive=False
        )
    finally:
        connections[alias].close()
    with sqlite3.connect(path) as old:
        old.execute(
            "INSERT INTO gradebook_student (id, student_id, name, email, canvas_id, moodle_id, sis_id, on_roster) VALUES (1, 'ann', '', '', '', '', '', 1)"
        )
        old.execute("INSERT INTO gradebook_assignment (id, name, title, max_score) VALUES (1, 'hw', 'HW', 10)")
        for pk, sha in ((1, "a"), (2, "b")):
            old.execute(
                "INSERT INTO gradebook_submission (id, student_id, assignment_id, sha256, file, submitted_at, graded_at, graded_by, "
                "grader_version, reference, sandbox, ran, errors, output) VALUES (?, 1, 1, ?, '', ?, ?, '', '', '', '', 1, '[]', '')",
                (pk, sha, f"2026-11-0{pk} 09:00:00", f"2026-11-0{pk} 09:00:01"),
            )
            old.execute(
                "INSERT INTO gradebook_result (submission_id, question_id, score, max_score, status, feedback, tests, answers) "
                "VALUES (?, 'q', ?, 10, 'passed', '', '[]', '{}')",
                (pk, 10 - pk),
            )
        with pytest.raises(sqlite3.IntegrityError):  # the schema before: one row per student and file
            old.execute(
                "INSERT INTO gradebook_submission (student_id, assignment_id, sha256, file, graded_at, graded_by, grader_version, "
                "reference, sandbox, ran, errors, output) VALUES (1, 1, 'a', '', '2026-11-03', '', '', '', '', 1, '[]', '')"
            )
    with Gradebook.open(path) as book:
        rows = book.run(
            lambda: list(book.objects(Submission).order_by("id").values_list("id", "sha256", "results__score"))
        )
        assert rows == [(1, "a", 9.0), (2, "b", 8.0)]
        again = book.run(
            lambda: book.objects(Submission).create(
                student_id=1, assignment_id=1, sha256="a", graded_at=START, submitted_at=START + timedelta(days=5)
            )
        )
        assert again.id == 3  # the same file again: a hand-in of its own


def test_the_command_makes_a_submission_the_one_that_counts_and_undoes_it(tmp_path, capsys, monkeypatch):
    from commands.autograder import main
    from gradebook.grades import current_grades

    from .conftest import ROOT

    monkeypatch.chdir(ROOT)  # the shipped course: its assignments by name
    spec = assignments()[GRADED]
    path = tmp_path / "gradebook.db"
    with Gradebook.open(path) as book:
        _record(book, spec, "ann", 1.0, 1, "a")
        _record(book, spec, "ann", 0.5, 2, "b")
    assert main(["history", "ann", GRADED, "--gradebook", str(path)]) == 0
    listed = capsys.readouterr().out
    first = re.search(r"│\s+│\s+(\d+)\s+│", listed)  # the row without the * : the first, not counted
    assert first is not None
    count = ["grades", "count", "ann", GRADED, "--gradebook", str(path)]
    assert main([*count, "--submission", first.group(1), "--reason", "the second was a mistake"]) == 0
    assert capsys.readouterr().out.strip() == f"ann on {GRADED}: submission {first.group(1)} is the one that counts now"
    with Gradebook.open(path) as book:
        assert [g.final_score for g in current_grades(book, spec)] == [10.0]
    assert main(["history", "ann", GRADED, "--gradebook", str(path)]) == 0
    assert "made the one that counts by" in capsys.readouterr().out
    assert main([*count, "--undo", "--reason", "asked again"]) == 0
    assert capsys.readouterr().out.strip() == f"ann on {GRADED}: the choice is undone; the last submission counts"
    with Gradebook.open(path) as book:
        assert [g.final_score for g in current_grades(book, spec)] == [5.0]
    assert main([*count, "--undo", "--reason", "again"]) == 2  # nothing stands to undo
    assert "no choice of the staff's stands" in capsys.readouterr().err
    assert main([*count, "--submission", "999", "--reason", "x"]) == 2
    assert "ann has no submission 999 of sequences-and-attention" in capsys.readouterr().err


def test_the_service_gives_each_hand_in_that_shared_a_row_a_submission_of_its_own(tmp_path):
    """A, B, A handed in before: the third hand-in's job pointed at the first's row, at its time. After
    the migration it has a submission of its own, at its own time, with the results; a regrade's job
    keeps the row it graded again; nothing is lost."""
    from django.core.management import call_command
    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor

    alias = "old_service_test"
    connections.settings[alias] = connections.configure_settings(
        {"default": {}, alias: {"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "site.db")}}
    )[alias]
    before = [("gradebook", "0013_similarity_run_lease"), ("service", "0019_score_placements")]
    try:
        executor = MigrationExecutor(connections[alias])
        executor.migrate(before)
        apps = executor.loader.project_state(before).apps
        student = apps.get_model("gradebook", "Student").objects.using(alias).create(student_id="ann")
        assignment = apps.get_model("gradebook", "Assignment").objects.using(alias).create(name="hw", max_score=10)
        rows = apps.get_model("gradebook", "Submission").objects.using(alias)
        first = rows.create(student=student, assignment=assignment, sha256="a", submitted_at=START, graded_at=START)
        second = rows.create(student=student, assignment=assignment, sha256="b", submitted_at=START, graded_at=START)
        apps.get_model("gradebook", "Result").objects.using(alias).create(
            submission=first, question_id="q", score=10, max_score=10, status="passed"
        )
        jobs = apps.get_model("service", "Job").objects.using(alias)
        made = {}
        for name, submission, regrade in (
            ("A", first, False),
            ("B", second, False),
            ("A again", first, False),
            ("regrade", first, True),
        ):
            made[name] = jobs.create(
                student=student,
                assignment="hw",
                file="f",
                original_name="a.py",
                size=1,
                sha256=submission.sha256,
                state="graded",
                submission=submission,
                regrade=regrade,
            ).pk
        call_command("migrate", database=alias, verbosity=0, interactive=False)
        from gradebook.models import Result, Submission
        from service.handin.models import Job as JobNow

        now = {name: JobNow.objects.using(alias).get(pk=pk) for name, pk in made.items()}
        assert now["A"].submission_id == first.pk and now["regrade"].submission_id == first.pk
        assert now["B"].submission_id == second.pk
        own = now["A again"].submission_id
        assert own not in (first.pk, second.pk)
        copied = Submission.objects.using(alias).get(pk=own)
        assert copied.sha256 == "a" and copied.submitted_at == now["A again"].created_at
        assert list(Result.objects.using(alias).filter(submission_id=own).values_list("question_id", "score")) == [
            ("q", 10.0)
        ]
        assert Submission.objects.using(alias).count() == 3 and Result.objects.using(alias).count() == 2
    finally:
        connections[alias].close()


def test_autograder_submit_says_the_warnings_and_hands_in_nothing_without_anyway(tmp_path, capsys, monkeypatch):
    import json

    import service.handin.client
    from commands.autograder import main

    server = "https://grading.example.edu"
    (tmp_path / "gradewright").mkdir()
    (tmp_path / "gradewright" / "servers.json").write_text(json.dumps({server: {"token": "t"}, "_last": server}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    warning = "The due time (1 Nov 2026, 10:30 UTC) has passed: a hand-in now is late and loses 10% of its score."
    posted = []

    def answer(method: str, url: str, **options) -> dict:
        if method == "GET" and url.endswith("/api/v1/assignments"):
            return {"assignments": [{"name": GRADED, "hand_in_warnings": [warning]}]}
        posted.append(url)
        return {"id": 7, "state": "queued", "page": "/submissions/7/"}

    monkeypatch.setattr(service.handin.client, "_call", answer)
    handing = ["submit", str(PARTIAL), "--assignment", GRADED, "--no-wait"]
    assert main(handing) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"warning: {warning}",
        "nothing was handed in; hand it in all the same with --anyway",
    ]
    assert posted == []
    assert main([*handing, "--anyway"]) == 0
    assert posted == [f"{server}/api/v1/submissions"]
    assert "submission 7: queued" in capsys.readouterr().out


def test_submit_in_a_notebook_says_the_warnings_and_hands_in_nothing_without_anyway(monkeypatch):
    from gradewright import cell
    from gradewright.errors import HandInWarned

    warning = "A hand-in now replaces your current grade, 10 of 10 points (your hand-in of 1 Nov 2026, 10:00 UTC)."
    posted = []

    class Connection:
        server = "https://grading.example.edu"

        def json(self, method: str, path: str, **options) -> dict:
            if method == "GET":
                return {"assignments": [{"name": GRADED, "hand_in_warnings": [warning]}]}
            posted.append(path)
            return {"id": 7, "state": "queued", "page": "/submissions/7/"}

    monkeypatch.setattr(cell, "connect", lambda server=None: Connection())
    with pytest.raises(HandInWarned) as warned:
        cell.submit(GRADED, notebook=PARTIAL, wait=False)
    assert warned.value.warnings == [warning] and str(warned.value).startswith(f"nothing was handed in: {warning}")
    assert posted == []
    cell.submit(GRADED, notebook=PARTIAL, wait=False, anyway=True)
    assert posted == ["/api/v1/submissions"]


def test_a_choice_and_its_undoing_show_on_the_next_read_of_the_kept_grade_table(database):
    """The staff's choices are a table the grade is derived from: its writes change the grades'
    version (the database's triggers), so a kept table never shows the grade from before."""
    from gradebook.counting import choose
    from gradebook.models import Submission

    from .test_grade_versions import opened

    spec = assignments()[GRADED]
    with opened(database) as book:
        _record(book, spec, "ann", 1.0, 1, "a")
        _record(book, spec, "ann", 0.5, 2, "b")
        first = book.run(lambda: book.objects(Submission).get(sha256="a").id)

        def final() -> float | None:
            return current_grades(book, spec, detail=False)[0].final_score

        assert final() == final() == 5.0  # the second read is the kept table's
        choose(book, spec, "ann", first, "the second was a mistake", by="ta")
        assert final() == 10.0
        choose(book, spec, "ann", None, "asked again", by="ta")
        assert final() == 5.0
