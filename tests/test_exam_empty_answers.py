"""Empty answers of an exam's open questions (issue #40): an answer left blank online is never offered
one by one or counted to mark; the exams' list names them and its one button gives exactly those 0
with a comment, through the mark writer of every exam mark, and only the staff may press it. An
answer on a paper sheet has no text here: never empty."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from course.exams.grade import load_key
from gradebook.marking.empty_answers import NO_ANSWER, is_empty_exam_answer
from gradebook.models import ExamMark, Student
from service.accounts.models import Member
from service.exams.models import ExamAnswer, ExamAttempt

from .conftest import open_question_drawn
from .served import student

pytestmark = pytest.mark.timeout(120)
EXAMS = "/staff/exams/"


def test_the_rule_for_an_exam_answer_blank_when_typed_never_on_paper():
    assert is_empty_exam_answer("") and is_empty_exam_answer(" \n\t ")
    assert not is_empty_exam_answer("Softmax sums to one.") and not is_empty_exam_answer(None)


@pytest.fixture
def typed(exam):
    """Four students took the exam online and answered one open question: written, blank, not at
    all, written; the other students who drew it answered on paper. None marked."""
    key = load_key(exam)
    question, drew = open_question_drawn(key)
    assert len(drew) >= 5
    now = timezone.now()
    for (variant, placed), text in zip(
        drew, ["Softmax sums to one.", "  \n\t", None, "Weights are learned."], strict=False
    ):
        row, _ = Student.objects.get_or_create(
            student_id=variant.student.student_id, defaults={"name": variant.student.name}
        )
        attempt = ExamAttempt.objects.create(
            exam="midterm", student=row, started_at=now, ends_at=now, deadline_reason="time limit", ended_at=now
        )
        if text is not None:
            ExamAnswer.objects.create(attempt=attempt, position=placed.position, value=text, saved_at=now)
    return key, question, [variant.student.student_id for variant, _ in drew]


def _post(client: Client, url: str, **fields):
    client.get(EXAMS if client.session.get("_auth_user_id") else "/accounts/login/")  # the CSRF cookie
    return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def _section(page: str, question: str) -> str:
    """The exams' list's section of ``question``'s empty answers (the attempts left the other blank)."""
    found = re.search(rf'<section [^>]*"empty-midterm-{question}">.*?</section>', page, re.S)
    return found.group(0) if found else ""


def _counts(page: str, question: str) -> tuple[int, int, int]:
    """The exams' list's row for ``question``: answers, still to mark, empty."""
    row = re.search(
        rf"<td class=\"question\" data-question=\"{question}\">.*?</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>", page
    )
    assert row, page
    return int(row.group(1)), int(row.group(2)), int(row.group(3))


def test_empty_exam_answers_leave_the_queue_and_the_button_gives_exactly_them_0(typed):
    key, question, (written, blank, unanswered, other, *paper) = typed
    mark_url = f"{EXAMS}midterm/{question}/"
    ta_user, ta = student(Member.TA)
    answers = 4 + len(paper)

    # Not offered one by one: next skips the blank and the unanswered; the queue counts neither.
    page = ta.get(f"{mark_url}{written}/").content.decode()
    assert f'href="{mark_url}{other}/" id="next"' in page
    assert f"Answer 1 of {answers - 2} ({answers - 2} still to mark)" in page
    assert f'href="{mark_url}{written}/" id="previous"' in ta.get(f"{mark_url}{other}/").content.decode()
    saved = _post(ta, f"{mark_url}{written}/", score="0.5", comment="half", seen="", then="next")
    assert saved["Location"] == f"{mark_url}{other}/"  # Ctrl+Enter's save and next: past the empty ones
    assert ta.get(mark_url)["Location"] == f"{mark_url}{other}/"
    assert f"{mark_url}{paper[0]}/" in ta.get(f"{mark_url}{other}/").content.decode()  # a paper sheet's: offered

    # Listed on the exams' list, with links, and one button for them.
    index = ta.get(EXAMS).content.decode()
    assert _counts(index, question) == (answers, answers - 3, 2)
    index = _section(index, question)
    assert "2 answers are empty" in index and "Give the 2 empty answers 0" in index
    for empty in (blank, unanswered):
        assert f'href="{mark_url}{empty}/"' in index and f'name="answers" value="{empty}"' in index
    assert f'name="answers" value="{written}"' not in index and f'name="answers" value="{other}"' not in index

    # Nor grouped: the group page leaves them out, says so, and marks none of them through a group.
    groups = f"/staff/exam-groups/midterm/{question}/?threshold=0"
    assert "2 empty answers left out" in ta.get(groups).content.decode()
    _post(ta, groups, members=["2", "3"], seen=["2 ", "3 "], score="1", comment="group")

    # Refused: another student, a visitor not signed in, a post without the page's CSRF token.
    url = f"/staff/exam-empty/midterm/{question}/"
    _, outsider = student()
    assert _post(outsider, url, answers=[blank, unanswered]).status_code == 404
    assert Client().post(url, {"answers": [blank]})["Location"].startswith("/accounts/login/")
    assert ta.post(url, {"answers": [blank]}).status_code == 403
    assert set(ExamMark.objects.filter(exam=key.title).values_list("student__student_id", flat=True)) == {written}

    # The button: exactly the empty ones get 0 with the comment (written answers posted are left out).
    done = _post(ta, url, answers=[blank, unanswered, written, other])
    assert done["Location"] == EXAMS
    marks = {m.student.student_id: m for m in ExamMark.objects.filter(exam=key.title).select_related("student")}
    assert set(marks) == {written, blank, unanswered}
    assert (marks[written].score, marks[written].comment) == (0.5, "half")  # untouched
    for given in (marks[blank], marks[unanswered]):
        assert (given.score, given.comment, given.marked_by) == (0.0, NO_ANSWER, ta_user.username)
    after = ta.get(EXAMS).content.decode()
    assert f"{question}: 2 empty answers given 0" in after
    assert _counts(after, question) == (answers, answers - 3, 2)  # never counted to mark
    after = _section(after, question)
    assert f'name="answers" value="{blank}"' not in after and f'href="{mark_url}{blank}/"' in after

    # Each is still an answer of its own: opened from the list, and marked again by hand.
    single = ta.get(f"{mark_url}{blank}/").content.decode()
    assert "An empty answer, not in the queue" in single and 'Current mark: <strong id="current">0</strong>' in single
    _post(ta, f"{mark_url}{blank}/", score="1", comment="found it on the back", seen="", then="stay")
    assert ExamMark.objects.get(pk=marks[blank].pk).comment == "found it on the back"
