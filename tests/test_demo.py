"""`autograder serve --demo`: the demo course seeded through the real command (a dozen students' known
submissions graded in the sandbox), every staff page showing it in a real browser, the demo students
signing in to their feedback, and the course's own gradebook untouched: `serve` alone seeds nothing."""

from __future__ import annotations

import os
import queue
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ASSIGNMENTS, LESSON_DATA, ROOT, needs_sandbox
from .served import free_port

pytestmark = pytest.mark.timeout(900)

CHROMIUM = shutil.which("chromium")
SEEDING_WAIT = 600  # seconds: a dozen students' grading on a busy machine of two cores
DEMO_STUDENT, OTHER_STUDENT = "ada", "ben"


class Served:
    """`autograder serve` started here, its lines read as they come (a thread), until it listens."""

    def __init__(self, course: Path, *options: str, env: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "autograder",
                "--course",
                str(course),
                "serve",
                "--port",
                str(self.port),
                "--workers",
                "0",
                *options,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_until_serving(self, seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        while not any(line.startswith("serving ") for line in self.lines):
            try:
                line = self._queue.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = ""
            if line is None:
                pytest.fail(f"`autograder serve` ended before serving: {self.lines}")
            if line:
                self.lines.append(line)
            assert time.monotonic() < deadline, f"`autograder serve` never said it was serving: {self.lines}"
        while True:  # the line comes just before waitress listens
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self.lines
            except OSError:
                assert time.monotonic() < deadline, "the site never started listening"
                time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _counts(gradebook: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True) as connection:
        return {
            table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("auth_user", "gradebook_student", "gradebook_submission", "gradebook_mark", "service_job")
        }


def _passwords(lines: list[str]) -> dict[str, str]:
    """{username: password} from the "demo ...: a, b / password" lines."""
    found = {}
    for line in lines:
        if line.startswith("demo ") and " / " in line and ": " in line:
            names, password = line.split(": ", 1)[1].rsplit(" / ", 1)
            found |= {name: password for name in names.split(", ")}
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[dict]:
    """The shipped course copied, served once as itself (the real course: two accounts, no grades),
    then with --demo: (address, passwords, lines said, the course copy, the real gradebook's counts)."""
    home = tmp_path_factory.mktemp("demo")
    course = home / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(LESSON_DATA, course / "lesson_data")
    shutil.copytree(ASSIGNMENTS, course / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("GRADEWRIGHT_DATABASE_URL", None)
    real = Served(course, env=env)
    try:
        said = real.wait_until_serving(120)
        assert said[0].startswith("demo instructor: instructor / "), said
        import urllib.request

        with urllib.request.urlopen(f"{real.url}/accounts/login/", timeout=30) as answer:
            assert "Demo course" not in answer.read().decode()
    finally:
        real.stop()
    real_gradebook = course / ".gradewright" / "gradebook.db"
    before = _counts(real_gradebook)
    assert before["auth_user"] == 2 and before["gradebook_submission"] == 0, before
    # The demo never uses the course's database: a database that does not exist is named, and left alone.
    demo_env = {**env, "GRADEWRIGHT_DATABASE_URL": "postgresql://nobody:nothing@127.0.0.1:1/nowhere"}
    served = Served(course, "--demo", env=demo_env)
    try:
        lines = served.wait_until_serving(SEEDING_WAIT)
        yield {
            "url": served.url,
            "passwords": _passwords(lines),
            "lines": lines,
            "course": course,
            "env": demo_env,
            "real_gradebook": real_gradebook,
            "before": before,
        }
    finally:
        served.stop()


@needs_sandbox  # the demo's seeding grades in the sandbox
@pytest.mark.slow
def test_the_demo_is_seeded_apart_from_the_course_and_says_its_accounts(demo):
    lines, passwords = demo["lines"], demo["passwords"]
    assert any("$GRADEWRIGHT_DATABASE_URL is not used" in line for line in lines), lines
    assert any(line.startswith("demo course made in ") for line in lines), lines
    assert {"instructor", "ta", DEMO_STUDENT, OTHER_STUDENT} <= set(passwords) and len(passwords) >= 12, lines
    folder = demo["course"] / ".gradewright" / "demo"
    assert (folder / "DEMO.txt").is_file()
    counts = _counts(folder / ".gradewright" / "gradebook.db")
    assert counts["gradebook_student"] == 12 and counts["gradebook_submission"] >= 24, counts
    assert counts["service_job"] == counts["gradebook_submission"] and counts["gradebook_mark"] >= 2, counts
    # The course's own gradebook is as `serve` left it: its two accounts, no student, no grade.
    assert _counts(demo["real_gradebook"]) == demo["before"]
    # The course's own manifests are untouched (the demo's copies have the due times).
    assert "due = " not in (demo["course"] / "assignments" / "sequences-and-attention" / "assignment.toml").read_text()
    assert "due = " in (folder / "assignments" / "sequences-and-attention" / "assignment.toml").read_text()


def _when(text: str):
    """A time as SQLite keeps Django's (UTC, naive)."""
    from datetime import UTC, datetime

    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@needs_sandbox  # the demo's seeding grades in the sandbox
@pytest.mark.slow
def test_the_demo_tells_a_true_story_of_its_late_hand_ins_and_its_accounts(demo):
    """Only the hand-ins the demo designates late are late, by hours, never days; the extended one is
    within its extension; each job says its hand-in's time; and every account the walk-through
    (docs/tutorials/try-it.md, which the README sends a newcomer to) names is one the demo has, with
    the role it says."""
    import re
    from datetime import timedelta

    from autograder.assignment import course_assignment
    from autograder.lateness import extended_due
    from course.folder import read_course
    from service.demo import EXTENDED, LATE, ROSTER

    folder = demo["course"] / ".gradewright" / "demo"
    course = read_course(folder / "course.toml")
    dues = {name: course_assignment(course, name).due for name in course.assignment_folders}
    username = {student_id: user for student_id, _, user in ROSTER}
    with sqlite3.connect(f"file:{folder / '.gradewright' / 'gradebook.db'}?mode=ro", uri=True) as connection:
        handed = connection.execute(
            "SELECT a.name, st.student_id, s.submitted_at, j.created_at FROM gradebook_submission s"
            " JOIN gradebook_assignment a ON a.id = s.assignment_id JOIN gradebook_student st ON st.id = s.student_id"
            " JOIN service_job j ON j.submission_id = s.id ORDER BY s.submitted_at"
        ).fetchall()
        extensions = dict(
            ((name, username[student_id]), _when(until))
            for name, student_id, until in connection.execute(
                "SELECT a.name, st.student_id, e.until FROM gradebook_extension e"
                " JOIN gradebook_assignment a ON a.id = e.assignment_id JOIN gradebook_student st ON st.id = e.student_id"
            )
        )
        roles = dict(
            connection.execute("SELECT u.username, m.role FROM service_member m JOIN auth_user u ON u.id = m.user_id")
        )
    latest = {}
    for name, student_id, submitted, created in handed:
        assert _when(created) == _when(submitted), (name, student_id)  # the job's time is its hand-in's
        latest[(name, username[student_id])] = _when(submitted)
    late = {key: when - dues[key[0]] for key, when in latest.items() if when > dues[key[0]]}
    assert set(late) == LATE, late
    assert all(timedelta(hours=1) < by < timedelta(days=1) for by in late.values()), late
    assert extensions.keys() == {EXTENDED} and latest[EXTENDED] <= extended_due(dues[EXTENDED[0]], extensions[EXTENDED])
    after_due = [(name, student_id) for name, student_id, submitted, _ in handed if _when(submitted) > dues[name]]
    assert len(after_due) == len(LATE)  # only a designated latest hand-in is after the due time

    said = {"instructor": "instructor", "teaching assistant": "ta", "students": "student"}
    walk = (ROOT / "docs" / "tutorials" / "try-it.md").read_text(encoding="utf-8")
    listed = re.findall(r"^demo (instructor|teaching assistant|students): ([a-z, ]+) / <password>$", walk, re.M)
    assert len(listed) == 3, listed
    for role, names in listed:
        for name in names.split(", "):
            assert roles.get(name) == said[role] and name in demo["passwords"], (role, name)
    signed_in = re.findall(r"[Ss]ign in as `([a-z]+)`", walk)
    assert signed_in and all(name in roles and name in demo["passwords"] for name in signed_in), signed_in
    assert roles["instructor"] == "instructor" and roles[DEMO_STUDENT] == "student"
    # The time the log announces for seeding is the one the walk-through gives (benchmarks/demo_seeding.py).
    seeding = next(line for line in demo["lines"] if line.startswith("seeding the demo course"))
    announced = re.search(r"\(([^()]*), once\)$", seeding)
    assert announced and f"({announced.group(1)}:" in walk, seeding


STAFF_PAGES = {
    # address: what the page must show of the demo
    "/staff/gradebook/": ["sequences-and-attention", "attention-not-explanation"],
    "/staff/gradebook/sequences-and-attention/": ["Ada Okafor", "Liam Walsh"],
    "/staff/gradebook/attention-not-explanation/": ["Kemi Adeyemi", "-0.4"],  # Liam's late penalty
    "/staff/statistics/sequences-and-attention/": ["<img"],
    "/staff/marking/attention-not-explanation/": ["written"],
    "/staff/reviews/": ["s2605", "explanation"],  # elena's open request
    "/staff/similarity/sequences-and-attention/": ["s2601", "s2607"],
    "/staff/roster/": ["Grace Mensah", "s2612"],
    "/staff/exports/": ["sequences-and-attention"],
    "/staff/platforms/": ["Canvas (demo)"],
    "/staff/exams/": ["midterm", "No answer was given.", "(not marked)"],  # ada and chloe left theirs blank
    "/staff/online-exams/midterm/": ["s2601", "(submitted)", "(in progress)"],
    "/staff/students/s2601/": ["s2601", "attention-not-explanation", "sequences-and-attention"],
}


def _launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])


def _sign_in(browser, url: str, username: str, password: str):
    page = browser.new_context().new_page()
    page.goto(f"{url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{url}/assignments/")
    return page


@needs_sandbox  # the demo's seeding grades in the sandbox
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_every_staff_page_shows_the_living_demo_course(demo):
    from playwright.sync_api import sync_playwright

    url, passwords = demo["url"], demo["passwords"]
    with sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            staff = _sign_in(browser, url, "instructor", passwords["instructor"])
            for address, shown in STAFF_PAGES.items():
                answer = staff.goto(url + address)
                assert answer is not None and answer.status == 200, address
                html = staff.content()
                assert "Demo course" in html, address
                assert "No student matches" not in html, address
                for text in shown:
                    assert text in html, f"{address}: no {text!r}"
            # The marking page has answers waiting and answers marked.
            staff.goto(f"{url}/staff/marking/attention-not-explanation/")
            # The written question: 12 answers, 8 to mark (the TA marked three; farid wrote none: empty).
            row = staff.locator("tr:has(a[href*='/written/'])").first.inner_text()
            assert "12" in row and "8" in row, row
            assert "1 answer is empty" in staff.content() and "Give the 1 empty answer 0" in staff.content()
            # The TA signs in too, and sees the gradebook.
            ta = _sign_in(browser, url, "ta", passwords["ta"])
            ta.goto(f"{url}/staff/gradebook/sequences-and-attention/")
            assert "Ada Okafor" in ta.content()
        finally:
            browser.close()


@needs_sandbox  # the demo's seeding grades in the sandbox
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here (.ci/run installs it)")
def test_a_demo_student_signs_in_to_their_feedback_and_no_one_elses(demo):
    from playwright.sync_api import sync_playwright

    url, passwords = demo["url"], demo["passwords"]
    with sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            ada = _sign_in(browser, url, DEMO_STUDENT, passwords[DEMO_STUDENT])
            assert "Demo course" in ada.content()
            ada.click("a[href='/assignments/sequences-and-attention/']")
            ada.locator("a[href^='/submissions/']").first.click()
            feedback = ada.content()
            assert "softmax" in feedback and "passed" in feedback and "Demo course" in feedback
            mine = ada.url
            ben = _sign_in(browser, url, OTHER_STUDENT, passwords[OTHER_STUDENT])
            refused = ben.goto(mine)
            assert refused is not None and refused.status in {403, 404}
            anonymous = browser.new_context().new_page()
            anonymous.goto(mine)
            assert "/accounts/login/" in anonymous.url
        finally:
            browser.close()


@needs_sandbox  # the demo's seeding grades in the sandbox
@pytest.mark.slow
def test_a_second_demo_start_reuses_the_demo_and_its_accounts(demo):
    """Run last in the module (the fixture's server is stopped by then or still serving: either way
    the demo folder is the same)."""
    again = Served(demo["course"], "--demo", env=demo["env"])
    try:
        lines = again.wait_until_serving(120)
    finally:
        again.stop()
    assert any(line.startswith("demo course reused in ") for line in lines), lines
    assert not any(line.startswith("seeding ") for line in lines), lines
    assert _passwords(lines) == demo["passwords"]
    assert _counts(demo["real_gradebook"]) == demo["before"]


# The demo's course folder, and the command's refusals: no sandbox, no server.


def test_the_demo_folder_is_a_course_of_its_own_with_due_times(tmp_path):
    from datetime import UTC, datetime

    from autograder.assignment import course_assignment
    from course.folder import find_course, read_course
    from service.demo import _copy_course

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    course = find_course(ROOT)
    folder = tmp_path / "demo"
    dues = _copy_course(course, folder, now)
    copied = read_course(folder / "course.toml")
    assert copied.title == f"{course.title} (demo)"
    assert list(copied.assignment_folders) == list(course.assignment_folders)
    for name in course.assignment_folders:
        spec = course_assignment(copied, name)
        assert spec.due == dues[name] < now and spec.late_penalty == "10% per day"
        assert spec.folder.resolve().is_relative_to(folder.resolve())  # its own copy, references included
        assert all(
            path.is_file() and path.resolve().is_relative_to(folder.resolve()) for path in spec.reference_paths.values()
        )
        assert [q.id for q in spec.questions] == [q.id for q in course_assignment(course, name).questions]
    assert copied.lesson_folders == [path.resolve() for path in course.lesson_folders]
    assert (folder / "DEMO.txt").is_file()


def test_a_manifests_own_due_time_and_policy_give_way_to_the_demos():
    import tomllib
    from datetime import UTC, datetime

    from service.demo import _with_due

    manifest = 'name = "x"\ndue = 2020-01-01T00:00:00+00:00\nlate_penalty = "1% per hour"\n\n[limits]\ndue = 3\n'
    rewritten = tomllib.loads(_with_due(manifest, datetime(2026, 11, 30, tzinfo=UTC)))
    assert rewritten["due"] == datetime(2026, 11, 30, tzinfo=UTC) and rewritten["late_penalty"] == "10% per day"
    assert rewritten["name"] == "x" and rewritten["limits"] == {"due": 3}  # a table's own keys are left alone


def test_the_demo_refuses_a_database_url_in_one_line(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(ROOT),
            "serve",
            "--demo",
            "--database-url",
            "postgresql://nobody@127.0.0.1:1/nowhere",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "autograder: --demo keeps its own gradebook in the demo's folder; leave out --database-url"
    )
