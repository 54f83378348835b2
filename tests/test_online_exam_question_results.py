"""When a student sees an online exam's results, question by question (issue #51, the exams part): a
question's own setting over the exam's, per value, through the student's real pages (the taking page
during the attempt, the exam's page after it, with the honest total of the questions shown), the
instructor's form on the exam's staff page, one question published on its own, and the platform's
score: Pending with no score while any question's results are hidden from the student. Another student
and an anonymous visitor are refused each of them. Django's test client, the fixtures of
tests/test_online_exams.py."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from service.accounts.models import Member
from service.exams.models import ExamQuestionResults, OnlineExam
from service.exams.sessions import question_name

from .test_online_exam_results import launched
from .test_online_exams import account, lms, midterm, send, variant, wrong_letter  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(180)


def _own(midterm, name: str, results: str) -> None:  # noqa: F811
    ExamQuestionResults.objects.update_or_create(exam=midterm["exam"], question=name, defaults={"results": results})


def _section(page: str, position: int) -> str:
    """The feedback of one question: from its heading to the next one's."""
    found = re.search(rf"<h2[^>]*>{position}\. .*?(?=<h2|\Z)", page, re.S)
    assert found, f"no question {position} in the feedback"
    return found.group(0)


def _take(midterm, own: str, exam: str = OnlineExam.AT_SUBMIT):  # noqa: F811
    """The student's first check question has its own setting ``own`` (the exam's: ``exam``); they
    answer it right and the second check question wrong, then submit: the taking page then, and their
    exam page after."""
    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(results=exam)
    first, second = [q for q in variant(key, student_id).questions if q.kind == "choice"][:2]
    _own(midterm, question_name(key, first), own)
    client = account(student_id)
    send(client, "/exams/midterm/")
    send(client, "/exams/midterm/answer", position=first.position, value=key.correct_letter(first))
    send(client, "/exams/midterm/answer", position=second.position, value=wrong_letter(key, second))
    taking = html.unescape(client.get("/exams/midterm/").content.decode())
    send(client, "/exams/midterm/submit")
    ended = html.unescape(client.get("/exams/midterm/").content.decode())
    return client, first, taking, ended


LATER = {
    OnlineExam.AFTER_CLOSE: "shown after the exam closes",
    OnlineExam.PUBLISHED: "shown when the staff publish them",
    OnlineExam.NEVER: "not shown here: the staff tell you",
}


@pytest.mark.parametrize("own", [value for value, _ in OnlineExam.RESULTS])
def test_a_questions_own_setting_wins_over_the_exams_on_every_page(midterm, own):  # noqa: F811
    client, first, taking, ended = _take(midterm, own)
    if own == OnlineExam.DURING:  # its result alone while taking, the score said to be of it alone
        assert taking.count('class="verdict right"') == 1 and 'class="verdict wrong"' not in taking
        assert "So far: Score on the questions shown: 1 of 1 (results shown for 1 of 5 questions; " in taking
        assert "4 more shown when your attempt ends)" in taking
    else:
        assert "verdict" not in taking and "Score" not in taking
    if own in LATER:  # the other four shown at the end (the exam's setting), this one later
        assert "Score on the questions shown: 0 of 4, 1 open question not marked yet " in ended
        assert f"(results shown for 4 of 5 questions; 1 more {LATER[own]})" in ended
        assert "Score: " not in ended  # never a total that implies more
        mine = _section(ended, first.position)
        assert f"Its results are {LATER[own]}." in mine and "correct" not in mine
        assert ended.count("The correct answer is") == 3  # the other check questions', shown
    else:
        assert "Score: 1 of 5: 1 of 4 questions right" in ended and "Its results are" not in ended
    # Another student reads nothing of it (their page is their own); an anonymous visitor signs in first.
    other = html.unescape(account(midterm["ids"][1]).get("/exams/midterm/").content.decode())
    assert "Score" not in other and "Your attempt ended" not in other
    anonymous = Client().get("/exams/midterm/")
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]


def test_shown_part_is_said_as_such_when_the_exam_waits_for_publishing(midterm):  # noqa: F811
    """The exam's results wait for the staff; one question of it shows when the attempt ends."""
    _, first, _, ended = _take(midterm, OnlineExam.AT_SUBMIT, exam=OnlineExam.PUBLISHED)
    assert "Score on the questions shown: 1 of 1 (results shown for 1 of 5 questions; " in ended
    assert "4 more shown when the staff publish them)" in ended
    assert "Your answer: " in ended and "Its results are shown when the staff publish them." in ended
    assert ended.count("The correct answer is") == 0 and "Your answer, " in _section(ended, first.position)


