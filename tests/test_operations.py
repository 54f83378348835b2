"""Running the site in production (issue #37, part A), through the real ``autograder serve``: its log
(a request's fault with its traceback, jobs' outcomes, sign-in refusals, nothing expected with a
traceback), /healthz, /readyz and the Prometheus metrics scraped while jobs run, the operator's
commands (``manage``, our system checks, ``accounts unlock``, the default gradebook), a port in use,
and the site as a hub's service."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .served import CORRECT, PARTIAL, autograder, commands_env, course_copy, serve

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
METRICS_TOKEN = "a-scrapers-token-0123456789"


@dataclass
class Site:
    url: str
    passwords: dict[str, str]
    course: Path
    env: dict[str, str]
    log: Path  # GRADEWRIGHT_LOG_FILE: the site's and its worker's log


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    home = tmp_path_factory.mktemp("operations")
    copy = course_copy(home)
    log = home / "gradewright.log"
    env = commands_env(
        home, GRADEWRIGHT_LOG_FILE=str(log), GRADEWRIGHT_METRICS="staff", GRADEWRIGHT_METRICS_TOKEN=METRICS_TOKEN
    )
    with serve(copy, env, home / "serve.log", workers=1) as served:
        yield Site(served.url, served.passwords, copy, env, log)


@contextmanager
def _signed_in(site: Site, username: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=site.url, timeout=60) as browser:
        yield _sign_in(browser, site, username)


def _sign_in(browser: httpx.Client, site: Site, username: str) -> httpx.Client:
    browser.get("/accounts/login/")
    answer = browser.post(
        "/accounts/login/",
        data={
            "username": username,
            "password": site.passwords[username],
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
    )
    assert answer.status_code == 302, answer.text
    return browser


def _token(site: Site, username: str) -> str:
    answer = httpx.post(
        f"{site.url}/api/v1/token", data={"username": username, "password": site.passwords[username]}, timeout=60
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def _hand_in(site: Site, token: str, path: Path) -> httpx.Response:
    return httpx.post(
        f"{site.url}/api/v1/submissions",
        headers={"Authorization": f"Token {token}"},
        data={"assignment": "sequences-and-attention"},
        files={"file": (path.name, path.read_bytes())},
        timeout=60,
    )


def _metric(text: str, name: str, **labels: str) -> float:
    """One sample's value from Prometheus's text format (0 when absent)."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    pattern = re.escape(name + (f"{{{wanted}}}" if wanted else "")) + r" (\S+)"
    found = re.search(rf"^{pattern}$", text, re.M)
    return float(found.group(1)) if found else 0.0


def _said_after(log: Path, start: int, pattern: str, seconds: float = 120) -> str:
    """The log from ``start`` once ``pattern`` appears in it (a worker's line comes when it comes)."""
    deadline = time.monotonic() + seconds
    while True:
        text = log.read_text()[start:] if log.exists() else ""
        if re.search(pattern, text):
            return text
        if time.monotonic() > deadline:
            pytest.fail(f"{pattern!r} not in the log within {seconds:.0f} s:\n{text}")
        time.sleep(0.2)


def test_a_request_the_site_fails_answers_a_page_and_logs_its_traceback_and_refusals_none(site):
    start = site.log.stat().st_size if site.log.exists() else 0
    uploads = site.course / ".gradewright" / "uploads"
    shutil.rmtree(uploads, ignore_errors=True)
    uploads.write_text("not a folder: where the hand-ins go is broken")  # the disk's fault, not the student's
    try:
        api = _hand_in(site, _token(site, "student"), CORRECT)
        with _signed_in(site, "student") as browser:
            page = browser.post(
                "/assignments/sequences-and-attention/",
                data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                files={"notebook": (CORRECT.name, CORRECT.read_bytes())},
            )
    finally:
        uploads.unlink()
    assert api.status_code == 500 and set(api.json()) == {"error"} and "Traceback" not in api.text
    assert page.status_code == 500 and "<h1>Server error</h1>" in page.text and "Traceback" not in page.text
    refused = httpx.post(f"{site.url}/api/v1/token", data={"username": "student", "password": "wrong"}, timeout=30)
    nothing = httpx.get(f"{site.url}/no-such-page", timeout=30)
    assert (refused.status_code, nothing.status_code) == (401, 404)
    said = _said_after(site.log, start, r"sign-in refused \(password\) for 'student' from 127\.0\.0\.1")
    errors = re.findall(
        r"^\S+ \S+ ERROR django\.request: Internal Server Error: (\S+) \[request_id=\w+\]\n(.*?)(?=^\d{4}-|\Z)",
        said,
        re.M | re.S,
    )
    assert [path for path, _ in errors] == ["/api/v1/submissions", "/assignments/sequences-and-attention/"], said
    for _, traceback in errors:
        assert traceback.startswith("Traceback (most recent call last)") and "Error" in traceback.splitlines()[-1]
    not_found = re.search(
        r"^.* WARNING django\.request: Not Found: /no-such-page \[request_id=\w+\]\n(.*)", said, re.M | re.S
    )
    assert not_found and not not_found.group(1).startswith("Traceback"), said
    assert said.count("Traceback") == 2, said  # the faults' alone: no refusal or 404 has one


