"""The grading service: students hand in and read their own feedback, and nothing else.

Pages and API through Django's test client (CSRF enforced, as a browser meets it), jobs graded by
the real worker in the real sandbox, and the commands (`serve`, `login`, `submit`) end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from autograder.batch import GradeOptions
from gradebook.models import Extension, Student
from service.access import assignments, course, state
from service.models import Job, Member
from service.queue import MAX_ATTEMPTS, STALE_AFTER, claim
from service.settings import MAX_UPLOAD_BYTES
from service.uploads import allowance
from service.worker import run_worker

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

CORRECT = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_loops.py"
PARTIAL = ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"


def student(role: str = Member.STUDENT) -> tuple[User, Client]:
    """A new account of the course (a student on the roster, or staff), signed in on a client that
    enforces CSRF as a browser does."""
    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name, password="a long password 123")
    row = Student.objects.create(student_id=name, name=name.title(), on_roster=True)
    Member.objects.create(user=user, role=role, student=row if role == Member.STUDENT else None)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return user, client


def hand_in(client: Client, path: Path, assignment: str = "sequences-and-attention", name: str | None = None):
    page = client.get(f"/assignments/{assignment}/")
    assert page.status_code == 200
    with path.open("rb") as handle:
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile(name or path.name, handle.read())
        return client.post(
            f"/assignments/{assignment}/",
            {"notebook": upload, "csrfmiddlewaretoken": client.cookies["csrftoken"].value},
        )


def grade_queue() -> int:
    return run_worker(course(), state(), GradeOptions(jobs=1, reference="numpy"), once=True)


@needs_sandbox
def test_a_student_hands_in_and_reads_only_their_own_feedback():
    alice, as_alice = student()
    bob, as_bob = student()
    instructor, as_instructor = student(Member.INSTRUCTOR)
    assert hand_in(as_instructor, CORRECT).status_code == 302  # staff may try the site
    answer = hand_in(as_alice, PARTIAL)
    assert answer.status_code == 302
    job = Job.objects.get(student__student_id=alice.username)
    assert answer["Location"] == f"/submissions/{job.id}/"
    assert job.state == Job.QUEUED
    assert as_alice.get(f"/submissions/{job.id}/").content.decode().count('data-state="queued"') == 1
    assert grade_queue() >= 1

    page = as_alice.get(f"/submissions/{job.id}/").content.decode()
    assert "Score: 7.375 / 10" in page and "missing_sqrt.py" in page
    api = as_alice.get(f"/api/v1/submissions/{job.id}").json()
    assert api["state"] == "graded" and api["report"]["score"] == 7.375
    assert not {"submission", "reference", "sandbox"} & set(api["report"])  # the grader's paths and tools
    attention = next(q for q in api["report"]["questions"] if q["id"] == "attention")
    assert attention["status"] == "partial" and attention["feedback"]

    # Bob sees none of it: the page, the API and the lists answer as if it did not exist.
    assert as_bob.get(f"/submissions/{job.id}/").status_code == 404
    assert as_bob.get(f"/api/v1/submissions/{job.id}").status_code == 404
    assert as_bob.get("/api/v1/submissions").json() == {"submissions": []}
    assert alice.username not in as_bob.get("/assignments/sequences-and-attention/").content.decode()
    # Staff see every submission.
    _, as_ta = student(Member.TA)
    assert as_ta.get(f"/api/v1/submissions/{job.id}").json()["report"]["score"] == 7.375
    # The staff's own tries are kept, and never counted in grades.
    from gradebook.grades import current_grades
    from service.access import book

    graded = {grade.student_id for grade in current_grades(book(), assignments()["sequences-and-attention"])}
    assert alice.username in graded and not any(student_id.startswith("staff:") for student_id in graded)
    assert Job.objects.get(student__student_id=f"staff:{instructor.username}").state == Job.GRADED
    # Signed out: the sign-in page, or 401 from the API.
    anonymous = Client()
    assert anonymous.get(f"/submissions/{job.id}/").status_code == 302
    assert anonymous.get(f"/api/v1/submissions/{job.id}").status_code == 401


@pytest.mark.parametrize(
    "name, content, refusal",
    [
        ("notes.txt", b"print(1)", "hand in a notebook (.ipynb) or a Python file (.py)"),
        ("big.py", b"#" * (MAX_UPLOAD_BYTES + 1), "the limit is 5 MB"),
        ("broken.ipynb", b"{not json", "the notebook is not valid JSON"),
        ("list.ipynb", b"[1, 2]", "the file is JSON but not a notebook"),
        ("binary.py", b"\x00\x01\x02", "the file is binary"),
        ("latin.py", "x = 'caf\u00e9'".encode("latin-1"), "the file is not UTF-8 text"),
        ("empty.py", b"", "the file is empty"),
    ],
    ids=["type", "size", "json", "not-a-notebook", "binary", "encoding", "empty"],
)
def test_a_bad_hand_in_is_refused_before_it_is_stored(tmp_path, name, content, refusal):
    user, client = student()
    path = tmp_path / "upload"
    path.write_bytes(content)
    answer = hand_in(client, path, name=name)
    assert answer.status_code == 302 and answer["Location"] == "/assignments/sequences-and-attention/"
    assert refusal in client.get(answer["Location"]).content.decode()
    assert not Job.objects.filter(student__student_id=user.username).exists()
    uploads = state() / "uploads"
    before = sorted(uploads.rglob("*")) if uploads.exists() else []
    from django.core.files.uploadedfile import SimpleUploadedFile

    api = client.post("/api/v1/submissions", {"assignment": "sequences-and-attention",
                                              "file": SimpleUploadedFile(name, content)},
                      HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)  # fmt: skip
    assert api.status_code == 400 and refusal in api.json()["error"]
    assert (sorted(uploads.rglob("*")) if uploads.exists() else []) == before


def test_the_api_needs_a_token_or_a_session_with_its_csrf_token(tmp_path):
    user, client = student()
    token = Client().post("/api/v1/token", {"username": user.username, "password": "a long password 123"})
    assert token.status_code == 201
    secret = token.json()["token"]
    assert Client().post("/api/v1/token", {"username": user.username, "password": "wrong"}).status_code == 401

    with_token = Client(HTTP_AUTHORIZATION=f"Token {secret}")
    assert [a["name"] for a in with_token.get("/api/v1/assignments").json()["assignments"]] == [
        "sequences-and-attention", "attention-not-explanation",
    ]  # fmt: skip
    created = with_token.post("/api/v1/submissions", {"assignment": "sequences-and-attention",
                                                      "file": CORRECT.open("rb")})  # fmt: skip
    assert created.status_code == 201 and created.json()["state"] == "queued"
    assert Client(HTTP_AUTHORIZATION="Token forged").get("/api/v1/assignments").status_code == 401
    assert Client().get("/api/v1/assignments").status_code == 401

    # A session (a page's own script) must send the CSRF token with an unsafe method, as a form does.
    client.get("/assignments/")
    refused = client.post("/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")})
    assert refused.status_code == 403
    accepted = client.post("/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")},
                           HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)  # fmt: skip
    assert accepted.status_code == 201
    # A form posted from another site without the token is refused too.
    assert client.post("/assignments/sequences-and-attention/", {}).status_code == 403
    assert with_token.post("/api/v1/submissions", {"assignment": "no-such"}).status_code == 404
    Job.objects.filter(student__student_id=user.username).delete()  # not for other tests' workers


def test_submission_limits_and_hidden_results_follow_the_manifest():
    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    spec = assignments()["sequences-and-attention"]
    limited = spec.model_copy(update={"max_submissions": 2, "submissions_per_hour": 1})
    assert allowance(row, limited) is None
    Job.objects.create(student=row, assignment=spec.name, file="x", original_name="x.py", size=1, sha256="0" * 64,
                       state=Job.GRADED)  # fmt: skip
    assert allowance(row, limited).startswith("1 submissions per hour: the next one is possible at ")
    Job.objects.filter(student=row).update(created_at=timezone.now() - timedelta(hours=2))
    assert allowance(row, limited) is None
    Job.objects.create(student=row, assignment=spec.name, file="x", original_name="x.py", size=1, sha256="1" * 64,
                       state=Job.FAILED)  # fmt: skip
    assert allowance(row, limited) is None  # a submission the grader failed on does not count
    Job.objects.filter(student=row).update(state=Job.GRADED)
    assert allowance(row, limited) == "you have used all 2 submissions of this assignment"

    from service.access import hidden_results_visible

    now = timezone.now()
    assert hidden_results_visible(spec, row)
    assert not hidden_results_visible(spec.model_copy(update={"feedback": "hidden"}), row)
    after_due = spec.model_copy(update={"feedback": "after_due", "due": now + timedelta(days=1)})
    assert not hidden_results_visible(after_due, row)
    assert hidden_results_visible(after_due.model_copy(update={"due": now - timedelta(minutes=1)}), row)
    from gradebook.models import Assignment as AssignmentRow

    assignment_row, _ = AssignmentRow.objects.get_or_create(name=spec.name)
    Extension.objects.create(student=row, assignment=assignment_row, until=now + timedelta(days=2), granted_at=now)
    assert not hidden_results_visible(after_due.model_copy(update={"due": now - timedelta(minutes=1)}), row)


def test_a_job_whose_worker_died_is_queued_again_then_failed():
    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    Job.objects.filter(state=Job.QUEUED).update(state=Job.FAILED)  # an empty queue for this test
    job = Job.objects.create(student=row, assignment="sequences-and-attention", file="x", original_name="x.py",
                             size=1, sha256="2" * 64)  # fmt: skip
    for attempt in range(1, MAX_ATTEMPTS + 1):
        claimed = claim(f"worker-{attempt}")
        assert claimed is not None and claimed.id == job.id and claimed.attempts == attempt
        assert claim("another") is None  # held by the first
        Job.objects.filter(id=job.id).update(started_at=timezone.now() - STALE_AFTER - timedelta(seconds=1))
    assert claim("last") is None
    job.refresh_from_db()
    assert job.state == Job.FAILED and job.error == "the grader stopped during every attempt"


def test_one_time_sign_in_links_for_the_roster(tmp_path):
    from service.accounts import sign_in_links

    name = f"r{uuid.uuid4().hex[:8]}"
    Student.objects.create(student_id=name, name="Rosa Roster", email=f"{name}@example.edu", on_roster=True)
    out = tmp_path / "links.csv"
    assert sign_in_links("http://course.example/", out) >= 1
    import csv

    link = next(row["link"] for row in csv.DictReader(out.open()) if row["student_id"] == name)
    assert link.startswith("http://course.example/welcome/")
    path = link.removeprefix("http://course.example")
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(path)
    assert page.status_code == 200 and f"Welcome, {name}" in page.content.decode()
    done = browser.post(path, {"new_password1": "correct horse battery", "new_password2": "correct horse battery",
                               "csrfmiddlewaretoken": browser.cookies["csrftoken"].value})  # fmt: skip
    assert done.status_code == 302 and done["Location"] == "/assignments/"
    assert browser.get("/assignments/").status_code == 200  # signed in
    assert Client().get(path).status_code == 404  # used once
    assert Client().login(username=name, password="correct horse battery")
    member = Member.objects.get(user__username=name)
    assert member.role == Member.STUDENT and member.student.student_id == name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``autograder serve`` on a copy of the shipped course, with one worker: (its address, the demo
    instructor's password, the course copy, the environment for commands)."""
    home = tmp_path_factory.mktemp("served")
    course_copy = home / "course"
    course_copy.mkdir()
    shutil.copy(ROOT / "course.toml", course_copy)
    shutil.copytree(ROOT / "lesson_data", course_copy / "lesson_data")
    shutil.copytree(ASSIGNMENTS, course_copy / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    port = _free_port()
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("AUTOGRADER_DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "autograder", "--course", str(course_copy), "serve", "--port", str(port),
         "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        first = server.stdout.readline()
        assert first.startswith("demo instructor: instructor / "), first
        password = first.split(" / ")[1].split()[0]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", password, course_copy, env
    finally:
        server.terminate()
        server.wait(timeout=30)


def autograder(*args, env, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, **options)  # fmt: skip


@needs_sandbox
def test_serve_login_and_submit_through_the_commands(served):
    url, password, course_copy, env = served
    login = autograder("login", "--server", url, "--username", "instructor", "--password-stdin",
                       input=password + "\n", env=env)  # fmt: skip
    assert login.returncode == 0, login.stderr
    saved = Path(env["XDG_CONFIG_HOME"]) / "gradewright" / "servers.json"
    assert oct(saved.stat().st_mode & 0o777) == "0o600" and json.loads(saved.read_text())[url]["token"]
    submitted = autograder("submit", PARTIAL, "--assignment", "sequences-and-attention", "--server", url, env=env)
    assert submitted.returncode == 0, submitted.stderr
    assert "graded" in submitted.stdout and "score: 7.375 / 10" in submitted.stdout
    assert "attention: 0.375 / 3 partial" in submitted.stdout
    refused = autograder("submit", ROOT / "README.md", "--assignment", "sequences-and-attention", "--server", url,
                         env=env)  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("hand in a notebook (.ipynb) or a Python file (.py)")
    wrong = autograder("login", "--server", url, "--username", "instructor", "--password-stdin", input="nope\n",
                       env=env)  # fmt: skip
    assert wrong.returncode == 2 and wrong.stderr.strip().endswith("wrong username or password")
    assert (course_copy / ".gradewright" / "gradebook.db").is_file()


CHROMIUM = shutil.which("chromium")
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="Debian's chromium is not installed here (.ci/run installs it)",
)


@needs_sandbox
@needs_browser
def test_a_student_in_the_browser_signs_in_hands_in_and_watches_it_graded(served, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, _, course_copy, env = served
    gradebook = course_copy / ".gradewright" / "gradebook.db"
    assert autograder("roster", "import", ROOT / "docs" / "walkthrough" / "roster.csv", "--gradebook", gradebook,
                      env=env).returncode == 0  # fmt: skip
    links = tmp_path / "links.csv"
    made = autograder("--course", course_copy, "links", "--server", url, "--out", links, env=env)
    assert made.returncode == 0, made.stderr
    import csv

    link = next(row["link"] for row in csv.DictReader(links.open()) if row["student_id"] == "correct_source_notebook")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.goto(link)
            page.fill("#id_new_password1", "correct horse battery")
            page.fill("#id_new_password2", "correct horse battery")
            page.click("text=Set my password")
            expect(page.locator("h1")).to_have_text("Assignments")
            page.click("text=Module 10 notebook: attention built by hand")
            page.set_input_files("input[name=notebook]", str(PARTIAL))
            page.get_by_role("button", name="Hand in").click()
            state = page.locator("#state")
            expect(state).to_have_text(re.compile("^(queued|grading|graded)$"), timeout=10_000)
            expect(page.locator("text=Score: 7.375 / 10")).to_be_visible(timeout=120_000)
            expect(page.locator("td.partial")).to_contain_text("0.375 / 3")
            # The page shows the feedback of the question that lost points.
            expect(page.locator("pre").first).to_contain_text("checks passed")
        finally:
            browser.close()
