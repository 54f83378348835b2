"""The submission page, live: its live part (the same page's ``?part=live``, asked for again by htmx
until the job has finished) refused to exactly whom the page is refused; the page's update in a
real browser, without a reload and within the strict Content-Security-Policy; a waiting worker
woken by the hand-in itself (PostgreSQL's NOTIFY, SQLite's data version), not by its slow look at
the queue; and each job's times, kept for the staff and never shown to another student."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from gradebook.models import Student
from service.accounts.models import Member
from service.core.access import assignments, state, student_of
from service.handin import live
from service.handin.models import Job
from service.handin.uploads import store

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .postgres import fresh_database, needs_postgres
from .served import free_port

PARTIAL = ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"
CORRECT = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_loops.py"
PASSWORD = "a long password 123"
CHROMIUM = shutil.which("chromium")
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="Debian's chromium is not installed here (.ci/run installs it)",
)


def member(role: str = Member.STUDENT) -> tuple[User, Client]:
    """A new account of the course, signed in on a client that enforces CSRF as a browser does."""
    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name)
    row = Student.objects.create(student_id=name, name=name.title(), on_roster=True) if role == Member.STUDENT else None
    Member.objects.create(user=user, role=role, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return user, client


def queued_job(user: User) -> Job:
    """A hand-in of the user's, queued as the page queues it (the upload's own checks and limits)."""
    spec = assignments()["sequences-and-attention"]
    return store(state(), student_of(user), spec, PARTIAL.name, PARTIAL.read_bytes())


@pytest.mark.usefixtures("empty_queue")
def test_the_live_part_is_refused_to_another_student_and_to_anonymous_users_as_the_page_is(monkeypatch):
    monkeypatch.setattr(live, "HOLD", 0.0)  # no worker here: a request for the queued job is not held
    alice, as_alice = member()
    _, as_bob = member()
    _, as_ta = member(Member.TA)
    job = queued_job(alice)
    outsider = Client()
    outsider.force_login(User.objects.create_user(f"o{uuid.uuid4().hex[:8]}"))  # an account, not a member
    page = f"/submissions/{job.id}/"
    for url in (page, page + "?part=live"):
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/"), url
        assert as_bob.get(url).status_code == 404, url
        assert outsider.get(url).status_code == 404, url
        assert as_alice.get(url).status_code == 200, url
        assert as_ta.get(url).status_code == 200, url
    # A job that does not exist answers as another's does: ids reveal nothing.
    assert as_bob.get(f"/submissions/{job.id + 10_000}/?part=live").status_code == 404

    whole, part = (as_alice.get(url).content.decode() for url in (page, page + "?part=live"))
    assert "<html" in whole and "<html" not in part and "<h1>" not in part
    # The live part inside the page, and alone, alike: asking again while the job is queued (how
    # soon depends on the job's age: the next test).
    asking = re.compile(
        f'<div id="live" hx-get="{page}\\?part=live" hx-trigger="every (200ms|2s)" hx-swap="outerHTML">'
    )
    assert len(asking.findall(whole)) == 1 and len(asking.findall(part)) == 1
    assert 'data-state="queued"' in part and PARTIAL.name in whole
    # htmx from the site's own static files, configured to add no style and evaluate nothing.
    assert '<script src="/static/vendor/htmx.org/htmx.min.js" defer></script>' in whole
    assert '"includeIndicatorStyles": false' in whole and '"allowEval": false' in whole
    htmx = as_alice.get("/static/vendor/htmx.org/htmx.min.js")
    assert htmx.status_code == 200 and b"htmx" in b"".join(htmx.streaming_content)


@pytest.mark.usefixtures("empty_queue")
def test_the_live_part_stops_asking_once_the_job_has_finished_and_its_first_showing_is_kept():
    alice, as_alice = member()
    _, as_bob = member()
    instructor, as_instructor = member(Member.INSTRUCTOR)
    job = queued_job(alice)
    Job.objects.filter(id=job.id).update(state=Job.FAILED, finished_at=timezone.now(), error="the grader broke")
    live_part = f"/submissions/{job.id}/?part=live"

    # Neither the staff's look nor another student's refused one is the student's first sight of it.
    staff_sees = as_instructor.get(live_part).content.decode()
    assert "Where the time went" in staff_sees and "hx-trigger" not in staff_sees
    assert as_bob.get(live_part).status_code == 404 and as_bob.get(f"/api/v1/submissions/{job.id}").status_code == 404
    assert Job.objects.get(id=job.id).shown_at is None

    shown = as_alice.get(live_part).content.decode()
    assert "hx-trigger" not in shown and "hx-get" not in shown  # finished: the page asks no more
    assert "The grader could not grade this submission" in shown
    assert "Where the time went" not in shown  # the job's times are the staff's
    first = Job.objects.get(id=job.id).shown_at
    assert first is not None and job.created_at <= first <= timezone.now()
    as_alice.get(f"/submissions/{job.id}/")
    assert Job.objects.get(id=job.id).shown_at == first  # the first time only

    # The API: the times for the staff, to the millisecond, and none in the student's answer.
    for_staff = as_instructor.get(f"/api/v1/submissions/{job.id}").json()
    times = for_staff["times"]
    assert times["shown"] == first.isoformat(timespec="milliseconds")
    assert times["received"] is not None and times["queued"] == job.created_at.isoformat(timespec="milliseconds")
    assert times["claimed"] is None and times["seconds"]["queued->claimed"] is None
    assert times["seconds"]["received->queued"] >= 0
    assert "times" not in as_alice.get(f"/api/v1/submissions/{job.id}").json()
    # An instructor's own try is theirs: shown to them, it is kept as shown.
    own = queued_job(instructor)
    Job.objects.filter(id=own.id).update(state=Job.FAILED, finished_at=timezone.now())
    as_instructor.get(f"/api/v1/submissions/{own.id}")
    assert Job.objects.get(id=own.id).shown_at is not None


def test_the_live_part_asks_often_while_the_feedback_is_due_and_seldom_once_it_waits_long():
    now = timezone.now()
    queued = Job(state=Job.QUEUED, created_at=now - timedelta(seconds=1))
    assert live.poll_every(queued, now) == "200ms"
    queued.created_at = now - timedelta(seconds=30)  # behind others in a queue: the site is spared
    assert live.poll_every(queued, now) == "2s"
    grading = Job(state=Job.GRADING, created_at=now - timedelta(minutes=5), claimed_at=now - timedelta(seconds=1))
    assert live.poll_every(grading, now) == "200ms"  # claimed at last: the feedback is due
    grading.claimed_at = now - timedelta(minutes=2)
    assert live.poll_every(grading, now) == "2s"
    for ended in (Job.GRADED, Job.FAILED):
        assert live.poll_every(Job(state=ended, created_at=now), now) is None


# A served course: `autograder serve --workers 0`, and a worker started apart from it, its slow look
# at the queue every 600 s (longer than any test here may take), so a job it grades was woken for.
@dataclass
class Served:
    url: str
    alias: str  # this process's Django alias for the served database
    course: Path
    database: str  # "sqlite" or "postgres"
    home: Path
    database_url: str | None
    workers: list[subprocess.Popen] = field(default_factory=list)

    def start_worker(self) -> Path:
        """The worker (started once): its output's file."""
        log = self.home / "worker.log"
        if not self.workers:
            command = [
                sys.executable,
                "-m",
                "autograder",
                "--course",
                str(self.course),
                "worker",
                *(["--database-url", self.database_url] if self.database_url else []),
            ]
            env = {**_environment(), "GRADEWRIGHT_WORKER_POLL": "600"}
            with log.open("w") as output:
                self.workers.append(subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env))
        return log

    def waiting_worker(self) -> None:
        """The worker started, and waiting for hand-ins (its line that says so, said once it has
        looked at the queue and found nothing)."""
        log = self.start_worker()
        _wait_for(
            lambda: "waiting for hand-ins" in log.read_text(),
            "the worker to wait for hand-ins",
            180,
            self.workers[0],
            log,
        )


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_DATABASE_URL"}


