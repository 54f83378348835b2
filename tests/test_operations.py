"""Running the site in production (issue #37, part A), through the real ``autograder serve``: its log
(a request's fault with its traceback, jobs' outcomes, sign-in refusals, nothing expected with a
traceback), /healthz, /readyz and the Prometheus metrics scraped while jobs run, the operator's
commands (``manage``, our system checks, ``accounts unlock``, the default gradebook), a port in use,
and the site as a hub's service."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .conftest import ROOT
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
        r"^\S+ \S+ ERROR django\.request: Internal Server Error: (\S+)\n(.*?)(?=^\d{4}-|\Z)", said, re.M | re.S
    )
    assert [path for path, _ in errors] == ["/api/v1/submissions", "/assignments/sequences-and-attention/"], said
    for _, traceback in errors:
        assert traceback.startswith("Traceback (most recent call last)") and "Error" in traceback.splitlines()[-1]
    not_found = re.search(r"^.* WARNING django\.request: Not Found: /no-such-page\n(.*)", said, re.M | re.S)
    assert not_found and not not_found.group(1).startswith("Traceback"), said
    assert said.count("Traceback") == 2, said  # the faults' alone: no refusal or 404 has one


def test_probes_and_metrics_while_jobs_run(site):
    assert httpx.get(f"{site.url}/healthz", timeout=30).text == "ok\n"
    deadline = time.monotonic() + 120
    while (ready := httpx.get(f"{site.url}/readyz", timeout=30)).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.5)  # the worker says it is alive once it has started
    facts = ready.json()
    assert ready.status_code == 200 and facts["database"] == "ok" and facts["migrations"] == "ok", facts
    assert facts["workers_alive"] >= 1
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
        _metric(after, "gradewright_job_latency_seconds_count")
        == _metric(before, "gradewright_job_latency_seconds_count") + 2
    )
    assert _metric(after, "gradewright_job_latency_seconds_bucket", le="+Inf") >= 2
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


def test_the_operators_commands_reach_django_and_our_checks(site, tmp_path):
    shown = autograder("--course", site.course, "manage", "showmigrations", "service", env=site.env)
    assert shown.returncode == 0 and "[X] 0015_worker_seen" in shown.stdout, shown.stderr
    checked = autograder(
        "--course", site.course, "manage", "check", "--deploy", env={**site.env, "GRADEWRIGHT_HTTPS": "1"}
    )
    assert checked.returncode == 0, checked.stderr
    assert "gradewright.W001" in checked.stderr and "GRADEWRIGHT_ALLOWED_HOSTS" in checked.stderr
    assert "gradewright.W003" not in checked.stderr  # the site's worker is alive
    key = site.course / ".gradewright" / "secret_key"
    key.chmod(0o644)
    try:
        checked = autograder("--course", site.course, "manage", "check", env=site.env)
    finally:
        key.chmod(0o600)
    assert checked.returncode == 1 and "gradewright.E002" in checked.stderr and "chmod 600" in checked.stderr


def test_a_locked_out_student_is_unlocked_by_the_command(site):
    for _ in range(10):
        httpx.post(f"{site.url}/api/v1/token", data={"username": "student", "password": "wrong"}, timeout=30)
    right = {"username": "student", "password": site.passwords["student"]}
    assert httpx.post(f"{site.url}/api/v1/token", data=right, timeout=30).status_code == 429
    unlocked = autograder("--course", site.course, "accounts", "unlock", "student", env=site.env)
    assert unlocked.returncode == 0 and unlocked.stdout.startswith("student: unlocked ("), unlocked.stderr
    assert httpx.post(f"{site.url}/api/v1/token", data=right, timeout=30).status_code == 201
    nobody = autograder("--course", site.course, "accounts", "unlock", "nobody", env=site.env)
    assert nobody.returncode == 2 and nobody.stderr.startswith("autograder: no account named 'nobody'")


def test_a_port_held_by_the_sites_own_orphan_says_so_and_a_hub_gets_no_demo_accounts(site, tmp_path):
    port = site.url.rsplit(":", 1)[1]
    again = autograder("--course", site.course, "serve", "--port", port, "--workers", "0", env=site.env)
    pid = (site.course / ".gradewright" / "serve.pid").read_text().split()[0]
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"autograder: port {port} is held by this course's own earlier site (process {pid}), still running after "
        f"what started it stopped; stop it with `kill {pid}` and start again"
    ], again.stderr
    # A new course started by a hub, on a port another program holds: no demo accounts, one line.
    hub = {
        "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api",
        "JUPYTERHUB_API_TOKEN": "x",
        "JUPYTERHUB_CLIENT_ID": "service-g",
    }
    fresh = course_copy(tmp_path)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = str(held.getsockname()[1])
        started = autograder("--course", fresh, "serve", "--port", taken, "--workers", "0", env={**site.env, **hub})
    assert started.returncode == 2
    assert "started by JupyterHub: no demo accounts" in started.stdout
    assert not [line for line in started.stdout.splitlines() if line.startswith("demo ")]
    assert started.stderr.strip().splitlines() == [
        f"autograder: port {taken} on 127.0.0.1 is in use by another program; stop it, or serve on another port with --port"
    ]
    listed = autograder("--course", fresh, "accounts", "list", env=site.env)
    assert listed.returncode == 0 and "0 accounts" in listed.stdout, listed.stdout


def test_roster_import_in_a_course_folder_writes_the_courses_gradebook(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    env = commands_env(tmp_path)
    imported = autograder("roster", "import", ROOT / "docs" / "walkthrough" / "roster.csv", env=env, cwd=course)
    assert imported.returncode == 0, imported.stderr
    assert not (course / "gradebook.db").exists()
    gradebook = course / ".gradewright" / "gradebook.db"
    assert gradebook.is_file() and (gradebook.parent.stat().st_mode & 0o777) == 0o700
    with sqlite3.connect(gradebook) as database:
        assert database.execute("SELECT count(*) FROM gradebook_student").fetchone()[0] > 0


def test_the_log_is_json_on_request_with_the_jobs_fields():
    from service.logs import ExpectedWithoutTraceback, json_formatter

    record = logging.LogRecord("gradewright.jobs", logging.INFO, __file__, 1, "job %s graded", (7,), None)
    record.__dict__.update(job_id=7, student="s1", duration_seconds=1.5, request=object())
    line = json.loads(json_formatter().format(record))
    assert line["message"] == "job 7 graded" and line["logger"] == "gradewright.jobs" and line["level"] == "INFO"
    assert (line["job_id"], line["student"], line["duration_seconds"]) == (7, "s1", 1.5) and "request" not in line
    try:
        raise PermissionError("refused")
    except PermissionError:
        import sys

        refusal = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden", (), sys.exc_info())
    refusal.status_code = 403
    assert ExpectedWithoutTraceback().filter(refusal) and refusal.exc_info is None


def test_every_variable_read_is_listed_and_an_old_name_still_works_with_a_warning(caplog):
    from autograder import environment

    assert environment.read("GRADEWRIGHT_GRADEBOOK_WAIT", {}) == "30"
    assert (
        environment.read("GRADEWRIGHT_DATABASE_URL", {"GRADEWRIGHT_DATABASE_URL": "postgresql://a/b"})
        == "postgresql://a/b"
    )
    environment._warned.discard("AUTOGRADER_ZYGOTE")
    with caplog.at_level(logging.WARNING, "gradewright.settings"):
        assert environment.read("GRADEWRIGHT_ZYGOTE", {"AUTOGRADER_ZYGOTE": "off"}) == "off"
        assert environment.read("GRADEWRIGHT_ZYGOTE", {"AUTOGRADER_ZYGOTE": "off"}) == "off"
    assert [r.getMessage() for r in caplog.records] == [
        "$AUTOGRADER_ZYGOTE is read as $GRADEWRIGHT_ZYGOTE; rename it (the old name will stop working)"
    ]
    names = {setting.name for setting in environment.SETTINGS}
    assert all(
        name.startswith("GRADEWRIGHT_") for name in names if not name.startswith(("JUPYTERHUB_", "JPY_", "DASK_"))
    )
    assert all(setting.description and setting.used_by for setting in environment.SETTINGS)
    # Every GRADEWRIGHT_ name the code mentions is one of them (the settings Django keeps aside).
    mentioned = set()
    for package in ("autograder", "course", "gradebook", "service", "commands", "gradewright", "untrusted"):
        for path in (ROOT / package).rglob("*.py"):
            mentioned |= set(re.findall(r"\bGRADEWRIGHT_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    django_settings = {
        "GRADEWRIGHT_COURSE",
        "GRADEWRIGHT_STATE",
        "GRADEWRIGHT_DEMO",
        "GRADEWRIGHT_HUB",
        "GRADEWRIGHT_ADDRESS_FAILURE_LIMIT",
    }
    assert mentioned - django_settings - {"GRADEWRIGHT_TEST_POSTGRES"} <= names, sorted(
        mentioned - django_settings - names
    )
    assert os.environ.get("GRADEWRIGHT_REFERENCE_CACHE")  # the tests' own, read through environment.read
