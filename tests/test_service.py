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
from django.urls import get_resolver
from django.utils import timezone

from autograder.batch import GradeOptions
from gradebook.models import Extension, Student
from service.access import assignments, course, state
from service.models import Job, Member
from service.queue import MAX_ATTEMPTS, claim
from service.settings import MAX_UPLOAD_BYTES
from service.uploads import allowance
from service.worker import run_worker

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here
CORRECT = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_loops.py"
PARTIAL = ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"
KNOWN_NOTEBOOK = ASSIGNMENTS / "attention-not-explanation" / "known" / "correct_source_notebook.ipynb"


def student(role: str = Member.STUDENT) -> tuple[User, Client]:
    """A new account of the course (a student on the roster, or staff), signed in on a client that
    enforces CSRF as a browser does."""
    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name, password="a long password 123")
    row = Student.objects.create(student_id=name, name=name.title(), on_roster=True) if role == Member.STUDENT else None
    Member.objects.create(user=user, role=role, student=row)
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


def graded_hand_in(path: Path = PARTIAL) -> tuple[User, Client, Job]:
    """A new student's hand-in of ``path``, graded: (the student, their client, the job)."""
    user, client = student()
    hand_in(client, path)
    grade_queue()
    return user, client, Job.objects.get(student__student_id=user.username)


def zombie_children() -> list[int]:
    """This process's children that have ended and not been reaped."""
    zombies = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state == "Z":
                zombies.append(int(child))
    return zombies


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
    left_before = set(zombie_children())  # another test's, not this worker's to reap
    assert grade_queue() >= 1
    assert set(zombie_children()) - left_before == set()  # a long-running worker reaps every process its grading left

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
    # The staff read everyone's grades through the API; a student may not.
    grades = as_ta.get("/api/v1/assignments/sequences-and-attention/grades").json()
    _openapi_validator("Grade").validate(grades["grades"][0])
    alices = next(g for g in grades["grades"] if g["student_id"] == alice.username)
    assert (alices["score"], alices["final_score"], alices["questions"]["attention"]) == (7.375, 7.375, 0.375)
    assert as_bob.get("/api/v1/assignments/sequences-and-attention/grades").status_code == 403
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
        ("list.ipynb", b"[1, 2]", "the notebook has no list of cells"),
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


@needs_sandbox
@pytest.mark.timeout(120)
def test_a_worker_gets_ready_before_its_first_job_and_a_broken_assignment_is_left_to_its_jobs(tmp_path):
    """A worker started before any hand-in starts its sandbox and collects every assignment's hidden
    suite, so the first student it serves does not wait for them; an assignment whose suite cannot
    be collected neither stops it nor keeps the others from being made ready."""
    from autograder import batch, suite
    from course.folder import init_course, read_course
    from service.worker import warm_up

    folder = tmp_path / "course"
    init_course(folder)
    example, broken = folder / "assignments" / "example", folder / "assignments" / "broken"
    shutil.copytree(example, broken)
    (broken / "hidden" / "test_mean.py").write_text("def test_broken(:\n")
    manifest = folder / "course.toml"
    manifest.write_text(
        manifest.read_text().replace('["assignments/example"]', '["assignments/broken", "assignments/example"]')
    )
    hidden = example / "hidden" / "test_mean.py"  # counts its imports beside the suite's folder
    hidden.write_text(
        hidden.read_text() + "\nimport os\nopen(os.path.dirname(__file__) + '/../imports.txt', 'a').write('x')\n"
    )
    course = read_course(manifest)
    runner = batch._runner(False, tuple(course.sandbox.packages))
    try:
        warm_up(course, GradeOptions(jobs=1))
        assert runner.zygote is not None  # launched with the first assignment's limits
        assert (example / "imports.txt").read_text() == "x"  # the example's suite, collected
        assert suite._suites.get(example.resolve() / "hidden") is not None
        assert suite._suites.get(broken.resolve() / "hidden") is None  # its jobs say why, as before
    finally:
        runner.close()


def test_a_job_whose_worker_died_is_claimed_again_when_its_lease_expires_then_failed(monkeypatch):
    from service import queue

    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    Job.objects.filter(state=Job.QUEUED).update(state=Job.FAILED)  # an empty queue for this test
    job = Job.objects.create(student=row, assignment="sequences-and-attention", file="x", original_name="x.py",
                             size=1, sha256="2" * 64)  # fmt: skip
    for attempt in range(1, MAX_ATTEMPTS + 1):
        claimed = claim(f"worker-{attempt}")
        assert claimed is not None and claimed.id == job.id and claimed.attempts == attempt
        assert claim("another") is None  # leased to the first
        if attempt == 1:  # a live worker renews its lease while it grades
            monkeypatch.setattr(queue, "RENEW_EVERY", 0.05)
            Job.objects.filter(id=job.id).update(lease_expires_at=timezone.now() + timedelta(seconds=1))
            with queue.Lease(claimed):
                time.sleep(0.5)
            claimed.refresh_from_db()
            assert claimed.lease_expires_at > timezone.now() + queue.LEASE - timedelta(seconds=5)
        Job.objects.filter(id=job.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))  # it died
    assert claim("last") is None
    job.refresh_from_db()
    assert job.state == Job.FAILED and job.error == queue.GAVE_UP
    page = Client()
    page.force_login(user)
    assert "could not grade this submission" in page.get(f"/submissions/{job.id}/").content.decode()


