"""The Content-Security-Policy: every page sends the strict policy (scripts and styles from the
site's own static files only, no plugin, not framed, forms to the site), the LTI pages a course
platform frames excepted from frame-ancestors only; no template holds inline script or style; in a
real browser every page renders, its scripts work and nothing violates the policy; and the real
`autograder serve` serves the static files itself."""

from __future__ import annotations

import base64
import html
import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from service.accounts.models import Member

from . import test_lti
from .conftest import ROOT, needs_sandbox
from .lti_platform import INSTRUCTOR, Platform
from .served import CORRECT, KNOWN_NOTEBOOK, PARTIAL, POSTED, launch_chromium, needs_browser, roster_links, student
from .site_routes import site_routes

# A fixture shared with the module that made it (each module gets its own instance).
platform = test_lti.platform

STRICT = {
    "default-src": {"'self'"},
    "script-src": {"'self'"},
    "style-src": {"'self'"},
    "img-src": {"'self'"},
    "object-src": {"'none'"},
    "frame-ancestors": {"'none'"},
    "base-uri": {"'self'"},
    "form-action": {"'self'"},
}
# The pages a course platform shows in its own frame: any site may frame them (service/lti/views.py).
FRAMED = {"lti-login", "lti-login-for", "lti-launch", "lti-deep-link"}
TEMPLATES = ROOT / "service" / "templates"
STATIC = ROOT / "service" / "static"
DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"


def policy_of(headers) -> dict[str, set[str]]:
    """The Content-Security-Policy header's directives: {name: its sources}."""
    header = headers.get("Content-Security-Policy") or headers.get("content-security-policy")  # (Playwright's)
    assert header, "no Content-Security-Policy header"
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: set(sources) for name, *sources in directives}


def expected_policy(name: str) -> dict[str, set[str]]:
    return {**STRICT, "frame-ancestors": {"*"}} if name in FRAMED else STRICT


def _arguments(name: str) -> list:
    assignment = ["sequences-and-attention"]
    marked = ["attention-not-explanation", "written"]
    return {
        "assignment": assignment,
        "notebook": assignment,
        "submission": [1],
        "api-submission": [1],
        "api-grades": assignment,
        "api-notebook": assignment,
        "api-practice-request": assignment,
        "api-practice": [1],
        "practice": assignment,
        "gradebook": assignment,
        "statistics": assignment,
        "statistics-chart": assignment + ["overview"],
        "student": ["someone"],
        "marking": marked[:1],
        "mark-start": marked,
        "mark-answer": marked + [1],
        "mark-group": marked,
        "exam-mark-group": ["midterm", "q"],
        "override": [1],
        "rubric-edit": marked,
        "mark-empty": marked,
        "exam-mark-empty": ["midterm", "q"],
        "regrade": assignment,
        "choose-counted": assignment,
        "publish-grades": assignment,
        "similarity": assignment,
        "review-answer": [1],
        "review-ask": [1],
        "diff": ["someone", 1, 2],
        "exam-start": ["midterm", "q"],
        "exam-mark": ["midterm", "q", "someone"],
        "welcome": ["not-a-link"],
        "lti-login-for": [uuid.uuid4()],
        "exam-log": ["midterm", 1],
        "exam-result": ["midterm", "scores.csv"],
        "extensions": ["sequences-and-attention"],
        "lesson": ["module-10-question-bank"],
        **{
            route: ["midterm"]
            for route in (
                "exam-take",
                "exam-save",
                "exam-submit",
                "exam-state",
                "exam-online",
                "exam-room",
                "exam-publish",
            )
        },
    }.get(name, [])


# The pages that render for the staff with no more than the shipped course.
RENDERED_FOR_STAFF = {
    "assignments",
    "assignment",
    "roster",
    "platforms",
    "exports",
    "reviews",
    "exams",
    "gradebook",
    "statistics",
    "similarity",
    "marking",
    "mark-group",
    "lessons",
    "lesson",
}


@pytest.fixture(scope="module")
def members():
    """A student and an instructor of the course (made once: their passwords take a while to hash)."""
    return student()[0], student(Member.INSTRUCTOR)[0]


def signed_in(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


@pytest.mark.parametrize("name", sorted(pattern.name for pattern in site_routes()))
def test_every_page_sends_the_strict_policy(name, members):
    """Every route, for an anonymous visitor, a student and an instructor, whatever it answers
    (the page, a redirect to sign in, 404, a refused CSRF token): the policy, and X-Frame-Options
    in step with frame-ancestors."""
    url = reverse(name, args=_arguments(name))
    as_student, as_instructor = (signed_in(user) for user in members)
    for client in (Client(enforce_csrf_checks=True), as_student, as_instructor):
        answer = client.post(url) if name in POSTED else client.get(url)
        # /readyz answers 503 by design while the site cannot serve (its database away, a migration missing):
        # the orchestrator's signal (service/operations/probes.py), not a server error; it too carries the policy.
        if name == "readyz" and answer.status_code == 503:
            assert json.loads(answer.content)["ready"] is False, url
        else:
            assert answer.status_code < 500, (url, answer.status_code)
        assert policy_of(answer.headers) == expected_policy(name), url
        assert answer.headers.get("X-Frame-Options") == (None if name in FRAMED else "DENY"), url
    if name in RENDERED_FOR_STAFF:
        assert as_instructor.get(url).status_code == 200
    if name == "login":
        assert Client().get(url).status_code == 200


TAG_PROBLEMS = {
    "an inline <script> (no src)": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    "a <style> element": re.compile(r"<style\b", re.I),
    "a style= attribute": re.compile(r"<[^>]*\sstyle\s*=", re.I),
    "an on<event>= attribute": re.compile(r"<[^>]*\son[a-z]+\s*=", re.I),
    "a javascript: address": re.compile(r"javascript:", re.I),
}


def test_no_template_holds_inline_script_or_style():
    templates = sorted(TEMPLATES.rglob("*.html"))
    assert len(templates) > 15
    problems = [
        f"{path.relative_to(ROOT)}: {what}"
        for path in templates
        for what, pattern in TAG_PROBLEMS.items()
        if pattern.search(path.read_text())
    ]
    assert problems == []
    # The patterns find what they look for (a test that cannot fail is a defect).
    for sample in (
        "<script>alert(1)</script>",
        "<style>p {}</style>",
        '<p style="x">',
        '<a onclick="x">',
        '<a href="javascript:void(0)">',
    ):
        assert any(pattern.search(sample) for pattern in TAG_PROBLEMS.values()), sample
    assert not any(
        pattern.search('<script src="/static/service/site.js"></script>') for pattern in TAG_PROBLEMS.values()
    )


def test_every_static_file_a_template_names_exists():
    named = {
        match
        for path in TEMPLATES.rglob("*.html")
        for match in re.findall(r"""{% static ['"]([^'"]+)['"] %}""", path.read_text())
    }
    assert {"service/site.css", "service/marking.js", "vendor/htmx.org/htmx.min.js"} <= named
    assert [name for name in named if not (STATIC / name).is_file()] == []


def test_the_deep_linking_answer_posts_to_the_platform_by_a_static_script(platform):
    chooser = test_lti.launch(Client(), platform, "teacher-csp", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
    assert policy_of(chooser.headers) == expected_policy("lti-launch") and "X-Frame-Options" not in chooser.headers
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', chooser.content.decode()).group(1)
    answer = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": test_lti.ASSIGNMENT})
    assert answer.status_code == 200
    policy = policy_of(answer.headers)
    assert policy["form-action"] == {"'self'", platform.base} and policy["frame-ancestors"] == {"*"}
    page = answer.content.decode()
    assert f'action="{platform.base}/deep-link-return"' in page and "data-auto-submit" in page
    assert '<script src="/static/service/auto_submit.js"></script>' in page
    assert not TAG_PROBLEMS["an inline <script> (no src)"].search(page)


def test_a_deep_linking_return_address_that_is_not_http_is_refused(platform):
    settings = {
        "deep_link_return_url": "javascript:alert(1)//",
        "accept_types": ["ltiResourceLink"],
        "accept_presentation_document_targets": ["window"],
    }
    chooser = test_lti.launch(
        Client(),
        platform,
        "teacher-csp-2",
        [INSTRUCTOR],
        message_type="LtiDeepLinkingRequest",
        extra={DEEP_LINKING_SETTINGS: settings},
    )
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', chooser.content.decode()).group(1)
    answer = Client().post("/lti/deep-link/", {"launch_id": launch_id, "assignment": test_lti.ASSIGNMENT})
    assert answer.status_code == 400 and "not an http or https address" in answer.content.decode()


def test_the_served_site_serves_its_static_files(served):
    url = served[0]
    for path, media in (("service/site.css", "text/css"), ("service/marking.js", "text/javascript")):
        answer = httpx.get(f"{url}/static/{path}", timeout=30)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(media), path
        assert answer.content == (STATIC / path).read_bytes()
    assert httpx.get(f"{url}/static/service/nothing.css", timeout=30).status_code == 404
    page = httpx.get(f"{url}/accounts/login/", timeout=30)
    assert page.status_code == 200 and policy_of(page.headers) == STRICT


# --- in the browser --------------------------------------------------------------------------------

# Every page's securitypolicyviolation events, reported to the test (an init script, which the
# page's policy does not govern).
WATCH = """document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation({page: location.href, directive: event.violatedDirective, blocked: event.blockedURI});
});"""


class Watched:
    """A browser context whose pages report every policy violation and console error."""

    def __init__(self, browser) -> None:
        self.violations: list[dict] = []
        self.console: list[str] = []
        self.context = browser.new_context()
        self.context.expose_binding("reportViolation", lambda _source, violation: self.violations.append(violation))
        self.context.add_init_script(WATCH)
        self.page = self.context.new_page()
        self.page.on("console", self._console)

    def _console(self, message) -> None:
        if message.type == "error":
            self.console.append(f"{message.text} ({message.location.get('url')})")

    def visit(self, url: str, heading: str | None = None):
        from playwright.sync_api import expect

        answer = self.page.goto(url)
        assert answer is not None and answer.status == 200, (url, answer and answer.status)
        if heading:
            expect(self.page.locator("h1")).to_contain_text(heading)
        self.styled()
        return answer

    def styled(self) -> None:
        """The site's stylesheet applies (a static file, allowed by style-src 'self')."""
        font = self.page.evaluate("getComputedStyle(document.body).fontFamily")
        assert "system-ui" in font, (self.page.url, font)

    def clean(self) -> None:
        """No policy violation and no console error (a blocked script or style logs one)."""
        assert self.violations == []
        assert self.console == []


def sign_in(watched: Watched, url: str, username: str, password: str) -> None:
    from playwright.sync_api import expect

    watched.visit(f"{url}/accounts/login/", "Sign in")
    watched.page.fill("input[name=username]", username)
    watched.page.fill("input[name=password]", password)
    watched.page.get_by_role("button", name="Sign in").click()
    expect(watched.page.locator("h1")).to_have_text("Assignments")


def hand_in_and_watch(watched: Watched, url: str, assignment: str, path: Path) -> str:
    """Hand ``path`` in on the assignment's page, which leads to the submission's page; it follows
    the job to its result by itself (htmx asks for its live part again until the job is graded),
    without a reload. The submission page's address."""
    from playwright.sync_api import expect

    watched.visit(f"{url}/assignments/{assignment}/")
    watched.page.set_input_files("input[name=notebook]", str(path))
    watched.page.get_by_role("button", name="Hand in").click()
    expect(watched.page.locator("#state")).to_be_visible()
    watched.styled()
    # Queued or being graded, or graded already: a waiting worker is woken by the hand-in, and may
    # be done before the page is shown (tests/test_live.py holds the worker back to see it change).
    first = watched.page.locator("#state").text_content()
    assert first in {"queued", "grading", "graded"}, first
    loads: list[object] = []

    def loaded(page) -> None:
        loads.append(page)

    watched.page.on("load", loaded)
    expect(watched.page.locator("text=Score:")).to_be_visible(timeout=180_000)
    expect(watched.page.locator("#state")).to_have_text("graded")
    watched.page.remove_listener("load", loaded)
    assert loads == [], "the page was reloaded: its live part should have been updated in place"
    watched.styled()
    return watched.page.url


def outside_the_fields(page, key: str) -> None:
    """``key`` pressed with no field focused, as a marker does between answers."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


@needs_sandbox
@needs_browser
@pytest.mark.slow
def test_every_page_works_in_the_browser_under_the_policy(served, tmp_path):
    """A student and an instructor walk every page; the scripted parts (the submission page that
    follows its grading, the marking pages' keys) work, and nothing breaks the policy."""
    from playwright.sync_api import expect, sync_playwright

    url, passwords, _, _ = served
    link = roster_links(served, tmp_path)["correct_float32"]
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            learner = Watched(browser)
            learner.visit(link, "Welcome")
            learner.page.fill("#id_new_password1", "correct horse battery")
            learner.page.fill("#id_new_password2", "correct horse battery")
            learner.page.click("text=Set my password")
            expect(learner.page.locator("h1")).to_have_text("Assignments")
            learner.styled()
            # The policy blocks what a page did not bring itself, and the test sees it: the control.
            learner.page.evaluate("""() => { const s = document.createElement("script");
                s.textContent = "window.injected = 1"; document.body.append(s); }""")
            assert learner.page.evaluate("window.injected") is None
            for _ in range(200):  # the violation's event, delivered to the test (at most 10 s)
                if any(v["directive"].startswith("script-src") for v in learner.violations):
                    break
                learner.page.wait_for_timeout(50)
            assert any(v["directive"].startswith("script-src") for v in learner.violations), learner.violations
            learner.violations.clear()
            learner.console.clear()

            first = hand_in_and_watch(learner, url, "sequences-and-attention", PARTIAL)
            hand_in_and_watch(learner, url, "sequences-and-attention", CORRECT)
            hand_in_and_watch(learner, url, "attention-not-explanation", KNOWN_NOTEBOOK)
            learner.page.select_option("#review select[name=question]", "explanation")
            learner.page.fill("#review textarea", "Please look again.")
            learner.page.get_by_role("button", name="Send to the staff").click()
            expect(learner.page.locator("text=Please look again.")).to_be_visible()
            learner.clean()

            staff = Watched(browser)
            sign_in(staff, url, "instructor", passwords["instructor"])
            for path, heading in (
                ("/assignments/", "Assignments"),
                ("/assignments/sequences-and-attention/", ""),
                ("/staff/roster/", "Roster"),
                ("/staff/platforms/", "Course platforms"),
                ("/staff/gradebook/", "Gradebook"),
                ("/staff/reviews/", "Review requests"),
                ("/staff/exports/", "Grade files"),
                ("/staff/exams/", "Exams"),
                ("/staff/marking/attention-not-explanation/", "Hand grading"),
                ("/staff/similarity/sequences-and-attention/?threshold=0.1", "Similarity"),
                (f"{first.removeprefix(url)}", "submission"),
            ):
                staff.visit(url + path, heading)
            staff.visit(f"{url}/staff/statistics/sequences-and-attention/", "Statistics")
            for chart in staff.page.locator("img.chart").all():  # PNGs of the site's own: img-src 'self'
                expect(chart).to_have_js_property("complete", True)
                assert chart.evaluate("image => image.naturalWidth") > 0
            staff.visit(f"{url}/staff/students/correct_float32/", "correct_float32")
            staff.page.click("text=since the one before")
            expect(staff.page.locator("h1")).to_contain_text("what changed")
            expect(staff.page.locator("table.diff")).to_be_visible()
            staff.styled()

            # Hand grading by keyboard: 1 applies the first item, Ctrl+Enter saves and moves on
            # (to this answer again: it is the only one), n and p move (each a new page load).
            staff.visit(f"{url}/staff/marking/attention-not-explanation/", "Hand grading")
            with staff.page.expect_event("load"):  # its keys work once its script has run
                staff.page.click("a:has-text('Mark')")
            expect(staff.page.locator("#mark")).to_be_visible()
            assert staff.page.locator("text=Current mark:").count() == 0
            staff.page.locator("body").press("1")
            expect(staff.page.locator('input[data-key="1"]')).to_be_checked()
            staff.page.locator("textarea[name=comment]").fill("the first item, by its key")
            with staff.page.expect_event("load"):
                staff.page.locator("textarea[name=comment]").press("Control+Enter")
            expect(staff.page.locator("text=Current mark:")).to_be_visible()
            expect(staff.page.locator("textarea[name=comment]")).to_have_value("the first item, by its key")
            expect(staff.page.locator('input[data-key="1"]')).to_be_checked()
            for key, link in (("n", "#next"), ("p", "#previous")):
                target = url + staff.page.locator(link).get_attribute("href")
                with staff.page.expect_event("load"):
                    outside_the_fields(staff.page, key)
                assert staff.page.url == target
            staff.styled()

            # An exam's open question: Ctrl+Enter saves and moves on, p comes back.
            staff.visit(f"{url}/staff/exams/", "Exams")
            with staff.page.expect_event("load"):  # its keys work once its script has run
                staff.page.click("a:has-text('Mark') >> nth=0")
            expect(staff.page.locator("text=Answer 1 of")).to_be_visible()
            staff.page.fill("#mark input[name=score]", "1")
            with staff.page.expect_event("load", timeout=30_000):  # saved, then the next answer
                staff.page.locator("#mark input[name=score]").press("Control+Enter")
            expect(staff.page.locator("text=Answer 2 of")).to_be_visible()
            with staff.page.expect_event("load"):
                outside_the_fields(staff.page, "p")  # the score field has the focus (autofocus)
            expect(staff.page.locator("#current")).to_have_text("1")
            with staff.page.expect_event("load"):
                outside_the_fields(staff.page, "n")
            expect(staff.page.locator("text=Answer 2 of")).to_be_visible()
            staff.styled()
            staff.clean()
            learner.clean()
        finally:
            browser.close()


class Authorization:
    """The platform's authorization endpoint, the browser's part of its login: the signed launch,
    posted back to the tool's redirect address by the platform's own page. (A server of its own: a
    browser route would not see a request the tool's redirect leads to.)"""

    def __init__(self, token_for) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                asked = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
                body = (
                    f'<form method="post" action="{html.escape(asked["redirect_uri"])}" id="f">'
                    f'<input type="hidden" name="id_token" value="{token_for(asked["nonce"])}">'
                    f'<input type="hidden" name="state" value="{html.escape(asked["state"])}"></form>'
                    '<script>document.getElementById("f").submit()</script>'
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.address = f"http://127.0.0.1:{self.server.server_port}/auth"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@needs_browser
@pytest.mark.slow
def test_the_lti_pages_work_in_the_browser_under_the_policy(served, tmp_path):
    """An instructor places an assignment from the platform, in the browser: the login's cookie
    check (a static script) goes on to the platform, the launch shows the choice, and the signed
    answer is posted back to the platform by a static script, which form-action allows."""
    from playwright.sync_api import expect, sync_playwright

    url, passwords, _, _ = served
    lms = Platform(tool_jwks=lambda: httpx.get(f"{url}/lti/jwks.json", timeout=30).json())
    lms.client_id = f"tool-{uuid.uuid4().hex[:8]}"
    returned: list[str] = []
    authorization = Authorization(
        lambda nonce: lms.id_token(nonce, "teacher-9", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
    )
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                staff = Watched(browser)
                sign_in(staff, url, "instructor", passwords["instructor"])
                staff.visit(f"{url}/staff/platforms/", "Course platforms")
                for field, value in (
                    ("name", "Test LMS"),
                    ("issuer", lms.issuer),
                    ("client_id", lms.client_id),
                    ("deployment_ids", lms.deployment_id),
                    ("auth_url", authorization.address),
                    ("token_url", lms.endpoints["token_url"]),
                    ("keyset_url", lms.endpoints["keyset_url"]),
                ):
                    staff.page.fill(f"input[name={field}]", value)
                staff.page.get_by_role("button", name="Register").click()
                expect(staff.page.locator("h2", has_text="Test LMS")).to_be_visible()
                staff.clean()

                teacher = Watched(browser)
                page = teacher.page

                def deep_link_return(route) -> None:
                    returned.append(parse_qs(route.request.post_data or "").get("JWT", [""])[0])
                    route.fulfill(content_type="text/html", body="<h1>Placed</h1>")

                page.route(f"{lms.base}/deep-link-return", deep_link_return)
                query = {
                    "iss": lms.issuer,
                    "login_hint": "teacher-9",
                    "target_link_uri": f"{url}/lti/launch/",
                    "lti_message_hint": "m1",
                    "client_id": lms.client_id,
                }
                login = page.goto(f"{url}/lti/login/?" + str(httpx.QueryParams(query)))
                assert login is not None and login.status == 200
                assert policy_of(login.headers) == expected_policy("lti-login")
                # The cookie check's script goes on: to the platform, and back with the launch.
                expect(page.locator("h1")).to_have_text("Place an assignment in the course", timeout=30_000)
                teacher.styled()
                page.check(f"input[value={test_lti.ASSIGNMENT}]")
                page.get_by_role("button", name="Place it").click()
                expect(page.locator("h1")).to_have_text("Placed", timeout=30_000)
                assert len(returned) == 1 and returned[0].count(".") == 2  # the signed answer, a JWT
                claims = json.loads(base64.urlsafe_b64decode(returned[0].split(".")[1] + "=="))
                (item,) = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
                assert item["custom"] == {
                    "assignment": test_lti.ASSIGNMENT,
                    "canvas_assignment_id": "$Canvas.assignment.id",
                }
                assert teacher.violations == [] and teacher.console == []
            finally:
                browser.close()
    finally:
        authorization.close()
        lms.close()


def test_the_static_files_ship_with_the_package():
    from hatchling.builders.wheel import WheelBuilder

    # What the wheel's builder includes (pyproject.toml's packages and excludes), without building it.
    included = {file.distribution_path for file in WheelBuilder(str(ROOT)).recurse_included_files()}
    static = {path.relative_to(ROOT).as_posix() for path in (ROOT / "service/static").rglob("*") if path.is_file()}
    assert static and static <= included
