"""When a student sees an online exam's results (issue #51, the exams part): the exam's results
setting, per value, through the student's real pages before and after (the taking page, the exam's
page once the attempt ended), the staff publishing and withdrawing them (refused to a student and an
anonymous visitor), and the platform's score following the same rule: Pending with no score until
the student may see it, FullyGraded with it then. Django's test client, the fixtures of
tests/test_online_exams.py."""

from __future__ import annotations

import html
import uuid

import pytest
from django.test import Client

from service.accounts.models import Member
from service.exams.models import OnlineExam

from .test_online_exams import account, lms, midterm, send, variant, wrong_letter  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(180)


def _answer_and_look(midterm, results: str, client: Client | None = None):  # noqa: F811
    """A student answers the first check question right and the second wrong: the taking page then,
    and their exam page after submitting."""
    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(results=results)
    client = client or account(student_id)
    send(client, "/exams/midterm/")
    first, second = [q for q in variant(key, student_id).questions if q.kind == "choice"][:2]
    send(client, "/exams/midterm/answer", position=first.position, value=key.correct_letter(first))
    send(client, "/exams/midterm/answer", position=second.position, value=wrong_letter(key, second))
    taking = html.unescape(client.get("/exams/midterm/").content.decode())
    send(client, "/exams/midterm/submit")
    ended = html.unescape(client.get("/exams/midterm/").content.decode())
    return client, taking, ended


def test_during_shows_each_saved_answers_result_and_the_score_so_far(midterm):  # noqa: F811
    _, taking, ended = _answer_and_look(midterm, OnlineExam.DURING)
    assert taking.count('class="verdict right"') == 1 and taking.count('class="verdict wrong"') == 1
    assert 'id="score"' in taking and "So far: Score: 1 of 5" in taking
    assert "Score: 1 of 5" in ended and "The correct answer is" in ended


@pytest.mark.parametrize("results", [OnlineExam.AT_SUBMIT, OnlineExam.AFTER_CLOSE, OnlineExam.PUBLISHED])
def test_no_result_while_taking_unless_during(midterm, results):  # noqa: F811
    _, taking, ended = _answer_and_look(midterm, results)
    assert "verdict" not in taking and 'id="score"' not in taking and "Score:" not in taking
    if results == OnlineExam.AT_SUBMIT:  # at the attempt's end
        assert "Score: 1 of 5" in ended
    else:
        assert "Score:" not in ended and "The correct answer is" not in ended


def test_published_results_show_once_the_staff_publish_and_hide_again_when_withdrawn(midterm):  # noqa: F811
    client, _, ended = _answer_and_look(midterm, OnlineExam.PUBLISHED)
    assert "Your results are shown here when the staff publish them." in ended
    staff = account(role=Member.TA)
    page = staff.get("/staff/online-exams/midterm/").content.decode()
    assert 'id="publish"' in page and 'id="unpublished"' in page
    send(staff, "/staff/online-exams/midterm/publish", action="publish")
    exam = OnlineExam.objects.get(name="midterm")
    assert exam.published_at is not None and exam.published_by
    assert f"Published by {exam.published_by}" in staff.get("/staff/online-exams/midterm/").content.decode()
    shown = html.unescape(client.get("/exams/midterm/").content.decode())
    assert "Score: 1 of 5" in shown and "The correct answer is" in shown
    send(staff, "/staff/online-exams/midterm/publish", action="unpublish")
    hidden = html.unescape(client.get("/exams/midterm/").content.decode())
    assert "Score:" not in hidden and "when the staff publish them" in hidden
    assert send(staff, "/staff/online-exams/midterm/publish", action="everything").status_code == 400


def test_publishing_is_refused_to_a_student_and_an_anonymous_visitor(midterm):  # noqa: F811
    OnlineExam.objects.filter(name="midterm").update(results=OnlineExam.PUBLISHED)
    student = account(midterm["ids"][1])
    assert send(student, "/staff/online-exams/midterm/publish", action="publish").status_code == 404
    anonymous = Client()
    answer = anonymous.post("/staff/online-exams/midterm/publish", {"action": "publish"})
    assert answer.status_code == 302 and "/login" in answer["Location"]
    assert OnlineExam.objects.get(name="midterm").published_at is None
    # A student never sees the staff's Publish form on their page either.
    assert 'id="publish"' not in student.get("/exams/midterm/").content.decode()


def launched(midterm, lms) -> tuple[Client, str]:  # noqa: F811
    """The first student launches the exam from the test platform, whose column it has, and starts
    it: their client, and their id on the platform."""
    from gradebook.models import Student

    from .lti_platform import LEARNER
    from .test_lti import launch

    key, student_id = midterm["key"], midterm["ids"][0]
    sub = f"learner-{uuid.uuid4().hex[:6]}"
    Student.objects.create(student_id=student_id, name="Exam Learner", email=f"{sub}@example.edu", on_roster=True)
    line_item = lms.add_line_item({"label": key.title, "scoreMaximum": 5, "resourceId": "exam:midterm"})
    client = Client()
    launch(client, lms, sub, [LEARNER], custom={"exam": "midterm"}, lineitem=line_item["id"])
    client.post("/exams/midterm/")
    return client, sub


def test_the_platform_gets_the_exam_score_only_once_published(midterm, lms):  # noqa: F811
    from service.lti.outbox import send_due

    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(results=OnlineExam.PUBLISHED)
    client, sub = launched(midterm, lms)
    question = [q for q in variant(key, student_id).questions if q.kind == "choice"][0]
    client.post("/exams/midterm/answer", {"position": question.position, "value": key.correct_letter(question)})
    client.post("/exams/midterm/submit")
    send_due()
    (before,) = [score for _, score in lms.scores if score["userId"] == sub]
    assert before["gradingProgress"] == "Pending" and before["activityProgress"] == "Submitted"
    assert "scoreGiven" not in before
    staff = account(role=Member.TA)
    send(staff, "/staff/online-exams/midterm/publish", action="publish")
    send_due()
    after = [score for _, score in lms.scores if score["userId"] == sub][-1]
    assert (after["scoreGiven"], after["scoreMaximum"]) == (1, 5) and after["activityProgress"] == "Completed"