def test_probes_and_metrics_while_jobs_run(site):
    assert httpx.get(f"{site.url}/healthz", timeout=30).text == "ok\n"
    deadline = time.monotonic() + 120
    # Ready as soon as the site serves; grading "ok" once the worker, started, says it is alive.
    while (ready := httpx.get(f"{site.url}/readyz", timeout=30)).json().get("grading") != "ok":
        assert time.monotonic() < deadline, ready.text
        time.sleep(0.5)
    facts = ready.json()
    assert ready.status_code == 200 and facts["database"] == "ok" and facts["migrations"] == "ok", facts
    assert facts["ready"] is True and facts["settings"] == "ok" and facts["workers_alive"] >= 1
    # Who may read the metrics (GRADEWRIGHT_METRICS=staff): not anyone, not a student, not a wrong token.
    assert httpx.get(f"{site.url}/metrics").status_code == 404
    assert httpx.get(f"{site.url}/metrics", headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 404
    with _signed_in(site, "student") as student:
        assert student.get("/metrics").status_code == 404
    scraper = {"Authorization": f"Bearer {METRICS_TOKEN}"}

    def scrape() -> str:
        answer = httpx.get(f"{site.url}/metrics", headers=scraper, timeout=60)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
        return answer.text

    before = scrape()
    token = _token(site, "student")
    start = site.log.stat().st_size if site.log.exists() else 0
    jobs = [_hand_in(site, token, path).json()["id"] for path in (CORRECT, PARTIAL)]
    during = [scrape()]
    while (
        _metric(during[-1], "gradewright_jobs", state="graded")
        < _metric(before, "gradewright_jobs", state="graded") + 2
    ):
        assert len(during) < 600, during[-1]
        time.sleep(0.2)
        during.append(scrape())
    after = during[-1]
    assert (
        _metric(after, "gradewright_job_latency_seconds_count", kind="hand-in")
        == _metric(before, "gradewright_job_latency_seconds_count", kind="hand-in") + 2
    )
    assert _metric(after, "gradewright_job_latency_seconds_count", kind="regrade") == _metric(
        before, "gradewright_job_latency_seconds_count", kind="regrade"
    )
    assert _metric(after, "gradewright_job_latency_seconds_bucket", kind="hand-in", le="+Inf") >= 2
    assert any(
        _metric(text, "gradewright_queue_depth") + _metric(text, "gradewright_jobs", state="grading") >= 1
        for text in during
    )
    assert _metric(after, "gradewright_workers_alive") >= 1
    assert _metric(after, "gradewright_http_requests_total", view="api-submissions", method="POST", status="201") >= 2
    assert 'gradewright_lti_outbox_scores{state="failed"} 0.0' in after
    assert "student" not in after.replace("students", "")  # no student's id in a label
    with _signed_in(site, "instructor") as staff:
        assert staff.get("/metrics").status_code == 200
    said = _said_after(site.log, start, rf"job {jobs[1]} graded")
    for job in jobs:
        assert re.search(
            rf"INFO gradewright\.jobs: job {job} claimed \(student \S+, sequences-and-attention\)", said
        ), said
        assert re.search(
            rf"INFO gradewright\.jobs: job {job} graded \(student \S+, sequences-and-attention\) in [0-9.]+ s", said
        )


def test_a_locked_out_student_is_unlocked_by_the_command(site):
    from axes.models import AccessAttempt

    from gradebook.database import close_database, open_database

    alias, _ = open_database(site.course / ".gradewright" / "gradebook.db")
    try:  # ten failed sign-ins from here, as axes records them: the pair is locked
        AccessAttempt.objects.using(alias).create(
            username="student",
            ip_address="127.0.0.1",
            user_agent="",
            http_accept="",
            path_info="/api/v1/token",
            get_data="",
            post_data="",
            failures_since_start=10,
        )
    finally:
        close_database(alias)
    right = {"username": "student", "password": site.passwords["student"]}
    assert httpx.post(f"{site.url}/api/v1/token", data=right, timeout=60).status_code == 429
    unlocked = autograder("--course", site.course, "accounts", "unlock", "student", env=site.env)
    assert unlocked.returncode == 0 and unlocked.stdout == "student: unlocked (1 record of failed sign-ins forgotten)\n"
    assert httpx.post(f"{site.url}/api/v1/token", data=right, timeout=60).status_code == 201
