"""Regrades the staff queue: one submission, the whole assignment, one question for one student, one
student's latest after comparing two of their submissions."""

from __future__ import annotations

import re

import pytest

from service.accounts.models import Member
from service.handin.models import Job

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

    # The staff make the first hand-in the one that counts: a regrade grades it again too, not the latest alone.
    first, latest = again[0].submission_id, again[1].submission_id
    chosen = {"student": alice.username, "submission": first, "reason": "the first was meant"}
    ta.post("/staff/counts/sequences-and-attention/", {**chosen, "csrfmiddlewaretoken": token})
    ta.post("/staff/regrade/sequences-and-attention/", {"student": alice.username, "csrfmiddlewaretoken": token})
    queued = Job.objects.filter(student__student_id=alice.username, state=Job.QUEUED, regrade=True)
    assert sorted(queued.values_list("submission_id", flat=True)) == sorted([first, latest])
    grade_queue()


def test_the_gradebook_shows_a_class_regrade_as_it_goes():
    """Issue #49: a regrade of a class says on the gradebook how far it is, reloading itself, as the
    similarity run and the exam grading do; once done, what it did; only the staff read it."""
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    from service.handin.queue import regrade

    spec = "attention-not-explanation"  # no other test of this file regrades it
    students = [student()[0] for _ in range(4)]
    originals = [
        Job.objects.create(
            student=user.member.student,
            assignment=spec,
            file="uploads/none",
            original_name="a.ipynb",
            size=1,
            sha256="0" * 64,
            state=Job.GRADED,
        )
        for user in students
    ]
    jobs = regrade(originals)
    _, ta = student(Member.TA)
    url = f"/staff/gradebook/{spec}/"
    Job.objects.filter(id=jobs[0].id).update(state=Job.GRADED, finished_at=timezone.now())
    Job.objects.filter(id=jobs[1].id).update(state=Job.GRADING)
    page = ta.get(url)
    shown = re.sub(r"\s+", " ", page.content.decode())
    assert page["Refresh"] == "3" and 'id="regrade-progress"' in shown
    assert "Grading again (4 submissions" in shown and "1 graded, 1 being graded, 2 waiting" in shown
    assert '<progress max="4" value="1"' in shown
    Job.objects.filter(id__in=[j.id for j in jobs[1:]]).update(state=Job.GRADED, finished_at=timezone.now())
    Job.objects.filter(id=jobs[3].id).update(state=Job.FAILED)
    done = ta.get(url)
    shown = re.sub(r"\s+", " ", done.content.decode())
    assert "Refresh" not in done and "Graded again, asked" in shown and ": 3 submissions; 1 failed" in shown
    # Long done: no longer told.
    Job.objects.filter(id__in=[j.id for j in jobs]).update(finished_at=timezone.now() - timedelta(hours=1))
    assert 'id="regrade-progress"' not in ta.get(url).content.decode()
    # A student and an anonymous visitor read none of it.
    assert student()[1].get(url).status_code in (403, 404)
    assert Client().get(url)["Location"].startswith("/accounts/login/")