def test_a_grade_and_its_jobs_end_are_written_together_or_not_at_all(monkeypatch):
    from autograder.reports.model import QuestionResult, Report
    from gradebook.models import Submission as Recorded
    from service import worker
    from service.access import book

    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    job = Job.objects.create(student=row, assignment="sequences-and-attention", file="x", original_name="x.py",
                             size=1, sha256="3" * 64, state=Job.GRADING)  # fmt: skip
    spec = assignments()["sequences-and-attention"]
    report = Report(
        student=user.username, assignment=spec.name, score=2, max_score=spec.max_score, submission="x",
        sha256="3" * 64, reference="numpy", sandbox="bubblewrap", graded_at=timezone.now().isoformat(),
        grader_version="test", questions=[QuestionResult(id=q.id, score=0, max_score=q.points, status="failed",
                                                         feedback="") for q in spec.questions],
    )  # fmt: skip

    def broken_finish(*_args, **_kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(worker, "finish", broken_finish)
    with pytest.raises(RuntimeError):
        worker.JobStore(book(), spec, job).record(report)
    assert not Recorded.objects.filter(sha256="3" * 64).exists()  # no grade without its job's end
    monkeypatch.undo()
    worker.JobStore(book(), spec, job).record(report)
    job.refresh_from_db()
    assert job.state == Job.GRADED and job.submission.sha256 == "3" * 64


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
    signed_in = Client().post("/accounts/login/", {"username": name, "password": "correct horse battery"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/assignments/"  # the page, throttled
    member = Member.objects.get(user__username=name)
    assert member.role == Member.STUDENT and member.student.student_id == name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``autograder serve`` on a copy of the shipped course, with one worker: (its address, the demo
    accounts' passwords by username, the course copy, the environment for commands)."""
    home = tmp_path_factory.mktemp("served")
    course_copy = home / "course"
    course_copy.mkdir()
    shutil.copy(ROOT / "course.toml", course_copy)
    shutil.copytree(ROOT / "lesson_data", course_copy / "lesson_data")
    shutil.copytree(ASSIGNMENTS, course_copy / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    late = course_copy / "assignments" / "attention-not-explanation" / "assignment.toml"  # due 30 hours ago
    due = (timezone.now() - timedelta(hours=30)).isoformat(timespec="seconds")
    late.write_text(f'due = {due}\nlate_penalty = "10% per day"\n' + late.read_text())
    # An exam with two open questions for the walk-through's roster, listed by the course (the
    # module's table is the file's last), for the staff to mark on the console.
    from course.exams.build import build_exam

    (course_copy / "exams").mkdir()
    build_exam(ROOT / "docs" / "walkthrough" / "roster.csv", course_copy / "exams" / "midterm", seed=4,
               lessons=[course_copy / "lesson_data"], open_questions=2)  # fmt: skip
    with (course_copy / "course.toml").open("a") as manifest:
        manifest.write('exams = ["exams/midterm"]\n')
    port = _free_port()
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("AUTOGRADER_DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "autograder", "--course", str(course_copy), "serve", "--port", str(port),
         "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        first, second = server.stdout.readline(), server.stdout.readline()
        assert first.startswith("demo instructor: instructor / "), first
        assert second.startswith("demo student: student / "), second
        passwords = {line.split(": ")[1].split(" / ")[0]: line.split(" / ")[1].split()[0] for line in (first, second)}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"autograder serve exited ({server.returncode}) before it listened on port {port}")
                time.sleep(0.2)
        else:
            pytest.fail(f"autograder serve did not listen on port {port} within 120 s")
        yield f"http://127.0.0.1:{port}", passwords, course_copy, env
    finally:
        server.terminate()
        server.wait(timeout=30)


def autograder(*args, env, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, **options)  # fmt: skip


@needs_sandbox
def test_serve_login_and_submit_through_the_commands(served):
    url, passwords, course_copy, env = served
    login = autograder("login", "--server", url, "--username", "student", "--password-stdin",
                       input=passwords["student"] + "\n", env=env)  # fmt: skip
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
    instructor = autograder("login", "--server", url, "--username", "instructor", "--password-stdin",
                            input=passwords["instructor"] + "\n", env=env)  # fmt: skip
    assert instructor.returncode == 0, instructor.stderr
    assert wrong.returncode == 2 and wrong.stderr.strip().endswith("wrong username or password")
    assert (course_copy / ".gradewright" / "gradebook.db").is_file()


CHROMIUM = shutil.which("chromium")
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="Debian's chromium is not installed here (.ci/run installs it)",
)


def screenshots_folder(tmp_path: Path) -> Path:
    """Where a browser test saves its screenshots: GRADEWRIGHT_SCREENSHOTS=docs/screenshots refreshes the README's."""
    shots = Path(os.environ.get("GRADEWRIGHT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def roster_links(served, tmp_path: Path) -> dict[str, str]:
    """The walk-through's roster imported into the served course, and each student's one-time link."""
    import csv

    url, _, course_copy, env = served
    gradebook = course_copy / ".gradewright" / "gradebook.db"
    # Once (seen once in four whole runs, in two processes) the import was told the gradebook was
    # locked for its 30 s wait, while the served site and its worker had just started: said, and
    # tried once more, so that what is checked here is the pages, not that start-up's contention.
    for _ in range(2):
        imported = autograder("roster", "import", ROOT / "docs" / "walkthrough" / "roster.csv", "--gradebook",
                              gradebook, env=env)  # fmt: skip
        if "locked" not in imported.stderr:
            break
        print(f"roster import, tried again: {imported.stderr.strip()}")
    assert imported.returncode == 0, imported.stderr
    links = tmp_path / "links.csv"
    made = autograder("--course", course_copy, "links", "--server", url, "--out", links, env=env)
    assert made.returncode == 0, made.stderr
    return {row["student_id"]: row["link"] for row in csv.DictReader(links.open())}


def launch_chromium(playwright):
    """Debian's chromium, driven by Playwright (no browser download)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run"],
    )  # fmt: skip


@needs_sandbox
@needs_browser
def test_a_student_in_the_browser_signs_in_hands_in_and_watches_it_graded(served, tmp_path):
    """Set GRADEWRIGHT_SCREENSHOTS=docs/screenshots to refresh the README's screenshots."""
    from playwright.sync_api import expect, sync_playwright

    shots = screenshots_folder(tmp_path)
    link_of = roster_links(served, tmp_path)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # Two students, each in a browser of their own (contexts share no cookies).
            ada = browser.new_context(accept_downloads=True).new_page()
            alan = browser.new_context().new_page()
            for page, student_id in ((ada, "correct_source_notebook"), (alan, "released_unchanged")):
                page.goto(link_of[student_id])
                page.fill("#id_new_password1", "correct horse battery")
                page.fill("#id_new_password2", "correct horse battery")
                page.click("text=Set my password")
                expect(page.locator("h1")).to_have_text("Assignments")
            ada.screenshot(path=shots / "assignments.png")

            # Alan hands in; Ada will not see it.
            alan.click("text=Module 10 notebook: attention built by hand")
            alan.set_input_files("input[name=notebook]", str(CORRECT))
            alan.get_by_role("button", name="Hand in").click()
            expect(alan.locator("#state")).to_be_visible()
            alans_page = alan.url

            ada.click("text=Module 10 assignment: attention is not an explanation")
            expect(ada.locator("text=The due time has passed: a submission now is late.")).to_be_visible()
            with ada.expect_download() as download:
                ada.click("text=Download the notebook")
            released = json.loads(Path(download.value.path()).read_text())
            assert download.value.suggested_filename == "attention-not-explanation.ipynb"
            assert "YOUR ANSWER HERE" in json.dumps(released) and "BEGIN SOLUTION" not in json.dumps(released)

            ada.set_input_files("input[name=notebook]", str(ROOT / "README.md"))  # the wrong file first
            ada.get_by_role("button", name="Hand in").click()
            expect(ada.locator("[role=alert]")).to_have_text("hand in a notebook (.ipynb) or a Python file (.py)")
            ada.set_input_files("input[name=notebook]", str(KNOWN_NOTEBOOK))
            ada.get_by_role("button", name="Hand in").click()
            expect(ada.locator("#state")).to_have_text(re.compile("^(queued|grading|graded)$"), timeout=10_000)
            expect(ada.locator("text=Score: 7 / 10")).to_be_visible(timeout=120_000)
            expect(ada.locator("p.late")).to_contain_text("Late by 2 days: penalty 1.4 (20%); final score 5.6 / 10")
            expect(ada.locator("td.passed").first).to_contain_text("2 / 2")
            ada.screenshot(path=shots / "feedback.png", full_page=True)

            response = ada.goto(alans_page)
            assert response is not None and response.status == 404
        finally:
            browser.close()


@needs_sandbox
@needs_browser
def test_the_staff_in_the_browser_mark_edit_the_rubric_answer_a_review_override_and_compare(served, tmp_path):
    """Set GRADEWRIGHT_SCREENSHOTS=docs/screenshots to refresh the staff's screenshots."""
    from playwright.sync_api import expect, sync_playwright

    url, passwords, _, _ = served
    shots = screenshots_folder(tmp_path)
    link = roster_links(served, tmp_path)["correct_projection"]
    assignment = "attention-not-explanation"
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            grace = browser.new_context().new_page()
            grace.goto(link)
            grace.fill("#id_new_password1", "correct horse battery")
            grace.fill("#id_new_password2", "correct horse battery")
            grace.click("text=Set my password")
            grace.click("text=Module 10 assignment: attention is not an explanation")
            grace.set_input_files("input[name=notebook]", str(KNOWN_NOTEBOOK))
            grace.get_by_role("button", name="Hand in").click()
            expect(grace.locator("text=Score:")).to_be_visible(timeout=120_000)
            submission_page = grace.url
            grace.select_option("#review select[name=question]", "explanation")
            grace.fill("#review textarea", "My explanation check failed; I think it is right.")
            grace.get_by_role("button", name="Send to the staff").click()
            expect(grace.locator("text=My explanation check failed")).to_be_visible()

            staff = browser.new_context().new_page()
            staff.goto(f"{url}/accounts/login/")
            staff.fill("input[name=username]", "instructor")
            staff.fill("input[name=password]", passwords["instructor"])
            staff.get_by_role("button", name="Sign in").click()
            staff.goto(f"{url}/staff/gradebook/{assignment}/")
            expect(staff.locator("h1")).to_contain_text("Gradebook")
            staff.screenshot(path=shots / "gradebook.png", full_page=True)

            # Hand grading: an item by its key, saved; then the item's points changed on the page.
            staff.goto(f"{url}/staff/marking/{assignment}/")
            staff.click("a:has-text('Mark')")
            expect(staff.locator("#mark")).to_be_visible()
            staff.locator("body").press("1")
            expect(staff.locator('input[data-key="1"]')).to_be_checked()
            staff.get_by_role("button", name="Save", exact=True).click()
            expect(staff.locator("text=Current mark: 1")).to_be_visible()
            staff.screenshot(path=shots / "marking.png", full_page=True)
            staff.click("text=Edit the rubric")
            staff.fill("input[aria-label='points of item 1']", "0.5")
            staff.get_by_role("button", name="Save item 1").click()
            expect(staff.locator("[role=alert]").first).to_contain_text("saved; 1 marks that use it follow it")
            expect(staff.locator("text=Current mark: 0.5")).to_be_visible()

            # The review request, answered; an automatic score overridden with a reason.
            staff.goto(f"{url}/staff/reviews/")
            staff.screenshot(path=shots / "reviews.png", full_page=True)
            staff.goto(submission_page)
            staff.fill("form[action*='/review'] textarea[name=message]", "Looked again: it checks the wrong axis.")
            staff.get_by_role("button", name="Answer").click()
            expect(staff.locator("text=Looked again: it checks the wrong axis.")).to_be_visible()
            form = staff.locator("form.override", has=staff.locator("input[value=explanation]"))
            form.locator("input[name=score]").fill("3")
            form.locator("input[name=reason]").fill("right idea, a tolerance too tight")
            form.locator("button").click()
            expect(staff.locator("form.override input[name=reason]").nth(1)).to_have_value(
                "right idea, a tolerance too tight"
            )
            staff.screenshot(path=shots / "submission-staff.png", full_page=True)

            # An exam's open question, marked by keyboard: a score, then Ctrl+Enter saves and moves on.
            staff.goto(f"{url}/staff/exams/")
            expect(staff.locator("h1")).to_contain_text("Exams")
            staff.screenshot(path=shots / "exams.png", full_page=True)
            staff.click("a:has-text('Mark') >> nth=0")
            expect(staff.locator("text=Answer 1 of")).to_be_visible()
            staff.fill("#mark input[name=score]", "0.5")
            staff.fill("#mark textarea[name=comment]", "names the cause; no check proposed")
            staff.screenshot(path=shots / "exam-marking.png", full_page=True)
            staff.locator("#mark textarea[name=comment]").press("Control+Enter")
            expect(staff.locator("text=Answer 2 of")).to_be_visible()
            staff.click("#previous")
            expect(staff.locator("#current")).to_have_text("0.5")

            for page_name in ("similarity", "statistics"):
                staff.goto(f"{url}/staff/{page_name}/{assignment}/")
                expect(staff.locator("h1")).to_contain_text(page_name.title())
                if page_name == "similarity":  # queued from the page; the worker computes it; the page reloads itself
                    staff.click("button:has-text('Compare again')")
                    expect(staff.locator("#report")).to_contain_text("pairs share more than", timeout=120_000)
                staff.screenshot(path=shots / f"{page_name}.png", full_page=True)

            # The student reads the answer and the overridden score with its reason.
            grace.goto(submission_page)
            expect(grace.locator("text=Looked again: it checks the wrong axis.")).to_be_visible()
            expect(grace.locator("text=right idea, a tolerance too tight")).to_be_visible()
        finally:
            browser.close()


def test_a_file_name_that_is_html_reaches_the_pages_inert(tmp_path):
    user, client = student()
    path = tmp_path / "x.py"
    path.write_text("def softmax(x):\n    return x\n")
    answer = hand_in(client, path, name="<img src=x onerror=alert(1)>.py")
    page = client.get(answer["Location"]).content.decode()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;.py" in page
    job = Job.objects.get(student__student_id=user.username)
    assert Path(job.file).name == "submission.py"  # stored under the server's name, in the state folder
    assert Path(job.file).is_relative_to(state() / "uploads")
    Job.objects.filter(id=job.id).delete()


def test_the_documented_production_settings_pass_djangos_deploy_check(tmp_path):
    probe = (
        "import sys\nfrom pathlib import Path\nfrom service.settings import configure\n"
        f"configure(Path({str(ROOT)!r}), state=Path({str(tmp_path)!r}))\n"
        "from django.core.management import call_command\n"
        "call_command('check', deploy=True, fail_level='WARNING')\n"
    )
    env = {**os.environ, "GRADEWRIGHT_HTTPS": "1", "GRADEWRIGHT_ALLOWED_HOSTS": "grading.example.edu"}
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "System check identified no issues" in completed.stdout
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"


def _openapi_validator(schema_name: str):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    document = json.loads(Client().get("/api/v1/openapi.json").content)
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:gradewright-api", resource)
    return Draft202012Validator({"$ref": f"urn:gradewright-api#/components/schemas/{schema_name}"}, registry=registry)


def test_the_openapi_description_covers_every_route_and_matches_the_answers():
    from django.urls import get_resolver

    document = json.loads(Client().get("/api/v1/openapi.json").content)
    assert document["openapi"] == "3.1.0"
    routes = {
        "/"
        + str(pattern.pattern).removeprefix("api/v1/").replace("<id:job_id>", "{id}").replace("<str:name>", "{name}")
        for pattern in get_resolver().url_patterns
        if str(pattern.pattern).startswith("api/v1/") and "openapi" not in str(pattern.pattern)
    }
    assert routes == set(document["paths"])

    user, _ = student()
    token = Client().post("/api/v1/token", {"username": user.username, "password": "a long password 123"}).json()
    api = Client(HTTP_AUTHORIZATION=f"Token {token['token']}")
    for assignment in api.get("/api/v1/assignments").json()["assignments"]:
        _openapi_validator("Assignment").validate(assignment)
    created = api.post("/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")})
    _openapi_validator("Submission").validate(created.json())
    _openapi_validator("Submission").validate(api.get(f"/api/v1/submissions/{created.json()['id']}").json())
    for answer in (api.get("/api/v1/submissions/999999"), Client().get("/api/v1/assignments")):
        _openapi_validator("Error").validate(answer.json())
    Job.objects.filter(id=created.json()["id"]).delete()


@needs_sandbox
def test_a_graded_report_matches_the_openapi_description():
    user, client = student()
    hand_in(client, PARTIAL)
    grade_queue()
    job = Job.objects.get(student__student_id=user.username)
    answer = client.get(f"/api/v1/submissions/{job.id}").json()
    _openapi_validator("Submission").validate(answer)
    assert answer["report"]["hidden_results"] == "shown"
    # A report that carried the grader's own fields would not match.
    from jsonschema import ValidationError

    with pytest.raises(ValidationError):
        _openapi_validator("Report").validate({**answer["report"], "sandbox": "bubblewrap"})


def test_the_instructor_imports_the_roster_and_downloads_links_on_the_web(tmp_path):
    import csv

    from django.core.files.uploadedfile import SimpleUploadedFile

    _, instructor = student(Member.INSTRUCTOR)
    tag = uuid.uuid4().hex[:6]
    lines = [["student_id", "name", "email"], [f"w{tag}a", '=HYPERLINK("x")', f"a{tag}@example.edu"],
             [f"w{tag}b", "Bea", f"b{tag}@example.edu"], ["", "Nobody", f"n{tag}@example.edu"]]  # fmt: skip
    roster = "".join(",".join(f'"{cell}"'.replace('("x")', '(""x"")') for cell in line) + "\n" for line in lines)

    def post(data):
        instructor.get("/staff/roster/")
        return instructor.post("/staff/roster/", {**data, "csrfmiddlewaretoken": instructor.cookies["csrftoken"].value})

    done = post({"roster": SimpleUploadedFile("roster.csv", roster.encode())})
    assert done.status_code == 302
    page = instructor.get("/staff/roster/").content.decode()
    assert "2 students added, 0 updated" in page and "row 4: no student_id" in page
    assert f"w{tag}a" in page and "=HYPERLINK(&quot;x&quot;)" in page
    links = post({"action": "links"})
    assert links["Content-Type"] == "text/csv"
    rows = {row["student_id"]: row for row in csv.DictReader(links.content.decode().splitlines())}
    assert rows[f"w{tag}a"]["name"] == '\'=HYPERLINK("x")'  # neutralised for the spreadsheet it is mailed from
    assert rows[f"w{tag}b"]["link"].startswith("http://testserver/welcome/")
    repeated = post(
        {"roster": SimpleUploadedFile("r.csv", f"student_id,name,email\nx{tag},A,a\nx{tag},B,b\n".encode())}
    )
    assert "repeated; nothing was imported" in instructor.get(repeated["Location"]).content.decode()
    # A roster student named like a staff account does not make it a student's.
    staff_name = Member.objects.filter(role=Member.INSTRUCTOR).first().user.username
    Student.objects.create(student_id=staff_name, on_roster=True)
    post({"action": "links"})
    assert Member.objects.get(user__username=staff_name).role == Member.INSTRUCTOR
    # Teaching assistants and students do not reach it.
    for role in (Member.TA, Member.STUDENT):
        _, other = student(role)
        assert other.get("/staff/roster/").status_code == 404


# The platform's LTI requests carry their own proof (a signed token; the deep linking choice, the
# launch's id): tests/test_lti.py attacks them.
OPEN_TO_ALL = {"login", "welcome", "api-token", "api-openapi", "home", "lti-login", "lti-login-for", "lti-launch",
               "lti-deep-link", "lti-jwks",
               # The hub's OAuth: its callback carries the hub's proof (a code for the hub's token); tests/test_hub.py.
               "hub-login", "hub-oauth-callback"}  # fmt: skip


@pytest.mark.parametrize(
    "name",
    sorted(
        pattern.name
        for pattern in get_resolver().url_patterns
        if pattern.name not in OPEN_TO_ALL and pattern.name != "logout"
    ),
)
def test_every_page_and_endpoint_needs_a_signed_in_member(name):
    """Anonymous: a page sends to the sign-in page, an API call is 401; an account that is not a member
    of the course reaches nothing."""
    from django.urls import reverse

    name_of = ["sequences-and-attention"]
    arguments = {"assignment": name_of, "notebook": name_of, "submission": [1], "api-submission": [1],
                 "api-grades": name_of, "api-notebook": name_of, "gradebook": name_of, "statistics": name_of, "statistics-chart": name_of + ["overview"],
                 "student": ["someone"], "marking": ["attention-not-explanation"],
                 "mark-start": ["attention-not-explanation", "written"],
                 "mark-answer": ["attention-not-explanation", "written", 1], "override": [1],
                 "rubric-edit": ["attention-not-explanation", "written"], "platforms": [],
                 "regrade": name_of, "similarity": name_of, "review-answer": [1], "review-ask": [1], "diff": ["someone", 1, 2],
                 "exam-start": ["midterm", "q"], "exam-mark": ["midterm", "q", "someone"],
                 **{route: ["midterm"] for route in ("exam-take", "exam-save", "exam-submit", "exam-state", "exam-online")},
                 "exam-log": ["midterm", 1]}  # fmt: skip

    url = reverse(name, args=arguments.get(name, []))
    posted = name in {"override", "regrade", "review-answer", "review-ask", "rubric-edit", "exam-save", "exam-submit"}
    anonymous = Client().post(url) if posted else Client().get(url)
    if name.startswith("api-"):
        assert anonymous.status_code == 401
    else:
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    outsider = Client()
    outsider.force_login(User.objects.create_user(f"o{uuid.uuid4().hex[:8]}"))  # an account, not a member
    assert (outsider.post(url) if posted else outsider.get(url)).status_code == 404


@needs_sandbox
def test_the_staff_read_the_gradebook_a_students_history_and_the_statistics():
    alice, as_alice, _ = graded_hand_in()
    _, as_ta = student(Member.TA)
    index = as_ta.get("/staff/gradebook/")
    assert index.status_code == 302 and index["Location"] == "/staff/gradebook/sequences-and-attention/"
    page = as_ta.get(index["Location"]).content.decode()
    assert alice.username in page and "7.375" in page and "0.375" in page
    late_only = as_ta.get(index["Location"] + "?show=late").content.decode()
    assert alice.username not in late_only
    below = as_ta.get(index["Location"] + "?below=8&sort=score").content.decode()
    assert alice.username in below and alice.username not in as_ta.get(index["Location"] + "?below=5").content.decode()
    history = as_ta.get(f"/staff/students/{alice.username}/").content.decode()
    assert "current" in history and "7.375 / 10" in history and "submission " in history
    stats = as_ta.get("/staff/statistics/sequences-and-attention/").content.decode()
    assert "test_" in stats and "Mean" in stats
    for name in ("questions", "overview"):
        chart = as_ta.get(f"/staff/statistics/sequences-and-attention/{name}.png")
        assert chart["Content-Type"] == "image/png" and chart.content[:4] == b"\x89PNG"
    assert as_ta.get("/staff/statistics/sequences-and-attention/other.png").status_code == 404
    as_ta.get("/staff/exports/")
    canvas = as_ta.post("/staff/exports/", {"assignment": ["sequences-and-attention"], "format": "canvas",
                                           "csrfmiddlewaretoken": as_ta.cookies["csrftoken"].value})  # fmt: skip
    lines = canvas.content.decode().splitlines()
    assert canvas["Content-Type"] == "text/csv" and lines[0].startswith("Student,ID,SIS User ID,SIS Login ID,Section,")
    assert lines[1].startswith("Points Possible") and any(line.endswith(",7.375") for line in lines[2:])
    # Similarity: the page queues a report and a worker computes it (more in tests/test_similarity.py).
    as_ta.post("/staff/similarity/sequences-and-attention/", {"threshold": "0.9",
                                                              "csrfmiddlewaretoken": as_ta.cookies["csrftoken"].value})  # fmt: skip
    grade_queue()
    similar = as_ta.get("/staff/similarity/sequences-and-attention/").content.decode()
    assert "pairs share more than 90% of their code" in similar
    for url in ("/staff/gradebook/sequences-and-attention/", f"/staff/students/{alice.username}/",
                "/staff/statistics/sequences-and-attention/"):  # fmt: skip
        assert as_alice.get(url).status_code == 404  # students never see the staff's pages


@needs_sandbox
def test_hand_grading_on_the_page_with_the_rubric():
    assignment = "attention-not-explanation"
    notebook = json.loads(KNOWN_NOTEBOOK.read_text())
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "written_link":
            cell["source"] = (
                "An artefact. <script>alert(1)</script> **bold** $\\frac{a}{b}$ $\\href{javascript:alert(2)}{y}$ "
                "$\\text{<script>alert(3)</script>}$\n\n```python\ndef f(x):\n    return x\n```\n"
            )
    ada, as_ada = student()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"{ada.username}.ipynb"
    path.write_text(json.dumps(notebook))
    hand_in(as_ada, path, assignment=assignment, name=f"{assignment}.ipynb")
    grade_queue()
    _, first = student(Member.TA)
    _, second = student(Member.INSTRUCTOR)

    index = first.get(f"/staff/marking/{assignment}/").content.decode()
    assert "Meaningful link or artefact" in index
    start = first.get(f"/staff/marking/{assignment}/written/")
    page_url = start["Location"]
    ada_submission = Job.objects.get(student__student_id=ada.username).submission
    page = first.get(page_url).content.decode()
    if f"/{ada_submission.id}/" not in page_url:  # other tests' answers come first: go to Ada's
        page_url = f"/staff/marking/{assignment}/written/{ada_submission.id}/"
        page = first.get(page_url).content.decode()
    assert ada.username not in page  # anonymous unless asked
    assert ada.username in first.get(page_url + "?names=1").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<strong>bold</strong>" in page
    # Math as MathML, only math: the converter's copies of the student's markup are dropped.
    assert "<mfrac><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></mfrac>" in page
    assert "javascript:" not in page and "<script>alert(3)" not in page and "<mtext>alert(3)</mtext>" in page
    assert '<span class="k">def</span>' in page  # code highlighted
    assert "1. +1 Says the strongest pairs are artefacts" in page

    def save(client, rubric, comment, seen=""):
        return client.post(page_url, {"rubric": rubric, "adjustment": "0", "comment": comment, "seen": seen,
                                      "then": "stay", "csrfmiddlewaretoken": client.cookies["csrftoken"].value})  # fmt: skip

    assert save(first, ["artefacts", "intervention"], "no baseline").status_code == 302
    report = as_ada.get(f"/api/v1/submissions/{Job.objects.get(student__student_id=ada.username).id}").json()
    written = next(q for q in report["report"]["questions"] if q["id"] == "written")
    assert written["score"] == 2 and written["mark"]["rubric"][0].startswith("+1 Says the strongest pairs")
    assert written["mark"]["comment"] == "no baseline"

    # The rubric changes on the page: every mark that used the item follows, without marking again.
    item = next(q for q in assignments()[assignment].questions if q.id == "written").rubric[1]

    def edit(client, **fields):
        return client.post(f"/staff/rubric/{assignment}/written/", {**fields, "back": page_url,
                           "csrfmiddlewaretoken": client.cookies["csrftoken"].value})  # fmt: skip

    assert edit(first, item=item.id, text=item.text, points="1.5")["Location"] == page_url
    report = as_ada.get(f"/api/v1/submissions/{Job.objects.get(student__student_id=ada.username).id}").json()
    assert next(q for q in report["report"]["questions"] if q["id"] == "written")["score"] == 2.5
    refused = edit(first, item=item.id, text=item.text, points="99")
    assert "points are within" in first.get(refused["Location"]).content.decode()
    assert edit(as_ada, item=item.id, text="mine", points="3").status_code == 404  # students never
    edit(first, text="Cites a source for the claim", points="0.5")
    assert "Cites a source for the claim" in first.get(page_url).content.decode()
    assert 'value="cites_a_source_for_the_claim"' in first.get(page_url).content.decode()
    edit(first, item=item.id, text=item.text, points=str(item.points))  # as the manifest has it, for the next tests

    # Two graders on one answer: the last save wins, and its grader is told what it replaced.
    second.get(page_url)
    from gradebook.models import Mark

    seen = Mark.objects.get(student__student_id=ada.username, question_id="written").marked_at.isoformat()
    save(first, ["artefacts"], "changed my mind")
    answer = save(second, ["artefacts", "intervention", "baseline"], "all three", seen=seen)
    notice = second.get(answer["Location"]).content.decode()
    assert "had marked this answer at" in notice and "your mark replaced theirs" in notice
    mark = Mark.objects.get(student__student_id=ada.username, question_id="written")
    assert (mark.rubric, mark.comment) == (["artefacts", "intervention", "baseline"], "all three")


@needs_sandbox
def test_the_staff_override_an_automatic_score_with_a_reason_the_student_reads():
    alice, as_alice, job = graded_hand_in()
    _, ta = student(Member.TA)
    page = ta.get(f"/submissions/{job.id}/").content.decode()
    assert 'class="override"' in page

    def override(client, **fields):
        client.get(f"/submissions/{job.id}/")
        return client.post(
            f"/staff/override/{job.id}/", {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value}
        )

    assert (
        override(ta, question="attention", score="3", reason="your masks were right; our test was wrong").status_code
        == 302
    )
    shown = as_alice.get(f"/api/v1/submissions/{job.id}").json()["report"]
    attention = next(q for q in shown["questions"] if q["id"] == "attention")
    assert (attention["score"], attention["mark"]["override"], shown["score"]) == (3, True, 10)
    assert "your masks were right" in as_alice.get(f"/submissions/{job.id}/").content.decode()
    assert 'class="override"' not in as_alice.get(f"/submissions/{job.id}/").content.decode()
    refused = override(ta, question="attention", score="4", reason="too many")
    assert "give a score between 0 and 3" in ta.get(refused["Location"]).content.decode()
    assert override(as_alice, question="attention", score="3", reason="mine").status_code == 404
    override(ta, question="attention", score="", reason="")  # removed: the automatic score again
    assert as_alice.get(f"/api/v1/submissions/{job.id}").json()["report"]["score"] == 7.375


@needs_sandbox
def test_the_staff_queue_a_regrade_of_one_submission_or_the_whole_assignment():
    alice, as_alice, first = graded_hand_in()
    _, ta = student(Member.TA)
    ta.get(f"/submissions/{first.id}/")
    token = ta.cookies["csrftoken"].value
    answer = ta.post("/staff/regrade/sequences-and-attention/", {"job": first.id, "back": f"/submissions/{first.id}/",
                                                                  "csrfmiddlewaretoken": token})  # fmt: skip
    assert answer["Location"] == f"/submissions/{first.id}/"
    again = Job.objects.filter(student__student_id=alice.username).order_by("id").last()
    assert again.id != first.id and again.regrade and again.state == Job.QUEUED
    assert ta.post("/staff/regrade/sequences-and-attention/", {"back": "//evil.example/", "csrfmiddlewaretoken": token}
                   )["Location"] == "/staff/gradebook/sequences-and-attention/"  # fmt: skip
    grade_queue()
    again.refresh_from_db()
    assert again.state == Job.GRADED and again.submission_id == first.submission_id  # the same file, graded again
    assert as_alice.get(f"/api/v1/submissions/{again.id}").json()["report"]["score"] == 7.375
    assert as_alice.post("/staff/regrade/sequences-and-attention/", {}).status_code == 403  # no CSRF token
    as_alice.get("/assignments/")
    with_token = {"csrfmiddlewaretoken": as_alice.cookies["csrftoken"].value}
    assert as_alice.post("/staff/regrade/sequences-and-attention/", with_token).status_code == 404  # not staff

    # One question alone, for one student: its result is made again, the others' rows stand.
    from gradebook.models import Result

    before = dict(Result.objects.filter(submission_id=first.submission_id).values_list("question_id", "id"))
    answer = ta.post("/staff/regrade/sequences-and-attention/", {"student": alice.username, "question": "attention",
                                                                  "csrfmiddlewaretoken": token})  # fmt: skip
    assert answer.status_code == 302
    queued = Job.objects.filter(student__student_id=alice.username).order_by("id").last()
    assert (queued.question, queued.state) == ("attention", Job.QUEUED)
    grade_queue()
    after = dict(Result.objects.filter(submission_id=first.submission_id).values_list("question_id", "id"))
    assert after.keys() == before.keys() and after["attention"] != before["attention"]
    assert all(after[q] == before[q] for q in before if q != "attention")
    assert as_alice.get(f"/api/v1/submissions/{queued.id}").json()["report"]["score"] == 7.375
    no_such = ta.post("/staff/regrade/sequences-and-attention/", {"question": "nope", "csrfmiddlewaretoken": token})
    assert no_such.status_code == 404


@needs_sandbox
def test_a_student_asks_for_a_review_and_the_staff_answer_in_the_thread():
    alice, as_alice, job = graded_hand_in()
    page = f"/submissions/{job.id}/"

    def post(client, url, **fields):
        client.get(page if client is not as_bob else "/assignments/")
        return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})

    _, as_bob = student()
    assert post(as_bob, f"/submissions/{job.id}/review/", question="attention", message="mine").status_code == 404
    assert post(as_alice, f"/submissions/{job.id}/review/", question="attention",
                message="My masks follow the <b>spec</b>").status_code == 302  # fmt: skip
    _, ta = student(Member.TA)
    waiting = ta.get("/staff/reviews/").content.decode()
    assert f"sequences-and-attention #{job.id}" in waiting and alice.username in waiting
    from service.models import ReviewRequest

    review = ReviewRequest.objects.get(job=job)
    assert post(ta, f"/staff/reviews/{review.id}/", message="Right: score corrected.").status_code == 302
    assert post(as_alice, f"/staff/reviews/{review.id}/", message="me too").status_code == 404  # staff only
    thread = as_alice.get(page).content.decode()
    assert "My masks follow the &lt;b&gt;spec&lt;/b&gt;" in thread and "Right: score corrected." in thread
    assert "attention (answered)" in thread
    assert f"#{job.id}" not in ta.get("/staff/reviews/").content.decode()  # answered: no longer waiting


@needs_sandbox
def test_the_staff_compare_two_submissions_and_regrade_one_students_latest(tmp_path):
    alice, as_alice = student()
    hand_in(as_alice, PARTIAL)
    changed = tmp_path / "fixed.py"
    changed.write_text(CORRECT.read_text() + "\n# fixed the <script>scaling</script>\n")
    hand_in(as_alice, changed)
    grade_queue()
    _, ta = student(Member.TA)
    history = ta.get(f"/staff/students/{alice.username}/").content.decode()
    link = re.search(rf'href="(/staff/students/{alice.username}/diff/\d+/\d+/)"', history)
    assert link is not None
    diff = ta.get(link.group(1)).content.decode()
    assert "diff_add" in diff and "&lt;script&gt;scaling&lt;/script&gt;" in diff and "<script>scaling" not in diff
    before = Job.objects.filter(student__student_id=alice.username).count()
    token = ta.cookies["csrftoken"].value
    ta.post("/staff/regrade/sequences-and-attention/", {"student": alice.username, "csrfmiddlewaretoken": token})
    again = Job.objects.filter(student__student_id=alice.username).order_by("id")
    assert again.count() == before + 1 and again.last().regrade and again.last().sha256 == again[1].sha256
    grade_queue()
    assert as_alice.get("/api/v1/submissions").json()["submissions"][0]["state"] == "graded"
    assert as_alice.get(link.group(1)).status_code == 404


def test_the_instructor_closes_and_opens_an_assignment_to_hand_ins():
    _, as_student = student()
    _, instructor = student(Member.INSTRUCTOR)
    _, assistant = student(Member.TA)
    page = "/assignments/sequences-and-attention/"

    def press(client, value):
        client.get(page)
        return client.post(page, {"submissions": value, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})

    assert press(assistant, "close").status_code == 404  # a course setting: the instructor's
    assert press(as_student, "close").status_code == 404
    try:
        assert press(instructor, "close").status_code == 302
        shown = as_student.get(page).content.decode()
        assert "the instructor has closed this assignment to submissions" in shown and 'name="notebook"' not in shown
        refused = hand_in(as_student, PARTIAL)
        assert "closed this assignment" in as_student.get(refused["Location"]).content.decode()
        from service.models import ApiToken  # the API refuses it too

        secret = ApiToken.issue(User.objects.get(username=as_student.get(page).wsgi_request.user.username))
        with PARTIAL.open("rb") as handle:
            api = Client(HTTP_AUTHORIZATION=f"Token {secret}").post(
                "/api/v1/submissions", {"assignment": "sequences-and-attention", "file": handle}
            )
        assert api.status_code >= 400 and "closed this assignment" in api.content.decode()
        assert "Open submissions" in instructor.get(page).content.decode()
    finally:
        press(instructor, "open")
    assert 'name="notebook"' in as_student.get(page).content.decode()
