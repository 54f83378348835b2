"""Exams taken online (README "Exams"): the server's rules for an attempt (the window, the time
limit and the close on the server's clock, one attempt, saves refused after the end, the key never
sent before it, the attempt log, an access code, a room's networks, the staff's trial, accommodations),
grading through the paper path's own functions (a paper exam and an online one of the same folder
grade identically), the open questions on the staff's marking pages, and who may see what. Through
the real pages and endpoints with Django's test client (CSRF enforced); the browser's own walk is at
the end, with Playwright and Chromium."""

from __future__ import annotations

import csv
import html
import re
import sqlite3
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django.utils import timezone

from course.exams.build import build_exam
from course.exams.grade import grade_exam, load_key
from course.exams.pages import inline_html
from course.loaders.markdown import parse_inline
from gradebook.models import ExamExtension, ExamResult, Student
from service.accounts.models import Member
from service.core.access import course, state
from service.exams import marking as exam_marking
from service.exams import saves as exam_saves
from service.exams import sessions as exam_sessions
from service.exams.models import ExamAttempt, ExamLogEntry, OnlineExam
from service.marking import answers as hand_grading

from .conftest import LESSON_DATA

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def midterm(tmp_path, monkeypatch):
    """An exam of 4 check questions and 1 open question for three new students, listed by the
    course as "midterm" (a title of its own: the run's tests share one database), and open now."""
    tag = uuid.uuid4().hex[:8]
    ids = [f"e{tag}{n}" for n in range(3)]
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"{i},Student {i},\n" for i in ids), encoding="utf-8")
    folder = tmp_path / "exams" / "midterm"
    folder.parent.mkdir()
    build_exam(roster, folder, seed=7, questions=4, open_questions=1, lessons=[LESSON_DATA], title=f"Midterm {tag}")
    module = course().modules[0].model_copy(update={"exams": [str(folder)]})
    listed = course().model_copy(update={"modules": [module]})
    monkeypatch.setattr(exam_sessions, "course", lambda: listed)
    monkeypatch.setattr(exam_marking, "course", lambda: listed)
    monkeypatch.setattr(hand_grading, "course", lambda: listed)
    OnlineExam.objects.filter(name="midterm").delete()
    ExamAttempt.objects.filter(exam="midterm").delete()
    ExamExtension.objects.filter(exam="midterm").delete()
    now = timezone.now()
    exam = OnlineExam.objects.create(
        name="midterm",
        opens_at=now - timedelta(minutes=5),
        closes_at=now + timedelta(hours=2),
        minutes=30,
        results=OnlineExam.AT_SUBMIT,
    )
    yield {"folder": folder, "key": load_key(folder), "ids": ids, "exam": exam}
    OnlineExam.objects.filter(name="midterm").delete()
    ExamAttempt.objects.filter(exam="midterm").delete()


def account(student_id: str | None = None, role: str = Member.STUDENT) -> Client:
    name = student_id or f"u{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name)  # signed in by force_login: no password to hash (slow on purpose)
    row = None
    if role == Member.STUDENT:
        row, _ = Student.objects.get_or_create(student_id=name, defaults={"name": name, "on_roster": True})
    Member.objects.create(user=user, role=role, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def send(client: Client, url: str, address: str = "127.0.0.1", **fields):
    if "csrftoken" not in client.cookies:
        client.get("/assignments/")
    return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value}, REMOTE_ADDR=address)


def variant(key, student_id):
    return next(v for v in key.variants if v.student.student_id == student_id)


def wrong_letter(key, question):
    return next(letter for letter in question.letters if letter != key.correct_letter(question))


def secrets_of(key) -> list[str]:
    """What of the key must not reach a student before the end: every tempting option's explanation."""
    return [choice.tempting for q in key.questions.values() for choice in q.options if choice.tempting]


def _shows_math(key, student_id) -> bool:
    """Whether the student's feedback surely has TeX in it: every question's stem and right option are
    in it, whatever they answer. Variants are drawn by student id, which is new on every run."""
    texts = []
    for q in variant(key, student_id).questions:
        bank = key.questions[q.question]
        texts.append(bank.stem)
        if q.kind == "choice":
            right = q.letters[key.correct_letter(q)]
            texts += [choice.text for choice in bank.options if choice.option == right]
    return any("\\(" in text for text in texts)


def questions_of(page: str) -> list[str]:
    """The page's questions as shown, without their forms' token (masked anew for each answer)."""
    sections = re.findall(r'<section class="question".*?</section>', page, re.S)
    return [re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", section) for section in sections]


def test_a_student_starts_saves_resumes_on_another_device_submits_and_reads_the_feedback(midterm):
    key, ids = midterm["key"], midterm["ids"]
    student_id = next((i for i in ids if _shows_math(key, i)), ids[0])  # one whose feedback has math
    mine = variant(key, student_id)
    client = account(student_id)
    listing = client.get("/assignments/").content.decode()
    assert 'href="/exams/midterm/"' in listing and "not started" in listing
    page = client.get("/exams/midterm/").content.decode()
    assert "Start the exam" in page and "30 minutes" in page
    started = send(client, "/exams/midterm/")  # the start's answer is the exam's page
    assert started.status_code == 200 and questions_of(client.get("/exams/midterm/").content.decode()) == questions_of(
        started.content.decode()
    )
    page = started.content.decode()
    # Their own variant, in its order with its letters, math as MathML; nothing of the key.
    stems = [f"{q.position}. {inline_html(parse_inline(key.questions[q.question].stem))}" for q in mine.questions]
    assert all(stem in page for stem in stems)  # math as MathML: the printed page's own inline_html
    assert [page.index(stem) for stem in stems] == sorted(page.index(stem) for stem in stems)
    text = html.unescape(page)
    assert 'src="/static/service/exam.js"' in page and "<script>" not in page and "style=" not in page
    for secret in secrets_of(key):
        assert secret[:40] not in text
    assert "correct" not in page.lower().replace("incorrect", "")

    first, second, written = mine.questions[0], mine.questions[1], mine.questions[-1]
    assert written.kind == "open"
    saved = send(client, "/exams/midterm/answer", position=first.position, value=key.correct_letter(first))
    assert saved.status_code == 200 and saved.json()["saved"] == first.position and saved.json()["answered"] == 1
    assert set(saved.json()) == {"saved", "version", "answered", "seconds_left"}  # nothing of the key in the answer
    send(client, "/exams/midterm/answer", position=second.position, value=wrong_letter(key, second))
    send(client, "/exams/midterm/answer", position=written.position, value="Attention is $O(n^2)$ in memory.")
    # A second device (another session of the same account) finds every answer, on the server's clock.
    other = Client(enforce_csrf_checks=True)
    other.force_login(User.objects.get(username=student_id))
    state_now = other.get("/exams/midterm/state").json()
    assert state_now["answers"] == {
        str(first.position): key.correct_letter(first),
        str(second.position): wrong_letter(key, second),
        str(written.position): "Attention is $O(n^2)$ in memory.",
    }
    assert 0 < state_now["seconds_left"] <= 30 * 60 and not state_now["ended"]
    resumed = other.get("/exams/midterm/").content.decode()
    assert f'value="{key.correct_letter(first)}" checked' in resumed and "Attention is $O(n^2)$ in memory." in resumed

    assert send(other, "/exams/midterm/submit").status_code == 302
    result = client.get("/exams/midterm/").content.decode()
    assert "Your attempt ended at" in result and "(submitted)" in result
    # The score, stated once: the right answers and the open question waiting for its mark.
    summary = "Score: 1 of 5: 1 of 4 questions right; 1 open question graded by hand, not marked yet."
    assert summary in result and result.count("Score:") == 1, result
    # Math is MathML, as the taking page shows it: no TeX with its delimiters lost.
    assert "\\(" not in result and "\\top" not in result
    assert "<math" in result or not _shows_math(key, student_id)
    # The feedback is the paper path's: why the wrong option tempts, and the right one.
    bank = key.questions[second.question]
    tempting = next(c.tempting for c in bank.options if c.option == second.letters[wrong_letter(key, second)])
    # Its math is MathML on the page: the longest stretch of plain words is what the page shows as written.
    words = max(re.split(r"\\\(.*?\\\)", tempting), key=len).strip()[:40]
    assert words and words in html.unescape(result)
    assert f"The correct answer is <strong>{key.correct_letter(second)}</strong>" in result
    # An answer after the end is refused and says why; nothing changes.
    late = send(client, "/exams/midterm/answer", position=first.position, value=wrong_letter(key, first))
    assert (
        late.status_code == 409
        and "the exam ended at" in late.json()["error"]
        and "(submitted)" in late.json()["error"]
    )
    assert client.get("/exams/midterm/state").json()["answers"][str(first.position)] == key.correct_letter(first)
    # The gradebook has the result, as `course exam grade --gradebook` records it (by the exam's title).
    recorded = ExamResult.objects.get(exam=key.title, student__student_id=student_id)
    assert (recorded.score, recorded.max_score) == (1, 5)
    # Every start, save, refusal and end is logged with the address it came from.
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=student_id)
    actions = list(ExamLogEntry.objects.filter(attempt=attempt).values_list("action", "address"))
    assert [a for a, _ in actions] == ["start", "save", "save", "save", "end", "refused"]
    assert all(address == "127.0.0.1" for _, address in actions)


def test_once_an_open_answer_is_marked_every_face_says_the_same_score(midterm):
    """The staff's attempts table, the student's page and scores.csv give one score (check questions
    right plus the open questions' marks, of all the points), from one function: never the staff's
    table the check questions alone."""
    import csv

    from service.core.access import state
    from service.exams.sessions import folders, grade_online

    key, ids = midterm["key"], midterm["ids"]
    student_id = ids[0]
    mine = variant(key, student_id)
    client = account(student_id)
    send(client, "/exams/midterm/")
    first, written = mine.questions[0], next(q for q in mine.questions if q.kind == "open")
    send(client, "/exams/midterm/answer", position=first.position, value=key.correct_letter(first))
    send(client, "/exams/midterm/answer", position=written.position, value="Softmax saturates.")
    send(client, "/exams/midterm/submit")
    staff = account(role=Member.INSTRUCTOR)
    marked = send(staff, f"/staff/exams/midterm/{written.question}/{student_id}/", score="1", comment="Right.")
    assert marked.status_code == 302
    said = "2 of 5"
    assert f"Score: {said}:" in client.get("/exams/midterm/").content.decode()
    page = staff.get("/staff/online-exams/midterm/").content.decode()
    row = re.search(rf"<tr><td>{student_id}</td>.*?</tr>", page, re.S)
    assert row is not None and f"<td>{said}</td>" in row.group(0)
    grade_online("midterm", folders()["midterm"])
    with (state() / "exams" / "midterm" / "results" / "scores.csv").open(encoding="utf-8") as handle:
        (line,) = [line for line in csv.DictReader(handle) if line["student_id"] == student_id]
    assert f"{line['score']} of {line['max_score']}" == said


def test_the_time_limit_and_the_close_end_an_attempt_on_the_servers_clock(midterm):
    key, (first_id, second_id, _) = midterm["key"], midterm["ids"]
    client = account(first_id)
    send(client, "/exams/midterm/")
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=first_id)
    assert attempt.deadline_reason == "time limit"
    assert timedelta(minutes=29) < attempt.ends_at - attempt.started_at <= timedelta(minutes=30)
    question = variant(key, first_id).questions[0]
    assert send(client, "/exams/midterm/answer", position=question.position, value="A").status_code == 200
    # Time passes (the deadline is moved, not waited for): the next save is refused, and says why.
    ExamAttempt.objects.filter(pk=attempt.pk).update(ends_at=timezone.now() - timedelta(seconds=1))
    refused = send(client, "/exams/midterm/answer", position=question.position, value="B")
    assert refused.status_code == 409 and "(time limit); this answer was not saved" in refused.json()["error"]
    attempt.refresh_from_db()
    assert attempt.ended_reason == "time limit" and attempt.ended_at == attempt.ends_at
    assert client.get("/exams/midterm/state").json()["answers"] == {str(question.position): "A"}
    assert "Score:" in client.get("/exams/midterm/").content.decode()

    # An exam that closes before the time limit is up ends at the close.
    OnlineExam.objects.filter(name="midterm").update(closes_at=timezone.now() + timedelta(minutes=10))
    other = account(second_id)
    send(other, "/exams/midterm/")
    late_start = ExamAttempt.objects.get(exam="midterm", student__student_id=second_id)
    assert (
        late_start.deadline_reason == "exam closed"
        and late_start.ends_at == OnlineExam.objects.get(name="midterm").closes_at
    )


def test_the_window_lists_and_refuses(midterm):
    student_id = midterm["ids"][0]
    client = account(student_id)
    OnlineExam.objects.filter(name="midterm").update(
        opens_at=timezone.now() + timedelta(hours=1), closes_at=timezone.now() + timedelta(hours=2)
    )
    assert 'href="/exams/midterm/"' not in client.get("/assignments/").content.decode()
    send(client, "/exams/midterm/")
    assert "the exam opens at" in client.get("/exams/midterm/").content.decode()
    OnlineExam.objects.filter(name="midterm").update(
        opens_at=timezone.now() - timedelta(hours=2), closes_at=timezone.now() - timedelta(hours=1)
    )
    send(client, "/exams/midterm/")
    assert "the exam closed at" in client.get("/exams/midterm/").content.decode()
    assert not ExamAttempt.objects.filter(exam="midterm").exists()
    # A student who is not on the exam's roster has no variant: told so, and offered no Start; refused, said why.
    stranger = account()
    OnlineExam.objects.filter(name="midterm").update(closes_at=timezone.now() + timedelta(hours=1))
    page = stranger.get("/exams/midterm/").content.decode()
    assert 'id="no-variant"' in page and 'id="start"' not in page and "Start the exam" not in page
    assert 'id="start"' in client.get("/exams/midterm/").content.decode()  # one on the roster is offered it
    send(stranger, "/exams/midterm/")
    assert "you have no variant of this exam" in stranger.get("/exams/midterm/").content.decode()
    # An exam not set up online, or not listed, is no page.
    assert client.get("/exams/final/").status_code == 404


def test_one_attempt_unless_the_staff_grant_another_and_accommodations_give_time(midterm):
    first_id, second_id, _ = midterm["ids"]
    client = account(first_id)
    send(client, "/exams/midterm/")
    send(client, "/exams/midterm/submit")
    send(client, "/exams/midterm/")
    assert "you have taken this exam already" in client.get("/exams/midterm/").content.decode()
    assert ExamAttempt.objects.filter(exam="midterm", student__student_id=first_id).count() == 1

    instructor = account(role=Member.INSTRUCTOR)
    granted = send(
        instructor, "/staff/online-exams/midterm/", action="accommodation", student_id=first_id, attempts="2"
    )
    assert granted.status_code == 302
    send(client, "/exams/midterm/")
    assert ExamAttempt.objects.filter(exam="midterm", student__student_id=first_id).count() == 2

    # More time, and a later close: the accommodated student may start after everyone's close.
    other = account(second_id)
    later = (timezone.now() + timedelta(hours=5)).strftime("%Y-%m-%d %H:%M:%S")
    send(
        instructor,
        "/staff/online-exams/midterm/",
        action="accommodation",
        student_id=second_id,
        extra_minutes="15",
        closes_at=later,
    )
    OnlineExam.objects.filter(name="midterm").update(closes_at=timezone.now() - timedelta(minutes=1))
    assert 'href="/exams/midterm/"' in other.get("/assignments/").content.decode()
    send(other, "/exams/midterm/")
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=second_id)
    assert timedelta(minutes=44) < attempt.ends_at - attempt.started_at <= timedelta(minutes=45)
    page = instructor.get("/staff/online-exams/midterm/").content.decode()
    assert f"<td>{second_id}</td><td>15</td>" in page
    # A TA reads the page but changes nothing; a bad student id is named.
    ta = account(role=Member.TA)
    assert ta.get("/staff/online-exams/midterm/").status_code == 200
    assert (
        send(ta, "/staff/online-exams/midterm/", action="accommodation", student_id=first_id, attempts="9").status_code
        == 404
    )
    nobody = send(instructor, "/staff/online-exams/midterm/", action="accommodation", student_id="nobody", attempts="2")
    nothing = send(instructor, "/staff/online-exams/midterm/", action="accommodation", student_id=first_id)
    assert "midterm: give more minutes, a later close or more attempts" in nothing.content.decode()
    assert nobody.status_code == 200 and "nobody: no such student in the gradebook" in nobody.content.decode()


def test_an_access_code_and_the_rooms_networks(midterm):
    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(access_code="tulip-42", networks="10.20.0.0/16\n192.0.2.7/32")
    client = account(student_id)
    assert 'name="code"' in client.get("/exams/midterm/").content.decode()
    send(client, "/exams/midterm/", address="10.20.3.4", code="rose")
    assert "wrong access code" in client.get("/exams/midterm/").content.decode()
    send(client, "/exams/midterm/", address="203.0.113.9", code="tulip-42")
    assert "from the exam room&#x27;s network only" in client.get("/exams/midterm/").content.decode()
    assert not ExamAttempt.objects.filter(exam="midterm").exists()
    send(client, "/exams/midterm/", address="10.20.3.4", code="tulip-42")
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=student_id)
    question = variant(key, student_id).questions[0]
    outside = send(client, "/exams/midterm/answer", address="203.0.113.9", position=question.position, value="A")
    assert outside.status_code == 409 and "network only" in outside.json()["error"]
    assert (
        send(client, "/exams/midterm/answer", address="192.0.2.7", position=question.position, value="A").status_code
        == 200
    )
    send(client, "/exams/midterm/submit", address="203.0.113.9")
    assert ExamAttempt.objects.get(pk=attempt.pk).ended_at is None  # not submitted from outside the room
    send(client, "/exams/midterm/submit", address="10.20.3.4")
    log = list(ExamLogEntry.objects.filter(attempt=attempt).values_list("action", "address"))
    assert log == [
        ("start", "10.20.3.4"),
        ("refused", "203.0.113.9"),
        ("save", "192.0.2.7"),
        ("refused", "203.0.113.9"),
        ("end", "10.20.3.4"),
    ]


def test_the_staff_try_it_early_and_their_trial_is_never_counted(midterm):
    key = midterm["key"]
    OnlineExam.objects.filter(name="midterm").update(
        opens_at=timezone.now() + timedelta(days=1), closes_at=timezone.now() + timedelta(days=2)
    )
    ta = account(role=Member.TA)
    send(ta, "/exams/midterm/")
    assert not ExamAttempt.objects.filter(exam="midterm").exists()  # not on trial: closed to the staff too
    instructor = account(role=Member.INSTRUCTOR)
    exam = OnlineExam.objects.get(name="midterm")
    form = {
        "opens_at": f"{exam.opens_at:%Y-%m-%d %H:%M:%S}",
        "closes_at": f"{exam.closes_at:%Y-%m-%d %H:%M:%S}",
        "minutes": "30",
        "results": "at_submit",
        "access_code": "",
        "networks": "",
        "trial": "on",
    }
    assert send(instructor, "/staff/online-exams/midterm/", action="settings", **form).status_code == 302
    assert OnlineExam.objects.get(name="midterm").trial
    send(ta, "/exams/midterm/")
    attempt = ExamAttempt.objects.get(exam="midterm")
    assert attempt.trial and attempt.student.student_id.startswith("staff:")
    question = exam_sessions.variant_for(key, attempt.student).questions[0]
    assert (
        send(ta, "/exams/midterm/answer", position=question.position, value=key.correct_letter(question)).status_code
        == 200
    )
    send(ta, "/exams/midterm/submit")
    page = ta.get("/exams/midterm/").content.decode()
    assert "a trial run, never counted" in page and "Score: 1 of" in page
    send(ta, "/exams/midterm/")  # the staff may run another trial
    assert ExamAttempt.objects.filter(exam="midterm", trial=True).count() == 2
    assert not ExamResult.objects.filter(exam=key.title).exists()
    graded = exam_sessions.grade_online("midterm", midterm["folder"])
    assert graded.graded == 0
    # Students still wait for the window.
    client = account(midterm["ids"][0])
    send(client, "/exams/midterm/")
    assert "the exam opens at" in client.get("/exams/midterm/").content.decode()


def test_the_settings_form_says_what_is_wrong(midterm):
    instructor = account(role=Member.INSTRUCTOR)
    form = {
        "opens_at": "2026-12-08 10:00",
        "closes_at": "2026-12-08 09:00",
        "minutes": "0",
        "results": "at_submit",
        "networks": "10.0.0.0/33",
    }
    page = send(instructor, "/staff/online-exams/midterm/", action="settings", **form).content.decode()
    assert "the exam closes after it opens" in page and "more than 0 minutes" in page
    assert "&#x27;10.0.0.0/33&#x27; is not a network range" in page
    assert OnlineExam.objects.get(name="midterm").minutes == 30  # unchanged
    # Each refused field says so beside it, and a summary above links to each (issue #49).
    assert re.search(r'id="id_minutes-error">[^<]*more than 0 minutes', page) and 'href="#id_networks"' in page
    # The results menu is a menu, not a text box; grading is explained in words, not by a command line.
    assert re.search(r'<select name="results" class="form-select"', page)
    assert "course exam grade" not in page.split('id="grade"')[1] and 'id="grade-help"' in page


def test_results_after_the_close_or_never_and_the_key_stays_hidden_until_then(midterm):
    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(results=OnlineExam.AFTER_CLOSE)
    client = account(student_id)
    send(client, "/exams/midterm/")
    question = variant(key, student_id).questions[0]
    send(client, "/exams/midterm/answer", position=question.position, value=wrong_letter(key, question))
    send(client, "/exams/midterm/submit")
    page = html.unescape(client.get("/exams/midterm/").content.decode())
    assert "Your results are shown here after the exam closes" in page and "Score:" not in page
    assert not any(secret[:40] in page for secret in secrets_of(key))
    assert "correct" not in str(client.get("/exams/midterm/state").json())
    # One classmate may finish later (their own close): no one reads the key before then.
    later = account(midterm["ids"][1])
    ExamExtension.objects.create(
        exam="midterm",
        student=Student.objects.get(student_id=midterm["ids"][1]),
        until=timezone.now() + timedelta(hours=3),
        granted_at=timezone.now(),
    )
    OnlineExam.objects.filter(name="midterm").update(closes_at=timezone.now() - timedelta(seconds=1))
    assert "Your results are shown here after the exam closes" in client.get("/exams/midterm/").content.decode()
    assert 'href="/exams/midterm/"' in later.get("/assignments/").content.decode()  # still open to them
    ExamExtension.objects.filter(exam="midterm").update(until=timezone.now() - timedelta(seconds=1))
    assert "The correct answer is" in client.get("/exams/midterm/").content.decode()
    OnlineExam.objects.filter(name="midterm").update(results=OnlineExam.NEVER)
    assert "Your results are not shown here: the staff tell you them." in client.get("/exams/midterm/").content.decode()


def test_one_question_at_a_time_and_a_save_without_the_script(midterm):
    key, student_id = midterm["key"], midterm["ids"][0]
    OnlineExam.objects.filter(name="midterm").update(one_at_a_time=True)
    client = account(student_id)
    send(client, "/exams/midterm/")
    questions = variant(key, student_id).questions
    page = client.get("/exams/midterm/?q=2").content.decode()
    assert page.count('class="question"') == 1 and 'id="q2"' in page
    # Submit is on the last question only, not under question 1 or 2.
    assert 'id="submit"' not in page and 'id="submit"' not in client.get("/exams/midterm/?q=1").content.decode()
    assert 'id="submit"' in client.get(f"/exams/midterm/?q={len(questions)}").content.decode()
    saved = send(client, "/exams/midterm/answer", position=2, value=questions[1].letters and "B", page="1", q="2")
    assert saved.status_code == 302 and saved["Location"] == "/exams/midterm/?q=2"
    page = client.get(saved["Location"]).content.decode()
    assert "question 2: saved" in page and 'value="B" checked' in page and ">2 ✓<" in page
    refused = send(client, "/exams/midterm/answer", position=2, value="Z", page="1")
    assert "&#x27;Z&#x27; is not an answer to question 2" in client.get(refused["Location"]).content.decode()
    for hostile in ("//evil.example/", "2&x=1", "-1", "9" * 40):  # a question number only, else the page itself
        back = send(client, "/exams/midterm/answer", position=2, value="B", page="1", q=hostile)
        assert back.status_code == 302 and back["Location"] == "/exams/midterm/", hostile
    assert send(client, "/exams/midterm/answer", position=99, value="A").status_code == 409
    assert send(client, "/exams/midterm/answer", position="two", value="A").status_code == 400


def test_an_exam_open_in_two_tabs_never_overwrites_an_answer_unseen(midterm):
    """Issue #49: each save carries the version its page read; a save from a page another tab
    overtook is refused with the newer answer (nothing overwritten), and the page that sent it keeps
    its text (its script shows both; without it, the message says what was sent)."""
    key, student_id = midterm["key"], midterm["ids"][0]
    client = account(student_id)
    send(client, "/exams/midterm/")
    written = variant(key, student_id).questions[-1].position
    page = client.get("/exams/midterm/").content.decode()  # both tabs read the page: no answer yet
    assert f'name="position" value="{written}"><input type="hidden" name="version" value="v:">' in page
    first = send(client, "/exams/midterm/answer", position=written, value="From the second tab.", version="v:")
    assert first.status_code == 200 and first.json()["version"]
    stale = send(client, "/exams/midterm/answer", position=written, value="From the first tab.", version="v:")
    assert stale.status_code == 409 and stale.json()["stale"] is True
    assert stale.json()["value"] == "From the second tab." and stale.json()["version"] == first.json()["version"]
    assert "changed in another tab or on another device" in stale.json()["error"]
    state = client.get("/exams/midterm/state").json()
    assert state["answers"][str(written)] == "From the second tab."  # not overwritten
    assert state["versions"][str(written)] == first.json()["version"]
    # The first tab chooses its own text, now knowing the newer version: saved.
    chosen = send(
        client,
        "/exams/midterm/answer",
        position=written,
        value="From the first tab.",
        version=f"v:{stale.json()['version']}",
    )
    assert (
        chosen.status_code == 200
        and client.get("/exams/midterm/state").json()["answers"][str(written)] == "From the first tab."
    )
    # Without the script: the page again, saying so, with what was sent (never dropped).
    refused = send(
        client, "/exams/midterm/answer", position=written, value="Typed without a script.", version="v:", page="1"
    )
    shown = html.unescape(client.get(refused["Location"]).content.decode())
    assert (
        "changed in another tab or on another device" in shown
        and "What you sent, not saved: Typed without a script." in shown
    )
    # A save that sends no version (a script of its own) is not compared: the last save wins.
    assert send(client, "/exams/midterm/answer", position=written, value="No version.").status_code == 200
    log = " ".join(
        ExamLogEntry.objects.filter(attempt__student__student_id=student_id).values_list("detail", flat=True)
    )
    assert "was changed in another tab" in log  # the refusals are in the attempt's log


def test_no_one_else_reads_or_saves_into_an_attempt(midterm):
    key, (first_id, second_id, _) = midterm["key"], midterm["ids"]
    first = account(first_id)
    send(first, "/exams/midterm/")
    question = variant(key, first_id).questions[0]
    send(first, "/exams/midterm/answer", position=question.position, value="C")
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=first_id)
    second = account(second_id)
    # The second student's addresses are their own attempt's: there is none yet, and nothing of the first's.
    assert second.get("/exams/midterm/state").status_code == 404
    assert send(second, "/exams/midterm/answer", position=question.position, value="A").status_code == 409
    assert send(second, "/exams/midterm/submit").status_code == 302
    assert first.get("/exams/midterm/state").json()["answers"] == {str(question.position): "C"}
    assert ExamAttempt.objects.get(pk=attempt.pk).ended_at is None
    # The staff's pages of attempts and logs: refused to students (404) and to anyone signed out.
    for url in ("/staff/online-exams/midterm/", f"/staff/online-exams/midterm/attempts/{attempt.pk}/"):
        assert first.get(url).status_code == 404 and second.get(url).status_code == 404
        assert Client().get(url).status_code == 302
    anonymous = Client()
    for url in ("/exams/midterm/", "/exams/midterm/state"):
        assert anonymous.get(url).status_code == 302 and "/accounts/login/" in anonymous.get(url)["Location"]
    assert Client().post("/exams/midterm/answer", {"position": 1, "value": "A"}).status_code == 302
    assert Client(enforce_csrf_checks=True).post("/exams/midterm/answer", {"position": 1}).status_code == 403
    # Without the CSRF token, even the owner's save is refused.
    assert first.post("/exams/midterm/answer", {"position": question.position, "value": "D"}).status_code == 403
    assert first.get("/exams/midterm/state").json()["answers"] == {str(question.position): "C"}
    ta = account(role=Member.TA)
    log = ta.get(f"/staff/online-exams/midterm/attempts/{attempt.pk}/").content.decode()
    assert "<td>start</td><td>127.0.0.1</td>" in log and f"q{question.position}: C" in log
    assert ta.get("/staff/online-exams/midterm/attempts/999999999/").status_code == 404


def _at_once(work: list) -> list:
    """Each call in its own thread, released together; their results in order."""
    gate, results = threading.Barrier(len(work)), [None] * len(work)

    def run(n: int) -> None:
        gate.wait(timeout=30)
        try:
            results[n] = work[n]()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a request never answered"
    return results


def test_saves_racing_the_submit_are_either_kept_and_graded_or_refused(midterm):
    """Every save answered "saved" is in the graded attempt; every refused one is not: a save never
    lands after its attempt's end, even when both arrive at the same moment (exam_saves.py)."""
    key, student_id = midterm["key"], midterm["ids"][0]
    client = account(student_id)
    ExamExtension.objects.create(
        exam="midterm", student=Student.objects.get(student_id=student_id), attempts=6, granted_at=timezone.now()
    )
    questions = [q for q in variant(key, student_id).questions if q.kind == "choice"]
    seen = {"kept": 0, "refused": 0}
    for _ in range(5):
        send(client, "/exams/midterm/")
        attempt = ExamAttempt.objects.filter(exam="midterm", student__student_id=student_id).latest("number")
        token = client.cookies["csrftoken"].value
        saves = [
            lambda q=q, t=token: client.post(
                "/exams/midterm/answer",
                {"position": q.position, "value": key.correct_letter(q), "csrfmiddlewaretoken": t},
            )
            for q in questions
        ]

        def ended(t: str = token):
            return client.post("/exams/midterm/submit", {"csrfmiddlewaretoken": t})

        answers = _at_once([*saves, ended])
        attempt.refresh_from_db()
        assert attempt.ended_at is not None and answers[-1].status_code == 302
        kept = dict(attempt.answers.values_list("position", "value"))
        for question, answer in zip(questions, answers, strict=False):
            if answer.status_code == 200:
                assert kept.get(question.position) == key.correct_letter(question)
                seen["kept"] += 1
            else:
                assert answer.status_code == 409 and "ended" in answer.json()["error"]
                assert question.position not in kept
                seen["refused"] += 1
        assert attempt.correct == len(kept)  # graded with exactly the answers kept
    assert seen["kept"] + seen["refused"] == 5 * len(questions)


def test_saves_that_arrive_together_share_one_commit(midterm, monkeypatch):
    """While the database is busy, the saves waiting are written together: one commit, each acknowledged."""
    key, ids = midterm["key"], midterm["ids"]
    clients = {student_id: account(student_id) for student_id in ids}
    for client in clients.values():
        send(client, "/exams/midterm/")
    batches: list[int] = []
    write = exam_saves._write_together
    monkeypatch.setattr(exam_saves, "_write_together", lambda batch: (batches.append(len(batch)), write(batch))[1])
    jobs = []
    for student_id in ids:  # a client of its own for each request (a test client serves one at a time)
        for question in variant(key, student_id).questions:
            own = Client(enforce_csrf_checks=True)
            own.force_login(User.objects.get(username=student_id))
            own.get("/assignments/")
            jobs.append(
                lambda c=own, q=question: c.post(
                    "/exams/midterm/answer",
                    {
                        "position": q.position,
                        "value": "a typed answer" if q.kind == "open" else "B",
                        "csrfmiddlewaretoken": c.cookies["csrftoken"].value,
                    },
                )
            )
    busy = sqlite3.connect(settings.DATABASES["default"]["NAME"], timeout=30)
    busy.execute("BEGIN IMMEDIATE")  # another writer holds the database: the saves wait in line
    try:
        waiting = threading.Thread(target=lambda: answers.extend(_at_once(jobs)))
        answers: list = []
        waiting.start()
        deadline = time.monotonic() + 20  # well inside the writer's wait for the lock (30 s)
        while sum(batches) + exam_saves._waiting.qsize() < len(jobs) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(batches) + exam_saves._waiting.qsize() == len(jobs), "the saves never all reached the writer"
    finally:
        busy.rollback()
        busy.close()
    waiting.join(timeout=120)
    assert [answer.status_code for answer in answers] == [200] * len(jobs)
    # The writer took what had come when it woke, and waited on the lock; then the rest, together.
    assert sum(batches) == len(jobs) and len(batches) <= 2
    for student_id in ids:
        assert len(clients[student_id].get("/exams/midterm/state").json()["answers"]) == len(
            variant(key, student_id).questions
        )


def test_the_writer_outlives_a_failure_and_says_so(midterm, monkeypatch):
    key, student_id = midterm["key"], midterm["ids"][0]
    client = account(student_id)
    send(client, "/exams/midterm/")
    question = variant(key, student_id).questions[0]
    write = exam_saves._write_together
    failures = iter([RuntimeError("the disk is gone")])

    def once_broken(batch):
        for failure in failures:
            raise failure
        return write(batch)

    monkeypatch.setattr(exam_saves, "_write_together", once_broken)
    broken = send(client, "/exams/midterm/answer", position=question.position, value="A")
    assert broken.status_code == 409 and "could not save this answer" in broken.json()["error"]
    assert send(client, "/exams/midterm/answer", position=question.position, value="B").json()["saved"]
    assert client.get("/exams/midterm/state").json()["answers"] == {str(question.position): "B"}


def test_a_paper_exam_and_an_online_exam_of_the_same_folder_grade_identically(midterm, tmp_path):
    key, folder, ids = midterm["key"], midterm["folder"], midterm["ids"]
    rows = []
    for n, student_id in enumerate(ids):
        client = account(student_id)
        send(client, "/exams/midterm/")
        mine = variant(key, student_id)
        row = {"student_id": student_id}
        for question in mine.questions:
            letter = ""
            if question.kind == "choice" and (question.position + n) % 3:
                letter = (
                    key.correct_letter(question) if (question.position * (n + 1)) % 2 else wrong_letter(key, question)
                )
                send(client, "/exams/midterm/answer", position=question.position, value=letter.lower())
            elif question.kind == "open":
                send(client, "/exams/midterm/answer", position=question.position, value=f"My answer, {student_id}")
            row[f"q{question.position}"] = letter
        rows.append(row)
        if n < 2:
            send(client, "/exams/midterm/submit")
        else:  # the third runs out of time: graded all the same
            ExamAttempt.objects.filter(exam="midterm", student__student_id=student_id).update(
                ends_at=timezone.now() - timedelta(seconds=1)
            )

    # One open question marked on the staff's existing marking page, which shows the typed answer.
    written = next(q for q in variant(key, ids[0]).questions if q.kind == "open")
    ta = account(role=Member.TA)
    mark_url = f"/staff/exams/midterm/{written.question}/{ids[0]}/"
    marking = ta.get(mark_url).content.decode()
    assert f"My answer, {ids[0]}" in marking and "Typed in the online exam" in marking
    assert send(ta, mark_url, score="0.5", comment="half", seen="", then="stay").status_code == 302

    instructor = account(role=Member.INSTRUCTOR)
    assert send(instructor, "/staff/online-exams/midterm/", action="grade").status_code == 302
    # A job for a worker (service/exams/grading.py), not the request's work: queued, not done.
    from service.exams.models import ExamGrading

    assert ExamGrading.objects.filter(exam="midterm").latest("id").state == ExamGrading.QUEUED
    assert "Queued for a worker" in instructor.get("/staff/online-exams/midterm/").content.decode()
    from service.exams.grading import grade_queued_exam

    assert grade_queued_exam("test-worker") and not grade_queued_exam("test-worker")  # done once
    assert "Graded 3 attempts into the gradebook" in instructor.get("/staff/online-exams/midterm/").content.decode()
    online = state() / "exams" / "midterm" / "results"
    # The page links to the scores, the item analysis and each student's feedback, never a server path.
    staff_page = instructor.get("/staff/online-exams/midterm/").content.decode()
    assert str(online) not in staff_page and 'id="results"' in staff_page
    results = "/staff/online-exams/midterm/results/"
    for file in ("scores.csv", "items.csv", "items.png", f"feedback/{ids[0]}"):
        assert f'href="{results}{file}"' in staff_page, file
    scores_csv = instructor.get(results + "scores.csv")
    assert scores_csv["Content-Type"] == "text/csv" and scores_csv.content == (online / "scores.csv").read_bytes()
    # A student's feedback: the page they read (its math as MathML), and its Markdown file beside it.
    read = instructor.get(f"{results}feedback/{ids[0]}")
    assert (
        read["Content-Type"].startswith("text/html")
        and f'href="{results}feedback/{ids[0]}.md"' in read.content.decode()
    )
    assert 'id="feedback"' in read.content.decode() and "\\(" not in read.content.decode()
    assert (
        instructor.get(f"{results}feedback/{ids[0]}.md").content == (online / "feedback" / f"{ids[0]}.md").read_bytes()
    )
    for refused in ("responses.csv", "feedback/../scores.csv", "../responses.csv", "feedback/nobody"):
        assert instructor.get(results + refused).status_code == 404, refused
    # Grades: another student and an anonymous visitor get none of them.
    assert account_client(ids[1]).get(results + "scores.csv").status_code == 404
    assert account_client(ids[1]).get(f"{results}feedback/{ids[0]}").status_code == 404
    assert account_client(ids[1]).get(f"{results}feedback/{ids[0]}.md").status_code == 404
    assert Client().get(results + "scores.csv").status_code == 302

    paper = tmp_path / "paper.csv"
    with paper.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["student_id", *(f"q{n}" for n in range(1, 6))])
        writer.writeheader()
        writer.writerows(rows)
    from course.exams.grade import OpenMark
    from gradebook.exams import _marks_given  # the marks the paper path counts: the same records
    from service.core.access import book

    marks = {given: OpenMark(score=m.score, comment=m.comment) for given, m in _marks_given(book(), key).items()}
    graded = grade_exam(folder, paper, tmp_path / "paper-results", marks)
    assert graded.graded == 3 and not [p for p in graded.problems if p.severity != "warning"]
    for name in ("scores.csv", "items.csv", *(f"feedback/{i}.md" for i in ids)):
        assert (online / name).read_text() == (tmp_path / "paper-results" / name).read_text(), name
    assert (online / "items.png").is_file()
    scores = {r.student_id: r.score for r in graded.results}
    assert scores[ids[0]] == ExamResult.objects.get(exam=key.title, student__student_id=ids[0]).score
    assert {r.student.student_id: r.score for r in ExamResult.objects.filter(exam=key.title)} == scores
    # The student's own page shows the same feedback, their mark included.
    page = account_client(ids[0]).get("/exams/midterm/").content.decode()
    assert "Marked by hand: 0.5 of 1." in page


def account_client(student_id: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username=student_id))
    return client


# In a real browser: `autograder serve` on a copy of the shipped course with the exam listed, the
# staff setting it up on their page, two students taking it in browsers of their own.


@pytest.fixture(scope="module")
def served_exam(tmp_path_factory):
    """(the site's address, the demo accounts' passwords, the course copy, the commands' environment)."""
    from .conftest import ROOT
    from .served import commands_env, serve
    from .served import course_copy as copy_of_the_course

    home = tmp_path_factory.mktemp("served-exam")
    course_copy = copy_of_the_course(home)
    (course_copy / "exams").mkdir()
    build_exam(
        ROOT / "docs" / "walkthrough" / "roster.csv",
        course_copy / "exams" / "midterm",
        seed=4,
        questions=4,
        open_questions=1,
        lessons=[course_copy / "lesson_data"],
    )
    with (course_copy / "course.toml").open("a") as manifest:
        manifest.write('exams = ["exams/midterm"]\n')
    env = commands_env(home)
    with serve(course_copy, env, home / "serve.log", workers=0) as site:
        assert "instructor" in site.passwords, site.log.read_text()
        yield site.url, site.passwords, course_copy, env


def _fill_settings(page, opens, closes, minutes, results="after_close"):
    page.fill("#id_opens_at", f"{opens:%Y-%m-%dT%H:%M}")  # datetime-local inputs: to the minute
    page.fill("#id_closes_at", f"{closes:%Y-%m-%dT%H:%M}")
    page.fill("#id_minutes", str(minutes))
    page.select_option("#id_results", results)
    page.get_by_role("button", name="Save the settings").click()


def _sign_in_by_link(page, link):
    from playwright.sync_api import expect

    page.goto(link)
    page.fill("#id_new_password1", "correct horse battery")
    page.fill("#id_new_password2", "correct horse battery")
    page.click("text=Set my password")
    expect(page.locator("h1")).to_have_text("Assignments")


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_students_take_the_exam_in_the_browser_and_lose_nothing(served_exam, tmp_path):
    """Start, answer, reload and find the answers, lose the connection and keep them, run out of
    time, be refused after the end, read the feedback after the close; another student reads and
    saves nothing of it. GRADEWRIGHT_SCREENSHOTS=DIR keeps its screenshots in DIR."""
    from playwright.sync_api import expect, sync_playwright

    from .served import CHROMIUM, launch_chromium, roster_links, screenshots_folder

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed here (.ci/run installs it)")
    url, passwords, course_copy, _ = served_exam
    shots = screenshots_folder(tmp_path)
    link_of = roster_links(served_exam, tmp_path)
    key = load_key(course_copy / "exams" / "midterm")
    ada_variant = variant(key, "correct_source_notebook")
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            staff = browser.new_context().new_page()
            staff.goto(f"{url}/accounts/login/")
            staff.fill("input[name=username]", "instructor")
            staff.fill("input[name=password]", passwords["instructor"])
            staff.get_by_role("button", name="Sign in").click()
            staff.goto(f"{url}/staff/online-exams/midterm/")
            now = timezone.now()
            _fill_settings(staff, now - timedelta(minutes=1), now + timedelta(hours=1), 10)
            expect(staff.locator("[role=alert]")).to_have_text("saved: the exam's online settings")

            ada = browser.new_context().new_page()
            _sign_in_by_link(ada, link_of["correct_source_notebook"])
            ada.locator("#exams").get_by_role("link", name=key.title).click()  # listed by its title
            ada.get_by_role("button", name="Start the exam").click()
            expect(ada.locator("#clock")).to_contain_text("Time left")
            first, second, written = ada_variant.questions[0], ada_variant.questions[1], ada_variant.questions[-1]
            right = key.correct_letter(first)
            ada.check(f"#q{first.position} input[value={right}]")
            expect(ada.locator(f"#q{first.position} .saved")).to_have_text("saved")
            ada.fill(f"#q{written.position} textarea", "The attention matrix grows with the square of the length.")
            expect(ada.locator(f"#q{written.position} .saved")).to_have_text("saved")
            expect(ada.locator("#answered")).to_have_text("2")
            ada.screenshot(path=shots / "exam-online.png", full_page=True)
            assert not any(secret[:40] in ada.content() for secret in secrets_of(key))  # no key in the page

            ada.reload()  # a reload resumes where she was
            expect(ada.locator(f"#q{first.position} input[value={right}]")).to_be_checked()
            expect(ada.locator(f"#q{written.position} textarea")).to_have_value(
                "The attention matrix grows with the square of the length."
            )

            # The connection drops: the answer is kept and sent when it is back.
            ada.route("**/exams/midterm/answer", lambda route: route.abort())
            wrong = wrong_letter(key, second)
            ada.check(f"#q{second.position} input[value={wrong}]")
            expect(ada.locator("#status")).to_contain_text("connection to the server is lost")
            expect(ada.locator(f"#q{second.position} .saved")).to_have_text("not saved yet")
            ada.unroute("**/exams/midterm/answer")
            expect(ada.locator("#status")).to_have_text("All answers are saved.", timeout=30_000)
            ada.reload()
            expect(ada.locator(f"#q{second.position} input[value={wrong}]")).to_be_checked()

            # The exam open in a second tab: its save is not overwritten unseen by the first tab's, which
            # shows the newer answer and keeps its own text to choose (issue #49).
            other_tab = ada.context.new_page()
            other_tab.goto(f"{url}/exams/midterm/")
            other_tab.fill(f"#q{written.position} textarea", "Written in the second tab.")
            expect(other_tab.locator(f"#q{written.position} .saved")).to_have_text("saved")
            ada.fill(f"#q{written.position} textarea", "Written in the first tab.")
            expect(ada.locator(f"#q{written.position} .conflict")).to_contain_text("changed in another tab")
            expect(ada.locator(f"#q{written.position} textarea").first).to_have_value("Written in the second tab.")
            expect(ada.locator(f"#q{written.position} .conflict textarea")).to_have_value("Written in the first tab.")
            assert ada.request.get(f"{url}/exams/midterm/state").json()["answers"][str(written.position)] == (
                "Written in the second tab."
            )
            ada.get_by_role("button", name="Use my text instead").click()
            expect(ada.locator(f"#q{written.position} .saved")).to_have_text("saved")
            assert ada.request.get(f"{url}/exams/midterm/state").json()["answers"][str(written.position)] == (
                "Written in the first tab."
            )
            other_tab.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # back to the second tab
            expect(other_tab.locator(f"#q{written.position} textarea")).to_have_value("Written in the first tab.")
            expect(other_tab.locator("#status")).to_contain_text("changed in another tab")
            other_tab.close()

            # Alan, in a browser of his own: his own variant, none of Ada's answers, nothing to save into hers.
            alan = browser.new_context().new_page()
            _sign_in_by_link(alan, link_of["released_unchanged"])
            staff.goto(f"{url}/staff/online-exams/midterm/")
            _fill_settings(staff, now - timedelta(minutes=1), now + timedelta(hours=1), 0.3)  # 18 seconds
            alan.goto(f"{url}/exams/midterm/")
            alan.get_by_role("button", name="Start the exam").click()
            expect(alan.locator("#clock")).to_contain_text("Time left")
            assert alan.request.get(f"{url}/exams/midterm/state").json()["answers"] == {}
            alan_first = variant(key, "released_unchanged").questions[0]
            alan.check(f"#q{alan_first.position} input[value=A]")
            expect(alan.locator(f"#q{alan_first.position} .saved")).to_have_text("saved")
            # A second tab whose clock is stopped: its save after the end reaches the server, and is refused.
            stale = browser.new_context(storage_state=alan.context.storage_state()).new_page()
            stale.clock.install()
            stale.clock.pause_at(timezone.now() + timedelta(seconds=1))
            stale.goto(f"{url}/exams/midterm/")
            # Alan's own tab runs out of time and shows how it ended.
            expect(alan.locator("#ended")).to_contain_text("(time limit)", timeout=90_000)
            stale.check(f"#q{alan_first.position} input[value=B]")
            expect(stale.locator("#status")).to_contain_text("the exam ended at")
            expect(stale.locator("#status")).to_contain_text("(time limit); this answer was not saved")
            assert alan.request.get(f"{url}/exams/midterm/state").json()["answers"] == {str(alan_first.position): "A"}
            assert ada.request.get(f"{url}/exams/midterm/state").json()["answers"][str(second.position)] == wrong

            asked = []  # Submit asks first, naming the questions not answered
            ada.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
            ada.get_by_role("button", name="Submit the exam").click()
            expect(ada.locator("#results-later")).to_have_text("Your results are shown here after the exam closes.")
            assert asked and asked[0].startswith("Not answered: question"), asked
            # The close: then the feedback, the paper path's, for the wrong answer and the right one.
            staff.goto(f"{url}/staff/online-exams/midterm/")
            _fill_settings(staff, now - timedelta(minutes=1), timezone.now() - timedelta(seconds=1), 10)
            ada.reload()
            expect(ada.locator("#score")).to_contain_text("Score: 1 of 5")
            expect(ada.locator("#feedback")).to_contain_text(f"The correct answer is {key.correct_letter(second)}")
            ada.screenshot(path=shots / "exam-feedback.png", full_page=True)
            staff.goto(f"{url}/staff/online-exams/midterm/")
            staff.screenshot(path=shots / "exam-staff.png", full_page=True)
            expect(staff.locator("#attempts")).to_contain_text("correct_source_notebook")
            staff.locator("#attempts tr", has_text="released_unchanged").get_by_role("link", name="log").click()
            expect(staff.locator("#log")).to_contain_text("refused")
        finally:
            browser.close()


@pytest.fixture(scope="module")
def lms():
    """The test platform of tests/lti_platform.py, registered with a client id of this module's own."""
    from service.lti.platforms import add_platform, platform_settings

    from .lti_platform import Platform

    made = Platform(tool_jwks=lambda: Client().get("/lti/jwks.json").json())
    made.client_id = f"tool-{uuid.uuid4().hex[:8]}"
    add_platform(
        platform_settings(
            name="Exam LMS",
            issuer=made.issuer,
            client_id=made.client_id,
            deployment_ids=[made.deployment_id],
            **made.endpoints,
        )
    )
    yield made
    made.close()


def test_an_exam_placed_by_deep_linking_and_its_score_sent_at_the_end(midterm, lms):
    import re

    import jwt

    from .lti_platform import INSTRUCTOR, LEARNER
    from .test_lti import launch

    key, student_id = midterm["key"], midterm["ids"][0]
    chooser = launch(Client(), lms, "teacher-exam", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
    page = chooser.content.decode()
    assert 'value="exam:midterm"' in page and key.title in page
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', page).group(1)
    answer = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": "exam:midterm"})
    response_jwt = re.search(r'name="JWT" value="([^"]+)"', answer.content.decode()).group(1)
    claims = jwt.decode(response_jwt, options={"verify_signature": False})
    (item,) = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["custom"] == {"exam": "midterm"} and item["title"] == key.title
    assert item["lineItem"]["resourceId"] == "exam:midterm" and item["lineItem"]["scoreMaximum"] == 5
    assert Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": "exam:final"}).status_code == 400

    # A student opens the placed link: signed in, on the exam's page; their score reaches the column at the end.
    sub = f"learner-{uuid.uuid4().hex[:6]}"
    Student.objects.create(student_id=student_id, name="Exam Learner", email=f"{sub}@example.edu", on_roster=True)
    line_item = lms.add_line_item({"label": key.title, "scoreMaximum": 5, "resourceId": "exam:midterm"})
    client = Client()
    landed = launch(client, lms, sub, [LEARNER], custom={"exam": "midterm"}, lineitem=line_item["id"])
    assert landed.status_code == 302 and landed["Location"] == "/exams/midterm/"
    client.post("/exams/midterm/")
    question = variant(key, student_id).questions[0]
    client.post("/exams/midterm/answer", {"position": question.position, "value": key.correct_letter(question)})
    client.post("/exams/midterm/submit")
    # The score waits in the outbox, written when the attempt ended; the workers' sender posts it.
    from service.lti.models import ScoreToSend
    from service.lti.outbox import send_due

    (waiting,) = ScoreToSend.objects.filter(lti_user__sub=sub, assignment="exam:midterm")
    assert waiting.state == ScoreToSend.PENDING and waiting.score_given == 1
    assert [entry for entry in lms.scores if entry[1]["userId"] == sub] == []
    send_due()
    (item_url, score), *_ = [entry for entry in lms.scores if entry[1]["userId"] == sub]
    assert item_url == line_item["id"]
    assert (score["scoreGiven"], score["scoreMaximum"]) == (1, 5)
    assert score["gradingProgress"] == "PendingManual" and score["activityProgress"] == "Completed"


def test_an_exam_placed_twice_sends_the_score_to_the_column_the_student_launched(midterm, lms):
    """Two links to the exam in one course, each with its column: both students launch (each their
    own link) before either ends, and each score goes to the column its student launched from, as
    an assignment's does, not to the column launched last."""
    from service.lti.outbox import send_due

    from .lti_platform import LEARNER
    from .test_lti import launch

    key = midterm["key"]
    first = lms.add_line_item({"label": key.title, "scoreMaximum": 5, "resourceId": "exam:midterm"})
    second = lms.add_line_item({"label": f"{key.title} (again)", "scoreMaximum": 5, "resourceId": "exam:midterm"})
    taking = []
    for student_id, column, link in ((midterm["ids"][1], first, "exam-a"), (midterm["ids"][2], second, "exam-b")):
        sub = f"learner-{uuid.uuid4().hex[:6]}"
        Student.objects.update_or_create(
            student_id=student_id, defaults={"email": f"{sub}@example.edu", "on_roster": True}
        )
        client = Client()
        landed = launch(
            client, lms, sub, [LEARNER], custom={"exam": "midterm"}, lineitem=column["id"], resource_link=link
        )
        assert landed.status_code == 302 and landed["Location"] == "/exams/midterm/"
        taking.append((student_id, sub, client, column))
    for student_id, _, client, _ in taking:
        client.post("/exams/midterm/")
        question = variant(key, student_id).questions[0]
        client.post("/exams/midterm/answer", {"position": question.position, "value": key.correct_letter(question)})
        client.post("/exams/midterm/submit")
    send_due()
    for _, sub, _, column in taking:
        ((item_url, score),) = [entry for entry in lms.scores if entry[1]["userId"] == sub]
        assert item_url == column["id"] and score["scoreGiven"] == 1


def test_the_marking_pages_offer_only_the_answers_of_those_who_took_the_exam(midterm):
    """A roster's student who never took the exam online is not offered "on the paper sheet"."""
    key, (took, never, _) = midterm["key"], midterm["ids"]
    client = account(took)
    send(client, "/exams/midterm/")
    written = next(q for q in variant(key, took).questions if q.kind == "open")
    send(client, "/exams/midterm/answer", position=written.position, value="Mine, typed.")
    send(client, "/exams/midterm/submit")
    ta = account(role=Member.TA)
    mine = ta.get(f"/staff/exams/midterm/{written.question}/{took}/").content.decode()
    assert "Answer 1 of 1 " in mine and "typed online" in mine and "paper sheet" not in mine
    assert ta.get(f"/staff/exams/midterm/{written.question}/{never}/").status_code == 404