def _wait_for(done, what: str, seconds: float, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return
        if process.poll() is not None:
            pytest.fail(f"the process ended ({process.returncode}) before {what}:\n{log.read_text()}")
        time.sleep(0.1)
    pytest.fail(f"no {what} within {seconds:.0f} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def served(request, tmp_path_factory) -> Iterator[Served]:
    from gradebook.database import close_database, open_database

    home = tmp_path_factory.mktemp(f"live-{request.param}")
    course = home / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    shutil.copytree(ASSIGNMENTS, course / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    alias = ""
    with fresh_database() if request.param == "postgres" else nullcontext() as url:  # SQLite: the course's own file
        port, log = free_port(), home / "serve.log"
        command = [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(course),
            "serve",
            "--port",
            str(port),
            "--workers",
            "0",
            *(["--database-url", url] if url else []),
        ]
        with log.open("w") as output:
            server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=_environment())
        site = Served(f"http://127.0.0.1:{port}", "", course, request.param, home, url)
        try:
            _wait_for(lambda: "serving " in log.read_text(), "serving line", 120, server, log)
            _wait_for(lambda: _answers(site.url), "answer from the site", 60, server, log)
            alias, _ = open_database(course / ".gradewright" / "gradebook.db", url)  # migrated by the service
            site.alias = alias
            yield site
        finally:
            for process in [*site.workers, server]:
                _stop(process)
            if alias:
                close_database(alias)


def _answers(url: str) -> bool:
    try:
        httpx.get(url + "/accounts/login/", timeout=5)
        return True
    except httpx.TransportError:
        return False


def _account(served: Served, role: str = Member.STUDENT) -> tuple[str, str]:
    """A new account in the served database: (its username, an API token)."""
    from service.accounts.models import ApiToken, digest

    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.db_manager(served.alias).create_user(name, password=PASSWORD)
    row = None
    if role == Member.STUDENT:
        row = Student.objects.using(served.alias).create(student_id=name, name=name.title(), on_roster=True)
    Member.objects.using(served.alias).create(user=user, role=role, student=row)
    token = uuid.uuid4().hex
    ApiToken.objects.using(served.alias).create(user=user, digest=digest(token))
    return name, token


def _job(served: Served, job_id: int) -> Job:
    return Job.objects.using(served.alias).get(id=job_id)


@needs_sandbox
@needs_browser
@pytest.mark.slow
def test_the_submission_page_shows_the_feedback_when_it_comes_without_a_reload(served):
    """No worker yet: the page shows the hand-in queued; then a worker starts, grades it, and the page
    shows the feedback by itself: the same document (a mark left in it survives), nothing refused by
    the policy, nothing fetched from anywhere but the site."""
    from playwright.sync_api import expect, sync_playwright

    name, _ = _account(served)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page()
            refused, elsewhere = [], []
            page.on(
                "console",
                lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
            )
            page.on("request", lambda asked: None if asked.url.startswith(served.url) else elsewhere.append(asked.url))
            page.goto(served.url + "/accounts/login/")
            page.fill("input[name=username]", name)
            page.fill("input[name=password]", PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.goto(served.url + "/assignments/sequences-and-attention/")
            page.set_input_files("input[name=notebook]", str(PARTIAL))
            page.get_by_role("button", name="Hand in").click()
            expect(page.locator("#state")).to_have_text("queued")
            job_id = int(re.search(r"/submissions/(\d+)/", page.url).group(1))
            page.evaluate("window.gradewrightMark = 'the same document'")

            served.start_worker()
            expect(page.locator("text=Score: 7.38 / 10")).to_be_visible(timeout=180_000)  # rounded on the page
            expect(page.locator("#state")).to_have_text("graded")
            assert page.evaluate("window.gradewrightMark") == "the same document"  # updated, not reloaded
            assert page.locator("td.partial").first.is_visible()
            failing = page.locator("td[data-label=Feedback] ul.failing-checks li")  # the feedback's folded list
            expect(failing.first).to_contain_text("Wrong values in the weights")
            assert refused == [] and elsewhere == []
            assert page.locator("#live[hx-get]").count() == 0  # finished: it asks no more
        finally:
            browser.close()
    # (Django's database calls, after Playwright's event loop: it refuses them inside it.)
    assert _job(served, job_id).shown_at is not None  # the live part's answer showed it


@needs_sandbox
@pytest.mark.slow
def test_a_waiting_worker_is_woken_by_the_hand_in_not_by_its_slow_look_at_the_queue(served):
    """The worker looks at the queue by itself only every 600 s; a hand-in is graded at once all the
    same, and the job says what woke the worker that claimed it: PostgreSQL's notification, or on
    SQLite the change of the database's data version. Its times are in order, for the staff."""
    served.waiting_worker()
    _, token = _account(served)
    _, staff_token = _account(served, Member.TA)
    answer = httpx.post(
        f"{served.url}/api/v1/submissions",
        headers={"Authorization": f"Token {token}"},
        data={"assignment": "sequences-and-attention"},
        files={"file": (CORRECT.name, CORRECT.read_bytes())},
        timeout=120,
    )
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    log = served.home / "worker.log"
    _wait_for(
        lambda: _job(served, job_id).state in {Job.GRADED, Job.FAILED},
        "grade of the hand-in",
        300,
        served.workers[0],
        log,
    )
    job = _job(served, job_id)
    assert job.state == Job.GRADED, job.error
    assert job.woken_by == ("notification" if served.database == "postgres" else "change")
    assert job.received_at <= job.created_at <= job.claimed_at <= job.started_at <= job.finished_at
    assert job.shown_at is None  # not looked at yet
    seen = httpx.get(f"{served.url}/api/v1/submissions/{job_id}", headers={"Authorization": f"Token {token}"})
    assert seen.json()["state"] == "graded" and "times" not in seen.json()
    staff = httpx.get(f"{served.url}/api/v1/submissions/{job_id}", headers={"Authorization": f"Token {staff_token}"})
    times = staff.json()["times"]
    assert times["woken_by"] == job.woken_by and times["shown"] is not None
    assert all(times["seconds"][step] >= 0 for step in times["seconds"])


@pytest.mark.usefixtures("empty_queue")
def test_the_live_part_of_a_job_whose_feedback_is_due_answers_when_it_has_finished(monkeypatch):
    """Held while the feedback is due (a job being graded): the answer is the result, recorded
    meanwhile by a worker (here a thread that ends the job once the request is held), not the state
    the job had when asked."""
    import threading

    from django.db import connection

    monkeypatch.setattr(live, "HOLD", 600.0)  # longer than the test may take: the end, not the deadline, answers
    alice, as_alice = member()
    job = queued_job(alice)
    Job.objects.filter(id=job.id).update(state=Job.GRADING, claimed_at=timezone.now())
    ended = threading.Event()

    def worker() -> None:
        try:
            deadline = time.monotonic() + 120
            while live.HOLDING._value == 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            Job.objects.filter(id=job.id).update(state=Job.FAILED, finished_at=timezone.now())
            ended.set()
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=worker)
    thread.start()
    answer = as_alice.get(f"/submissions/{job.id}/?part=live").content.decode()
    thread.join(timeout=120)
    assert ended.is_set()
    assert 'data-state="failed"' in answer and "hx-get" not in answer
    assert live.HOLDING._value == 2


def test_the_served_htmx_is_the_version_package_json_names_with_its_licence():
    import json

    version = json.loads((ROOT / "package.json").read_text())["dependencies"]["htmx.org"]
    vendored = ROOT / "service" / "static" / "vendor" / "htmx.org"
    assert f'version:"{version}"' in (vendored / "htmx.min.js").read_text()
    assert "Zero-Clause BSD" in (vendored / "LICENSE").read_text()
    installed = ROOT / "node_modules" / "htmx.org" / "dist" / "htmx.min.js"
    if installed.is_file():  # where .ci/run installed npm's packages: the committed copy is npm's file
        assert installed.read_bytes() == (vendored / "htmx.min.js").read_bytes()
