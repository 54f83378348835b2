"""What the service's tests share: members of the course signed in on Django's test client, hand-ins
graded by the real worker, and the real ``autograder serve`` (a free port, the shipped course copied,
the site started and waited for) driven by the commands and by Debian's chromium through Playwright.

The ``served`` fixture (tests/conftest.py) is the shipped course served with one worker; a module
that needs another course or other options starts its own with ``serve``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from autograder.batch import GradeOptions
from gradebook.models import Student
from service.accounts.models import Member
from service.core.access import course, state
from service.handin.models import Job
from service.handin.worker import run_worker

from .conftest import ASSIGNMENTS, ROOT

CORRECT = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_loops.py"
PARTIAL = ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"
KNOWN_NOTEBOOK = ASSIGNMENTS / "attention-not-explanation" / "known" / "correct_source_notebook.ipynb"
PASSWORD = "a long password 123"
# The site's routes that answer POST alone: the route walks (tests/test_csp.py, tests/test_service_access.py)
# post to them, and get every other.
POSTED = {
    "override",
    "regrade",
    "choose-counted",
    "publish-grades",
    "review-answer",
    "review-ask",
    "rubric-edit",
    "mark-empty",
    "exam-mark-empty",
    "logout",
    "lti-launch",
    "lti-deep-link",
    "exam-save",
    "exam-submit",
    "exam-publish",
    "api-practice-request",
}


# In-process: Django's test client on this run's own site (tests/conftest.py configures it).


def student(role: str = Member.STUDENT) -> tuple[User, Client]:
    """A new account of the course (a student on the roster, or staff), signed in on a client that
    enforces CSRF as a browser does."""
    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.create_user(name, password=PASSWORD)
    row = Student.objects.create(student_id=name, name=name.title(), on_roster=True) if role == Member.STUDENT else None
    Member.objects.create(user=user, role=role, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return user, client


def hand_in(client: Client, path: Path, assignment: str = "sequences-and-attention", name: str | None = None):
    """``path`` handed in on the assignment's page, as its form posts it (with the page's CSRF token)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = client.get(f"/assignments/{assignment}/")
    assert page.status_code == 200
    with path.open("rb") as handle:
        upload = SimpleUploadedFile(name or path.name, handle.read())
        return client.post(
            f"/assignments/{assignment}/",
            {"notebook": upload, "csrfmiddlewaretoken": client.cookies["csrftoken"].value},
        )


def grade_queue() -> int:
    """The queue graded by the real worker, once through: how many jobs it finished."""
    return run_worker(course(), state(), GradeOptions(jobs=1, reference="numpy"), once=True)


def graded_hand_in(path: Path = PARTIAL) -> tuple[User, Client, Job]:
    """A new student's hand-in of ``path``, graded: (the student, their client, the job)."""
    user, client = student()
    hand_in(client, path)
    grade_queue()
    return user, client, Job.objects.get(student__student_id=user.username)


def openapi_validator(schema_name: str):
    """A validator for one of the schemas of the API's own description (/api/v1/openapi.json)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    document = json.loads(Client().get("/api/v1/openapi.json").content)
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:gradewright-api", resource)
    return Draft202012Validator({"$ref": f"urn:gradewright-api#/components/schemas/{schema_name}"}, registry=registry)


# Over HTTP: the real `autograder serve`, in a process of its own.


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def course_copy(home: Path) -> Path:
    """The shipped course (its manifest, lessons and assignments) copied to ``home``/course."""
    copy = home / "course"
    copy.mkdir()
    shutil.copy(ROOT / "course.toml", copy)
    shutil.copytree(ROOT / "lesson_data", copy / "lesson_data")
    shutil.copytree(ASSIGNMENTS, copy / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return copy


def commands_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for the commands run against a served course: their saved logins in ``home``,
    and the course's own gradebook, whatever database this shell names."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), **extra}
    env.pop("GRADEWRIGHT_DATABASE_URL", None)
    return env


START_WITHIN = 120  # seconds: a busy machine's start, migrations included


@dataclass
class Site:
    url: str
    passwords: dict[str, str]  # the demo accounts' (made on a first start): {username: password}
    log: Path  # what the site and its workers said


@contextmanager
def serve(folder: Path, env: dict[str, str], log: Path, *, workers: int, options: Sequence[str] = ()) -> Iterator[Site]:
    """``autograder serve`` on the course ``folder``, waited for until it listens (a clear failure, with
    what it said, if it ends or never does), ended with the block. Its output goes to ``log``, a
    file, not a pipe: its workers write there too, and a pipe no one reads would stop them."""
    port = free_port()
    command = [sys.executable, "-m", "autograder", "--course", str(folder), "serve", "--port", str(port)]
    command += ["--workers", str(workers), *options]
    with log.open("w") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + START_WITHIN
        while True:
            said = log.read_text().splitlines()
            if any(line.startswith("serving ") for line in said):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    pass
            if server.poll() is not None:
                pytest.fail(f"autograder serve ended ({server.returncode}) before it listened:\n{log.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"autograder serve did not listen within {START_WITHIN} s:\n{log.read_text()}")
            time.sleep(0.2)
        demo = [line.removeprefix("demo ").split(": ", 1)[1].split() for line in said if line.startswith("demo ")]
        passwords = {words[0]: words[2] for words in demo}  # "demo student: student / PASSWORD (shown once)"
        yield Site(f"http://127.0.0.1:{port}", passwords, log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def autograder(*args, env, **options) -> subprocess.CompletedProcess:
    """The ``autograder`` command, run to its end: ``autograder("login", ..., env=env)``."""
    return subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        **options,
    )


def roster_links(served, tmp_path: Path) -> dict[str, str]:
    """The walk-through's roster imported into the served course, and each student's one-time link."""
    import csv

    url, _, course_copy, env = served
    gradebook = course_copy / ".gradewright" / "gradebook.db"
    # Once (seen once in four whole runs, in two processes) the import was told the gradebook was
    # locked for its 30 s wait, while the served site and its worker had just started: said, and
    # tried once more, so that what is checked here is the pages, not that start-up's contention.
    for _ in range(2):
        imported = autograder(
            "roster", "import", ROOT / "docs" / "walkthrough" / "roster.csv", "--gradebook", gradebook, env=env
        )
        if "locked" not in imported.stderr:
            break
        print(f"roster import, tried again: {imported.stderr.strip()}")
    assert imported.returncode == 0, imported.stderr
    links = tmp_path / "links.csv"
    made = autograder("--course", course_copy, "links", "--server", url, "--out", links, env=env)
    assert made.returncode == 0, made.stderr
    return {row["student_id"]: row["link"] for row in csv.DictReader(links.open())}


# In a browser: Debian's chromium, driven by Playwright (no browser download).

CHROMIUM = shutil.which("chromium")
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="Debian's chromium is not installed here (.ci/run installs it)",
)


def launch_chromium(playwright):
    """Debian's chromium, driven by Playwright (no browser download)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )


def screenshots_folder(tmp_path: Path) -> Path:
    """Where a browser test saves its screenshots: GRADEWRIGHT_SCREENSHOTS=DIR keeps them in DIR (the README's come from docs/screenshots.py)."""
    shots = Path(os.environ.get("GRADEWRIGHT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots
