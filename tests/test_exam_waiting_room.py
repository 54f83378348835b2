"""An online exam's waiting room and its access code (issue #53), through the real pages with Django's
test client (CSRF enforced): a student who comes before the start waits on a page that counts down
the server's figure and starts the attempt with one request; the access code is checked there,
remembered for the start, and its wrong tries are limited; who may not start is refused."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from service.exams import sessions as exam_sessions
from service.exams.models import ExamAttempt, OnlineExam

from .test_online_exams import account, questions_of, send
from .test_online_exams import midterm as midterm  # noqa: F401 (the fixture, shared)

pytestmark = pytest.mark.timeout(120)


def opens_in(seconds: float) -> None:
    OnlineExam.objects.filter(name="midterm").update(opens_at=timezone.now() + timedelta(seconds=seconds))


def page(client: Client) -> str:
    return client.get("/exams/midterm/").content.decode()


def attempts(student_id: str) -> int:
    return ExamAttempt.objects.filter(exam="midterm", student__student_id=student_id).count()


def test_the_waiting_room_counts_down_the_servers_seconds_and_the_start_is_one_request(midterm):
    student_id = midterm["ids"][0]
    client = account(student_id)
    opens_in(90)
    room = page(client)
    waiting = int(re.search(r'data-waiting-ms="(\d+)"', room).group(1))
    assert 0 < waiting <= 90_000  # the server's figure, which the page counts down (not the device's clock)
    assert 'id="waiting-room"' in room and "waiting_room.js" in room and "The exam opens at" in room
    assert 'http-equiv="refresh"' not in room  # the page never reloads itself while waiting
    assert re.search(r'<form method="post" id="start">.*Start the exam</button>', room, re.S)  # without a script
    # Pressed too early (a page without its script): refused, and the room again; nothing started.
    send(client, "/exams/midterm/")
    assert "the exam opens at" in page(client) and attempts(student_id) == 0
    # The time comes: the page's one post starts the attempt, and its answer is the exam's page itself.
    opens_in(-1)
    started = send(client, "/exams/midterm/")
    taking = started.content.decode()
    assert started.status_code == 200 and attempts(student_id) == 1
    assert 'id="clock"' in taking and 'id="waiting-room"' not in taking and 'class="question"' in taking
    assert questions_of(taking) == questions_of(page(client)) != []  # the page a read gives
    # The same post again (a second device, a double click, a reload that resends) resumes it: one attempt.
    again = send(client, "/exams/midterm/")
    assert again.status_code == 200 and 'id="clock"' in again.content.decode() and attempts(student_id) == 1
    # A student not on the roster waits for nothing: told so, and refused at the start.
    stranger = account()
    opens_in(60)
    refused = page(stranger)
    assert 'id="no-variant"' in refused and 'id="waiting-room"' not in refused
    opens_in(-1)
    send(stranger, "/exams/midterm/")
    assert "you have no variant of this exam" in page(stranger)
    # Anonymous: sent to sign in, and no attempt is started.
    anonymous = Client()
    assert anonymous.get("/exams/midterm/").status_code == 302
    assert anonymous.post("/exams/midterm/").status_code == 302
    assert ExamAttempt.objects.filter(exam="midterm").count() == 1


def test_the_access_code_is_checked_in_the_waiting_room_and_remembered_for_the_start(midterm):
    first, second, third = midterm["ids"]
    OnlineExam.objects.filter(name="midterm").update(access_code="tulip-42")
    opens_in(3600)
    client = account(first)
    room = page(client)
    assert 'name="code"' in room and "Check the code" in room
    send(client, "/exams/midterm/", code="rose")
    room = page(client)
    assert "wrong access code" in room and 'name="code"' in room and attempts(first) == 0
    send(client, "/exams/midterm/", code=" tulip-42 ")
    room = page(client)
    assert "access code accepted" in room and 'id="code-given"' in room and 'name="code"' not in room
    assert attempts(first) == 0  # accepted, not started: the exam opens later
    # At the start, the page posts the form without the code (it was given): the attempt starts.
    opens_in(-1)
    send(client, "/exams/midterm/")
    assert attempts(first) == 1
    # The proctor changes the code after it was given (it leaked): the old one no longer starts.
    OnlineExam.objects.filter(name="midterm").update(access_code="daisy-7")
    other = account(second)
    opens_in(3600)
    send(other, "/exams/midterm/", code="tulip-42")
    assert "wrong access code" in page(other)
    send(other, "/exams/midterm/", code="daisy-7")
    OnlineExam.objects.filter(name="midterm").update(access_code="lily-3")
    opens_in(-1)
    send(other, "/exams/midterm/")
    assert "wrong access code" in page(other) and attempts(second) == 0
    assert 'name="code"' in page(other)  # asked for again: the remembered one is forgotten
    send(other, "/exams/midterm/", code="lily-3")
    assert attempts(second) == 1


def test_wrong_access_codes_are_limited_even_once_the_exam_is_open(midterm):
    student_id = midterm["ids"][2]
    OnlineExam.objects.filter(name="midterm").update(access_code="tulip-42")
    opens_in(600)
    client = account(student_id)
    for guess in range(exam_sessions.CODE_TRIES):
        send(client, "/exams/midterm/", code=f"guess-{guess}")
    send(client, "/exams/midterm/", code="tulip-42")  # the right one, after too many wrong: refused too
    refused = page(client)
    assert "too many wrong access codes; try again in 5 minutes" in refused and 'id="code-given"' not in refused
    opens_in(-1)
    send(client, "/exams/midterm/", code="tulip-42")
    assert "too many wrong access codes" in page(client) and attempts(student_id) == 0
    # Another student is not held back by this one's guesses.
    other = account(midterm["ids"][0])
    send(other, "/exams/midterm/", code="tulip-42")
    assert attempts(midterm["ids"][0]) == 1


@pytest.mark.slow
def test_in_a_browser_the_waiting_room_starts_the_attempt_by_itself_with_one_request(midterm, monkeypatch):
    """Chromium runs the room's own script against the real views, in this process: each request the
    page makes is answered by Django's test client (as the signed-in student), with no server. The
    device's clock is set a day wrong: the page counts the server's figure, not the time of day."""
    from playwright.sync_api import expect, sync_playwright

    from .served import CHROMIUM, launch_chromium

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed here (.ci/run installs it)")
    # Playwright's sync API runs an event loop in this thread; the views are called from it, in turn.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    student_id = midterm["ids"][1]
    client = account(student_id)
    client.get("/assignments/")  # the CSRF cookie, which the page's form token goes with
    posts: list[str] = []
    reads: list[str] = []

    def answer(route, request) -> None:
        path = request.url.removeprefix("http://exam.test")
        if request.method == "GET" and path == "/exams/midterm/":  # the page (its script also asks /state)
            reads.append(path)
        if request.method == "POST":
            posts.append(path)
            response = client.post(path, request.post_data or "", content_type="application/x-www-form-urlencoded")
        else:
            response = client.get(path)
        headers = {name: value for name, value in response.items() if name.lower() != "content-length"}
        body = b"".join(response.streaming_content) if response.streaming else response.content  # a static file
        route.fulfill(status=response.status_code, headers=headers, body=body)

    opens_in(6)  # time for a busy machine to load the page before the opening
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_context().new_page()
            page.add_init_script("Date.now = ((real) => () => real() + 86400000)(Date.now);")  # a day ahead
            page.route("http://exam.test/**", answer)
            page.goto("http://exam.test/exams/midterm/")
            expect(page.locator("#waiting-room")).to_be_visible()
            expect(page.locator("#countdown")).to_contain_text(" s")
            expect(page.locator("#clock")).to_contain_text("Time left", timeout=20_000)
            assert posts == ["/exams/midterm/"] and reads == ["/exams/midterm/"]  # the start's answer is the page
            page.reload()  # a plain read now (exam.js), never the start sent again
            expect(page.locator("#clock")).to_contain_text("Time left", timeout=20_000)  # a busy machine's reload
        finally:
            browser.close()
    assert posts == ["/exams/midterm/"]  # one start, and no reload while it waited
    assert reads == ["/exams/midterm/", "/exams/midterm/"]  # the waiting room, then the reload's read
    attempt = ExamAttempt.objects.get(exam="midterm", student__student_id=student_id)
    assert attempt.started_at >= OnlineExam.objects.get(name="midterm").opens_at