def test_one_question_published_on_its_own_and_withdrawn(midterm, lms):  # noqa: F811
    """An exam shown at the end but for one question the staff publish when ready: its student
    reads the rest, then all of it; the platform holds Pending with no score until then."""
    from service.lti.outbox import send_due

    key, student_id = midterm["key"], midterm["ids"][0]
    first = [q for q in variant(key, student_id).questions if q.kind == "choice"][0]
    name = question_name(key, first)
    _own(midterm, name, OnlineExam.PUBLISHED)
    client, sub = launched(midterm, lms)
    client.post("/exams/midterm/answer", {"position": first.position, "value": key.correct_letter(first)})
    client.post("/exams/midterm/submit")
    send_due()
    (before,) = [score for _, score in lms.scores if score["userId"] == sub]
    assert before["gradingProgress"] == "Pending" and "scoreGiven" not in before
    assert "1 more shown when the staff publish them" in html.unescape(client.get("/exams/midterm/").content.decode())

    staff = account(role=Member.TA)
    page = html.unescape(staff.get("/staff/online-exams/midterm/").content.decode())
    assert 'id="question-publishing"' in page and f"Publish {name}" in page
    assert send(staff, "/staff/online-exams/midterm/publish", action="publish", question="no-such").status_code == 404
    send(staff, "/staff/online-exams/midterm/publish", action="publish", question=name)
    row = ExamQuestionResults.objects.get(exam=midterm["exam"], question=name)
    assert row.published_at is not None and row.published_by
    shown = html.unescape(client.get("/exams/midterm/").content.decode())
    assert "Score: 1 of 5: 1 of 4 questions right" in shown and "Its results are" not in shown
    send_due()
    after = [score for _, score in lms.scores if score["userId"] == sub][-1]
    assert after["scoreGiven"] == 1 and after["gradingProgress"] == "PendingManual"  # the open one unmarked

    send(staff, "/staff/online-exams/midterm/publish", action="unpublish", question=name)
    assert "Score: " not in html.unescape(client.get("/exams/midterm/").content.decode())
    send_due()
    assert [score for _, score in lms.scores if score["userId"] == sub][-1]["gradingProgress"] == "Pending"


def test_the_instructor_sets_each_questions_results_and_no_one_else_may(midterm):  # noqa: F811
    key = midterm["key"]
    names = {question_name(key, q) for v in key.variants for q in v.questions}
    name = sorted(names)[0]
    instructor = account(role=Member.INSTRUCTOR)
    page = instructor.get("/staff/online-exams/midterm/").content.decode()
    assert 'id="question-results"' in page and all(f'name="results-{n}"' in page for n in names)
    answer = send(instructor, "/staff/online-exams/midterm/", action="question_results", **{f"results-{name}": "never"})
    assert answer.status_code == 302
    assert ExamQuestionResults.objects.get(exam=midterm["exam"], question=name).results == OnlineExam.NEVER
    # A value the menu does not offer is refused, with nothing saved.
    send(instructor, "/staff/online-exams/midterm/", action="question_results", **{f"results-{name}": "sometimes"})
    assert ExamQuestionResults.objects.get(exam=midterm["exam"], question=name).results == OnlineExam.NEVER
    # Back to the exam's setting: no row of its own left.
    send(instructor, "/staff/online-exams/midterm/", action="question_results", **{f"results-{name}": ""})
    assert not ExamQuestionResults.objects.filter(exam=midterm["exam"], question=name).exists()
    # A teaching assistant, a student and an anonymous visitor change nothing, and publish nothing.
    fields = {"action": "question_results", f"results-{name}": "during"}
    assert send(account(role=Member.TA), "/staff/online-exams/midterm/", **fields).status_code == 404
    student = account(midterm["ids"][2])
    assert send(student, "/staff/online-exams/midterm/", **fields).status_code == 404
    assert send(student, "/staff/online-exams/midterm/publish", action="publish", question=name).status_code == 404
    for url, data in (
        ("/staff/online-exams/midterm/", fields),
        ("/staff/online-exams/midterm/publish", {"action": "publish", "question": name}),
    ):
        refused = Client().post(url, data)
        assert refused.status_code == 302 and "/login" in refused["Location"]
    assert not ExamQuestionResults.objects.filter(exam=midterm["exam"]).exists()


def _shown_part(page: str) -> str:
    """The results a page shows of an ended attempt: its score line and its feedback."""
    found = re.search(r'<p id="score">.*?</div>', page, re.S)
    assert found, "no results shown"
    return found.group(0)


def test_the_staffs_look_at_a_students_feedback_is_what_the_student_reads_now(midterm):  # noqa: F811
    """The staff's link to each student's feedback "as they read it": the student's own page's results,
    not the grading's full file, with what is withheld from them, when it shows and by which setting."""
    from service.exams.sessions import grade_online

    client, first, _, _ = _take(midterm, OnlineExam.PUBLISHED)
    student_id, name = midterm["ids"][0], question_name(midterm["key"], first)
    grade_online("midterm", midterm["folder"])
    url = f"/staff/online-exams/midterm/results/feedback/{student_id}"
    staff = account(role=Member.TA)
    read = html.unescape(staff.get(url).content.decode())
    mine = html.unescape(client.get("/exams/midterm/").content.decode())
    assert _shown_part(read) == _shown_part(mine)
    assert "Its results are shown when the staff publish them." in _section(read, first.position)
    assert "is correct" not in _section(read, first.position)  # the grading's file says it is
    assert "is correct" in staff.get(url + ".md").content.decode()
    assert (
        f"Question {first.position} ({name}): its results are shown when the staff publish them, "
        "by its own results setting." in read
    )
    send(staff, "/staff/online-exams/midterm/publish", action="publish", question=name)
    read = html.unescape(staff.get(url).content.decode())
    assert 'id="withheld"' not in read and "Score: 1 of 5" in read and "is correct" in _section(read, first.position)
    assert _shown_part(read) == _shown_part(html.unescape(client.get("/exams/midterm/").content.decode()))
    assert account(midterm["ids"][1]).get(url).status_code == 404
    refused = Client().get(url)
    assert refused.status_code == 302 and "/login" in refused["Location"]
