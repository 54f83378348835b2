"""Lessons' check questions on the site (issue #52), through the real pages on Django's test client:
the course's lessons listed, a lesson's checks and its generated questions drawn for each student
(the same variant for a student every time, their own across students, the one drawing rule's),
each kind answered (multiple choice, numeric, short answer) and judged at once with its feedback (a
generated distractor's own naming the mistake), the last answer read again on return, the staff's
counts; and the refusals: anonymous visitors, unknown lessons and questions, a missing CSRF token,
an answer that is no answer, more answers a minute than the limit (eight at once included), another
student's answers, and student text escaped."""

from __future__ import annotations

import re
import threading
import uuid
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from course.generated import draw
from course.lesson_text import generated_text
from gradebook.models import Student
from service.accounts.models import Member
from service.lessons import answers
from service.lessons.models import LessonAnswer
from service.lessons.questions import lesson_or_404

BANK = "module-10-question-bank"
PAGE = f"/lessons/{BANK}/"
SCALE = f"{BANK}-scale-factor-known-mistake"  # generated multiple choice: a distractor is d_k, no sqrt
SOFTMAX = f"{BANK}-softmax-of-drawn-scores"  # generated numeric, its tolerance 0.0005
SHAPE = f"{BANK}-attention-output-shape"  # generated short answer

pytestmark = pytest.mark.timeout(120)


