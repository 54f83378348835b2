"""Django's admin at /admin/, the instructor's fallback console (service/operations/console.py): an anonymous
visitor is sent to the site's own sign-in page, a student and a teaching assistant are refused, an
instructor reads the gradebook's students and submissions; what a student wrote is shown as text,
never run as markup; grades are read only; and in a real browser the admin's pages work under the
site's strict Content-Security-Policy."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from gradebook.models import Assignment, Mark, Student, Submission
from service.accounts.models import Member

pytestmark = pytest.mark.timeout(300)

HOSTILE = '<script>alert("name")</script><img src=x onerror=alert(1)>'
PASSWORD = "a long password for the console 7"
ADDRESS = "192.0.2.93"  # this module's own clients' address (the sign-in throttle counts by address)


def _account(role: str, student: Student | None = None) -> tuple[User, Client]:
    user = User.objects.create_user(f"adm-{role}-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=user, role=role, student=student)
    client = Client(REMOTE_ADDR=ADDRESS)
    client.force_login(user)
    return user, client


def _course() -> dict:
    """A student with a hostile name and one graded submission with a mark; the student's, a TA's and
    an instructor's clients."""
    student = Student.objects.create(student_id=f"adm-{uuid.uuid4().hex[:8]}", name=HOSTILE, on_roster=True)
    assignment, _ = Assignment.objects.get_or_create(name="sequences-and-attention")
    submission = Submission.objects.create(
        student=student,
        assignment=assignment,
        sha256="ab" * 32,
        graded_at=datetime(2026, 11, 2, tzinfo=UTC),
        file="/x.ipynb",
    )
    mark = Mark.objects.create(
        student=student,
        assignment=assignment,
        question_id="softmax",
        submission=submission,
        score=1.0,
        comment=HOSTILE,
        marked_at=datetime(2026, 11, 3, tzinfo=UTC),
    )
    return {
        "student_row": student,
        "submission": submission,
        "mark": mark,
        "student": _account(Member.STUDENT, student)[1],
        "ta": _account(Member.TA)[1],
        "instructor": _account(Member.INSTRUCTOR)[1],
    }


@pytest.fixture
def course() -> Iterator[dict]:
    with transaction.atomic():
        yield _course()
        transaction.set_rollback(True)


def test_an_anonymous_visitor_is_sent_to_the_sites_sign_in_page(course):
    for address in (
        "/admin/",
        "/admin/gradebook/student/",
        f"/admin/gradebook/submission/{course['submission'].id}/change/",
    ):
        answer = Client(REMOTE_ADDR=ADDRESS).get(address, follow=True)
        assert answer.redirect_chain[-1][0].startswith("/accounts/login/?next="), address
        assert answer.status_code == 200 and course["student_row"].student_id not in answer.content.decode()


def test_a_student_and_a_teaching_assistant_are_refused(course):
    submission = course["submission"]
    for who in ("student", "ta"):
        client = course[who]
        for address in (
            "/admin/",
            "/admin/gradebook/student/",
            f"/admin/gradebook/submission/{submission.id}/change/",
            "/admin/service/member/",
            "/admin/login/",
        ):
            answer = client.get(address, follow=True)
            assert answer.status_code == 404, (who, address, answer.status_code)
            assert course["student_row"].student_id not in answer.content.decode(), (who, address)
        refused = client.post(
            f"/admin/gradebook/student/{course['student_row'].id}/change/", {"name": "changed"}, follow=True
        )
        assert refused.status_code == 404, who
    course["student_row"].refresh_from_db()
    assert course["student_row"].name == HOSTILE


def test_an_instructor_reads_the_students_and_a_submission_as_text(course):
    client, student, submission = course["instructor"], course["student_row"], course["submission"]
    index = client.get("/admin/")
    assert index.status_code == 200
    page = index.content.decode()
    for table in ("Students", "Submissions", "Marks", "Members", "Jobs"):
        assert f">{table}<" in page, table
    listed = client.get("/admin/gradebook/student/", {"q": student.student_id})
    assert listed.status_code == 200 and student.student_id in listed.content.decode()
    shown = client.get(f"/admin/gradebook/submission/{submission.id}/change/")
    assert shown.status_code == 200 and submission.sha256 in shown.content.decode()
    assert student.student_id in shown.content.decode()
    # The hostile name and comment are text: escaped wherever they appear, never markup.
    for address in (
        "/admin/gradebook/student/",
        f"/admin/gradebook/student/{student.id}/change/",
        f"/admin/gradebook/mark/{course['mark'].id}/change/",
    ):
        body = client.get(address, {"q": student.student_id} if address.endswith("/student/") else {}).content.decode()
        assert "&lt;script&gt;alert(" in body, address
        assert HOSTILE not in body and "<img src=x" not in body and 'alert("name")</script>' not in body, address


def test_the_console_sends_the_sites_strict_policy(course):
    from service.settings import CONTENT_SECURITY_POLICY

    strict = {name: set(sources) for name, sources in CONTENT_SECURITY_POLICY.items()}
    assert strict["script-src"] == {"'self'"} and strict["style-src"] == {"'self'"}
    for client in (Client(REMOTE_ADDR=ADDRESS), course["student"], course["instructor"]):
        for address in ("/admin/", "/admin/gradebook/student/", "/admin/login/"):
            header = client.get(address).headers["Content-Security-Policy"]
            sent = {
                name: set(sources) for name, *sources in (part.split() for part in header.split(";") if part.strip())
            }
            assert sent == strict, address
            assert client.get(address).headers.get("X-Frame-Options") == "DENY", address


def test_grades_are_read_only_in_the_console(course):
    client, mark, submission = course["instructor"], course["mark"], course["submission"]
    assert client.get("/admin/gradebook/mark/add/").status_code == 403
    changed = client.post(f"/admin/gradebook/mark/{mark.id}/change/", {"score": "99", "comment": "x"})
    assert changed.status_code == 403
    deleted = client.post(f"/admin/gradebook/submission/{submission.id}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    mark.refresh_from_db()
    assert mark.score == 1.0 and Submission.objects.filter(id=submission.id).exists()
    # A roster's details are data the console may fix; the student id every grade is filed under is not.
    student = course["student_row"]
    page = client.get(f"/admin/gradebook/student/{student.id}/change/").content.decode()
    assert 'name="name"' in page and 'name="student_id"' not in page
    # A method the admin does not take: 405 with Allow, as everywhere on the site.
    patched = client.generic("PATCH", "/admin/")
    assert patched.status_code == 405 and "GET" in patched["Allow"]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # the test's output is the test's, not the server's log
        pass


@pytest.fixture
def live_site() -> Iterator[tuple[str, str]]:
    """The site in a thread of this process (its database shared, the rows committed): its address and
    an instructor's username; the instructor and the hostile student are removed afterwards."""
    from django.core.handlers.wsgi import WSGIHandler
    from whitenoise import WhiteNoise  # noqa: F401 - the site's middleware serves the admin's static files

    student = Student.objects.create(student_id=f"adm-live-{uuid.uuid4().hex[:8]}", name=HOSTILE, on_roster=True)
    user = User.objects.create_user(f"adm-live-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=user, role=Member.INSTRUCTOR)
    server = make_server("127.0.0.1", 0, WSGIHandler(), server_class=_ThreadingServer, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, name="admin-live-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", user.username
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the live site's thread did not stop"
        user.delete()
        student.delete()
        from axes.models import AccessAttempt

        AccessAttempt.objects.filter(username=user.username).delete()


CHROMIUM = "/usr/bin/chromium"
WATCH = """document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation({page: location.href, directive: event.violatedDirective, blocked: event.blockedURI});
});"""


@pytest.mark.skipif(not __import__("os").path.exists(CHROMIUM), reason="Debian's chromium is not installed here")
def test_the_admin_works_in_a_browser_under_the_strict_policy(live_site):
    """Signed in on the site's page, the instructor opens the console, searches the students, opens
    one, and filters the submissions: every page styled by the admin's own static files, its
    scripts run (the changelist's select-all box), nothing violates the policy, nothing logs an
    error, and the hostile name is shown as the text it is."""
    from playwright.sync_api import expect, sync_playwright

    url, username = live_site
    violations: list[dict] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context()
            context.expose_binding("reportViolation", lambda _source, violation: violations.append(violation))
            context.add_init_script(WATCH)
            page = context.new_page()
            page.on(
                "console",
                lambda message: (
                    errors.append(f"{message.text} ({message.location.get('url')})")
                    if message.type == "error"
                    else None
                ),
            )
            page.on("dialog", lambda dialog: errors.append(f"a dialog ran: {dialog.message}") or dialog.dismiss())
            page.goto(f"{url}/admin/")
            expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/admin/"))
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page).to_have_url(f"{url}/admin/")
            expect(page.locator("#site-name")).to_contain_text("the instructor's console")
            # The admin's stylesheet applied (a static file under style-src 'self').
            assert page.evaluate("getComputedStyle(document.querySelector('#header')).display") == "flex"
            page.goto(f"{url}/admin/gradebook/student/?q=adm-live-")
            row = page.locator("#result_list tbody tr").first
            expect(row).to_contain_text('<script>alert("name")</script>')  # shown as text
            # The admin's scripts run (static files under script-src 'self'): its theme button switches.
            before = page.evaluate("document.documentElement.dataset.theme || 'auto'")
            page.locator("button.theme-toggle").first.click()
            assert page.evaluate("document.documentElement.dataset.theme") != before
            row.locator("a").first.click()
            expect(page.locator("h1")).to_contain_text("Change student")
            expect(page.locator("input[name=name]")).to_have_value(HOSTILE)
            page.goto(f"{url}/admin/gradebook/submission/?ran__exact=1")
            expect(page.locator("#changelist-filter")).to_be_visible()
            page.goto(f"{url}/admin/service/job/")
            expect(page.locator("h1")).to_contain_text("Select job to view")
        finally:
            browser.close()
    assert violations == []
    # The browser's own request for /favicon.ico (the admin's pages name no icon) is no page's error.
    assert [error for error in errors if not error.endswith("/favicon.ico)")] == []
