"""Regrades the staff queue: one submission, the whole assignment, one question for one student, one
student's latest after comparing two of their submissions."""

from __future__ import annotations

import re

import pytest

from service.models import Job, Member

from .conftest import needs_sandbox
from .served import CORRECT, PARTIAL, grade_queue, graded_hand_in, hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


@needs_sandbox
def test_the_staff_queue_a_regrade_of_one_submission_or_the_whole_assignment():
    alice, as_alice, first = graded_hand_in()
    _, ta = student(Member.TA)
    ta.get(f"/submissions/{first.id}/")
    token = ta.cookies["csrftoken"].value
    answer = ta.post(
        "/staff/regrade/sequences-and-attention/",
        {"job": first.id, "back": f"/submissions/{first.id}/", "csrfmiddlewaretoken": token},
    )
    assert answer["Location"] == f"/submissions/{first.id}/"
    again = Job.objects.filter(student__student_id=alice.username).order_by("id").last()
    assert again.id != first.id and again.regrade and again.state == Job.QUEUED
    assert (
        ta.post("/staff/regrade/sequences-and-attention/", {"back": "//evil.example/", "csrfmiddlewaretoken": token})[
            "Location"
        ]
        == "/staff/gradebook/sequences-and-attention/"
    )
    grade_queue()
    again.refresh_from_db()
    assert again.state == Job.GRADED and again.submission_id == first.submission_id  # the same file, graded again
    assert as_alice.get(f"/api/v1/submissions/{again.id}").json()["report"]["score"] == 7.375
    assert as_alice.post("/staff/regrade/sequences-and-attention/", {}).status_code == 403  # no CSRF token
    as_alice.get("/assignments/")
    with_token = {"csrfmiddlewaretoken": as_alice.cookies["csrftoken"].value}
    assert as_alice.post("/staff/regrade/sequences-and-attention/", with_token).status_code == 404  # not staff

    # One question alone, for one student: its result is made again, the others' rows stand.
    from gradebook.models import Result

    before = dict(Result.objects.filter(submission_id=first.submission_id).values_list("question_id", "id"))
    answer = ta.post(
        "/staff/regrade/sequences-and-attention/",
        {"student": alice.username, "question": "attention", "csrfmiddlewaretoken": token},
    )
    assert answer.status_code == 302
    queued = Job.objects.filter(student__student_id=alice.username).order_by("id").last()
    assert (queued.question, queued.state) == ("attention", Job.QUEUED)
    grade_queue()
    after = dict(Result.objects.filter(submission_id=first.submission_id).values_list("question_id", "id"))
    assert after.keys() == before.keys() and after["attention"] != before["attention"]
    assert all(after[q] == before[q] for q in before if q != "attention")
    assert as_alice.get(f"/api/v1/submissions/{queued.id}").json()["report"]["score"] == 7.375
    no_such = ta.post("/staff/regrade/sequences-and-attention/", {"question": "nope", "csrfmiddlewaretoken": token})
    assert no_such.status_code == 404


@needs_sandbox
def test_the_staff_compare_two_submissions_and_regrade_one_students_latest(tmp_path):
    alice, as_alice = student()
    hand_in(as_alice, PARTIAL)
    changed = tmp_path / "fixed.py"
    changed.write_text(CORRECT.read_text() + "\n# fixed the <script>scaling</script>\n")
    hand_in(as_alice, changed)
    grade_queue()
    _, ta = student(Member.TA)
    history = ta.get(f"/staff/students/{alice.username}/").content.decode()
    link = re.search(rf'href="(/staff/students/{alice.username}/diff/\d+/\d+/)"', history)
    assert link is not None
    diff = ta.get(link.group(1)).content.decode()
    assert "diff_add" in diff and "&lt;script&gt;scaling&lt;/script&gt;" in diff and "<script>scaling" not in diff
    before = Job.objects.filter(student__student_id=alice.username).count()
    token = ta.cookies["csrftoken"].value
    ta.post("/staff/regrade/sequences-and-attention/", {"student": alice.username, "csrfmiddlewaretoken": token})
    again = Job.objects.filter(student__student_id=alice.username).order_by("id")
    assert again.count() == before + 1 and again.last().regrade and again.last().sha256 == again[1].sha256
    grade_queue()
    assert as_alice.get("/api/v1/submissions").json()["submissions"][0]["state"] == "graded"
    assert as_alice.get(link.group(1)).status_code == 404