def member(student_id: str | None = None, role: str = Member.STUDENT) -> tuple[Client, str]:
    """A member of the course signed in on a client that enforces CSRF, and their student id."""
    name = student_id or f"l{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name)
    row = Student.objects.create(student_id=name, on_roster=True) if role == Member.STUDENT else None
    Member.objects.create(user=user, role=role, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client, name


def answer(client: Client, question: str, value: str, lesson: str = BANK):
    if "csrftoken" not in client.cookies:
        client.get("/lessons/")  # the CSRF cookie, as a browser has it from the page
    token = client.cookies["csrftoken"].value
    return client.post(f"/lessons/{lesson}/", {"question": question, "answer": value, "csrfmiddlewaretoken": token})


def section(page: str, key: str) -> str:
    """One question's part of the lesson page."""
    found = re.search(rf'<section class="question lesson-check" id="{re.escape(key)}".*?</section>', page, re.S)
    assert found, key
    return found.group(0)


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def variant_of(key: str, student_id: str):
    lesson = lesson_or_404(BANK)
    question = next(q for q in lesson.generated if f"{BANK}-{q.id}" == key)
    return draw(question, student_id)


def letter_of(page_section: str, option_text: str) -> str:
    """The letter the page shows an option under."""
    for letter, label in re.findall(r'value="([A-Z])"[^>]*> <strong>\1\.</strong>(.*?)</label>', page_section):
        if text(label) == option_text:
            return letter
    raise AssertionError(f"no option {option_text!r} in {text(page_section)}")


def test_a_student_answers_each_kind_and_reads_the_result_and_feedback_again_on_return():
    client, who = member()
    listing = client.get("/lessons/").content.decode()
    assert '<a class="nav-link" href="/lessons/">Lessons</a>' in listing
    assert f'href="{PAGE}"' in listing and "Module 10: Sequences and attention" in listing
    page = client.get(PAGE).content.decode()
    assert "count in no score" in page and page.count('class="question lesson-check"') == 19

    # A check as written: its right option, then a tempting one with its own feedback.
    check = section(page, f"{BANK}-check-1")
    lesson = lesson_or_404(BANK)
    shown = lesson.checks[0].displayed()
    right = "ABCD"[next(n for n, option in enumerate(shown) if option.correct)]
    wrong_n, wrong = next((n, option) for n, option in enumerate(shown) if option.tempting)
    assert answer(client, f"{BANK}-check-1", right)["Location"] == f"{PAGE}#{BANK}-check-1"
    assert "right Your last answer: " + right in text(section(client.get(PAGE).content.decode(), f"{BANK}-check-1"))
    answer(client, f"{BANK}-check-1", "ABCD"[wrong_n])
    check = text(section(client.get(PAGE).content.decode(), f"{BANK}-check-1"))
    assert f"not right Your last answer: {'ABCD'[wrong_n]}" in check and text(wrong.tempting.plain()) in check

    # Generated: the known mistake's distractor (d_k, the square root forgotten) names the mistake.
    scale = variant_of(SCALE, who)
    d_k = scale.values["d_k"]
    answer(client, SCALE, letter_of(section(page, SCALE), str(d_k)))
    said = text(section(client.get(PAGE).content.decode(), SCALE))
    assert "not right" in said and "the square root was forgotten" in said, said
    answer(client, SCALE, letter_of(section(page, SCALE), f"{scale.values['scale']:g}"))
    assert "right Your last answer" in text(section(client.get(PAGE).content.decode(), SCALE))

    # Numeric, within its tolerance (0.0005) and outside it; the feedback says the computation.
    softmax = variant_of(SOFTMAX, who)
    answer(client, SOFTMAX, f"{softmax.answer + 0.0004:.4f}")
    said = text(section(client.get(PAGE).content.decode(), SOFTMAX))
    assert "right Your last answer" in said and "not right" not in said
    assert f"{softmax.values['p']:.3f}" in said  # the question's feedback
    answer(client, SOFTMAX, f"{softmax.answer + 0.01:.3f}")
    assert "not right" in text(section(client.get(PAGE).content.decode(), SOFTMAX))

    # Short answer: spaces aside, the numbers as drawn.
    shape = variant_of(SHAPE, who)
    answer(client, SHAPE, str(shape.answer).replace(" ", ""))
    back = client.get(PAGE).content.decode()  # on return: the last answer, its result, the answer kept in the form
    said = section(back, SHAPE)
    assert "right Your last answer" in text(said) and f'value="{str(shape.answer).replace(" ", "")}"' in said
    assert re.search(r'value="[A-D]" checked', section(back, SCALE))
    # Every answer kept as given; none is a grade.
    assert LessonAnswer.objects.filter(student__student_id=who).count() == 7
    listing = text(client.get("/lessons/").content.decode())
    assert "4 answered, 2 right" in listing, listing  # right at the last answer: the short answer and the scale


def test_a_generated_question_is_the_same_for_a_student_every_time_and_their_own_across_students():
    """The page draws by the one rule (course.generated.draw, seeded by SHA-256 of the question, the
    student's id and the variant: what `course show --student` prints): the same variant on each
    visit and on any machine (pinned here), other numbers for another student."""
    ada, _ = member("lessons-ada")
    bo, _ = member("lessons-bo")
    seen = [text(section(client.get(PAGE).content.decode(), SCALE)) for client in (ada, ada, bo)]
    assert seen[0] == seen[1] and seen[0] != seen[2]
    assert "d k = 144" in seen[0] and "12" in seen[0]  # ada's d_k, drawn the same on every machine
    assert "d k = 64" in seen[2] and "8" in seen[2]
    assert variant_of(SCALE, "lessons-ada").values["d_k"] == 144
    # `course show --student` prints the page's variant: its right option under the same letter.
    lesson = lesson_or_404(BANK)
    number, question = next(
        (n, q) for n, q in enumerate(lesson.generated, len(lesson.checks) + 1) if f"{BANK}-{q.id}" == SCALE
    )
    printed = "\n".join(generated_text(question, "lessons-ada", number))
    assert re.search(rf"^ \* {letter_of(section(ada.get(PAGE).content.decode(), SCALE), '12')}\) 12$", printed, re.M), (
        printed
    )


def test_refusals_and_one_students_answers_are_theirs_alone():
    first, first_id = member()
    second, _ = member()
    # Anonymous: sent to sign in, for the list, the page and an answer.
    for response in (Client().get("/lessons/"), Client().get(PAGE), Client().post(PAGE, {"question": SHAPE})):
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert first.get("/lessons/no-such-lesson/").status_code == 404
    assert answer(first, "no-such-question", "A").status_code == 404
    no_token = first.post(PAGE, {"question": SHAPE, "answer": "(1, 2, 3)"})
    assert no_token.status_code == 403
    # No answer, or a letter not offered: the page again, the problem beside the field.
    empty = answer(first, SHAPE, "")
    assert empty.status_code == 400 and "write your answer first" in section(empty.content.decode(), SHAPE)
    assert answer(first, SCALE, "Z").status_code == 400
    assert answer(first, SHAPE, "x" * (answers.LONGEST + 1)).status_code == 400
    # A student's text is shown escaped, to them alone.
    answer(first, SHAPE, "<script>alert(1)</script>")
    mine = first.get(PAGE).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in mine and "<script>alert(1)" not in mine
    theirs = second.get(PAGE).content.decode()
    assert "alert(1)" not in theirs and "Your last answer" not in theirs
    assert "The class's last answers" not in theirs  # the staff's counts are the staff's
    assert LessonAnswer.objects.filter(student__student_id=first_id).count() == 1


def test_the_staff_see_how_the_class_answered_each_question():
    staff, _ = member(role=Member.TA)
    for value in ("(1, 2, 3)", "(4, 5, 6)"):
        client, who = member()
        answer(client, SHAPE, str(variant_of(SHAPE, who).answer) if value == "(1, 2, 3)" else value)
    answer(staff, SHAPE, "(0, 0, 0)")  # the staff's own try (their own variant) is not counted
    said = text(section(staff.get(PAGE).content.decode(), SHAPE))
    assert re.search(r"The class's last answers: \d+ right, \d+ not right", said)
    counts = answers.class_counts(BANK)[SHAPE]
    assert counts.right >= 1 and counts.wrong >= 1
    assert not LessonAnswer.objects.filter(
        question=SHAPE, student__student_id__startswith="staff:", right=True
    ).exists()


def test_answers_over_the_limit_are_refused_even_when_eight_arrive_at_once(monkeypatch):
    monkeypatch.setattr(answers, "PER_MINUTE", 3)
    client, who = member()
    cookies = client.cookies
    gate, statuses = threading.Barrier(8), [0] * 8

    def send(n: int) -> None:
        one = Client(enforce_csrf_checks=True)
        one.cookies = cookies
        gate.wait(timeout=30)
        try:
            statuses[n] = answer(one, SHAPE, f"({n}, 1, 1)").status_code
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [302] * 3 + [429] * 5, statuses
    assert LessonAnswer.objects.filter(student__student_id=who).count() == 3
    refused = answer(client, SHAPE, "(9, 9, 9)")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert "3 answers in a minute is the most the site takes: try again in" in text(refused.content.decode())
