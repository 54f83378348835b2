"""Submission limits that hold when a student's uploads arrive at the same moment.

A real ``autograder serve`` (waitress, eight threads; no worker: nothing here is graded), on SQLite
and on PostgreSQL, on a copy of the shipped course whose assignments carry the caps. One student
sends eight uploads at once, half through the API and half through the page, against a cap of
three: exactly three are kept, and each of the five others is refused with the cap's own sentence.
Eight runs of the practice checks at once, against their hourly limit of three, likewise."""

from __future__ import annotations

import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .conftest import ASSIGNMENTS, ROOT
from .postgres import fresh_database, needs_postgres
from .served import commands_env, serve

UPLOAD = ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"
TOTAL, HOURLY, UNCAPPED, PRACTICE = "capped-in-all", "capped-per-hour", "uncapped", "practice-per-hour"
CAP = 3
AT_ONCE = 8
PASSWORD = "a long password 123"


@dataclass
class Served:
    url: str
    alias: str  # this process's Django alias for the served database
    folder: Path


def _course_with_caps(home: Path) -> Path:
    """The shipped course, its assignment copied three times: three submissions in all, three per
    hour, and none but the service's own."""
    course = home / "course"
    (course / "assignments").mkdir(parents=True)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    shutil.copytree(ASSIGNMENTS / "references", course / "assignments" / "references")
    caps = {
        TOTAL: f"max_submissions = {CAP}\n",
        HOURLY: f"submissions_per_hour = {CAP}\n",
        UNCAPPED: "",
        PRACTICE: f"practice_per_hour = {CAP}\n",
    }
    for name, cap in caps.items():
        folder = course / "assignments" / name
        shutil.copytree(
            ASSIGNMENTS / "sequences-and-attention", folder, ignore=shutil.ignore_patterns("__pycache__", ".*")
        )
        manifest = folder / "assignment.toml"
        text = manifest.read_text().replace('name = "sequences-and-attention"', f'name = "{name}"')
        if name == PRACTICE:  # one of softmax's hidden tests a check the students run, never read
            text = text.replace(
                'functions = ["softmax"]\n', 'functions = ["softmax"]\nchecks = { test_vector = "practice" }\n'
            )
        manifest.write_text(cap + text)  # top-level keys, before the manifest's first table
    listed = ", ".join(f'"assignments/{name}"' for name in caps)
    manifest = (ROOT / "course.toml").read_text()
    (course / "course.toml").write_text(re.sub(r"assignments = \[.*\]", f"assignments = [{listed}]", manifest))
    return course


def _wait_for_answer(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/accounts/login/", timeout=5)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail(f"{url} did not answer within {seconds:.0f} s")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def served(request, tmp_path_factory) -> Iterator[Served]:
    """``autograder serve --workers 0`` on the capped course, on a new SQLite file or PostgreSQL database."""
    from gradebook.database import close_database, open_database

    home = tmp_path_factory.mktemp(f"caps-{request.param}")
    course = _course_with_caps(home)
    alias = ""
    with fresh_database() if request.param == "postgres" else nullcontext() as url:  # SQLite: the course's own file
        options = ["--database-url", url] if url else []
        try:
            with serve(course, commands_env(home), home / "serve.log", workers=0, options=options) as site:
                _wait_for_answer(site.url)
                # This process's own connection to the served database (migrated by the service).
                alias, _ = open_database(course / ".gradewright" / "gradebook.db", url)
                yield Served(site.url, alias, course)
        finally:
            if alias:
                close_database(alias)


@dataclass
class Account:
    student_id: str
    token: str  # for the API
    cookies: dict[str, str]  # a signed-in session, for the page


def _account(served: Served) -> Account:
    """A new student on the roster, with an API token and a session signed in through the sign-in page."""
    from django.contrib.auth.models import User

    from gradebook.models import Student
    from service.accounts.models import ApiToken, Member, digest

    name = f"s{uuid.uuid4().hex[:10]}"
    user = User.objects.db_manager(served.alias).create_user(name, password=PASSWORD)
    row = Student.objects.using(served.alias).create(student_id=name, name=name.title(), on_roster=True)
    Member.objects.using(served.alias).create(user=user, role=Member.STUDENT, student=row)
    token = uuid.uuid4().hex
    ApiToken.objects.using(served.alias).create(user=user, digest=digest(token))
    with httpx.Client(base_url=served.url, timeout=60) as browser:
        browser.get("/accounts/login/")
        signed_in = browser.post(
            "/accounts/login/",
            data={
                "username": name,
                "password": PASSWORD,
                "csrfmiddlewaretoken": browser.cookies["csrftoken"],
            },
        )
        assert signed_in.status_code == 302, signed_in.text
        return Account(name, token, dict(browser.cookies))


@dataclass
class Answer:
    kept: bool
    said: str  # the refusal, as the student reads it
    status: int = 0  # the API's answer (0: through the page)
    retry_after: str = ""  # its Retry-After header


def _through_the_api(served: Served, account: Account, assignment: str) -> Answer:
    answer = httpx.post(
        f"{served.url}/api/v1/submissions",
        headers={"Authorization": f"Token {account.token}"},
        data={"assignment": assignment},
        files={"file": (UPLOAD.name, UPLOAD.read_bytes())},
        timeout=120,
    )
    assert answer.status_code in {201, 400, 429}, answer.text
    said = "" if answer.status_code == 201 else answer.json()["error"]
    return Answer(answer.status_code == 201, said, answer.status_code, answer.headers.get("Retry-After", ""))


def _through_the_page(served: Served, account: Account, assignment: str) -> Answer:
    # A client of its own (its own cookie jar: the page's messages travel in a cookie), on the one session.
    with httpx.Client(base_url=served.url, cookies=account.cookies, timeout=120) as browser:
        page = f"/assignments/{assignment}/"
        answer = browser.post(
            page,
            data={"csrfmiddlewaretoken": account.cookies["csrftoken"]},
            files={"notebook": (UPLOAD.name, UPLOAD.read_bytes())},
        )
        assert answer.status_code == 302, answer.text
        if answer.headers["Location"].startswith("/submissions/"):
            return Answer(True, "")
        assert answer.headers["Location"] == page
        shown = browser.get(page).text
        said = re.search(r'<p class="error" role="alert">(.*?)</p>', shown, re.S)
        assert said, shown
        return Answer(False, said.group(1).strip())


def _all_at_once(served: Served, account: Account, assignment: str) -> list[Answer]:
    """Eight uploads released together: every other one through the API, the rest through the page."""
    start = threading.Barrier(AT_ONCE)

    def send(index: int) -> Answer:
        start.wait(timeout=60)
        through = _through_the_api if index % 2 else _through_the_page
        return through(served, account, assignment)

    with ThreadPoolExecutor(AT_ONCE) as pool:
        return list(pool.map(send, range(AT_ONCE)))


def _check(
    served: Served, account: Account, assignment: str, answers: list[Answer], refusal: str, status: int = 400
) -> None:
    """Three kept, as jobs and as files (each assignment's uploads here are one test's); five refused, saying why,
    the API's with ``status`` (429 for an hourly limit, with Retry-After: the seconds until one more is taken)."""
    from service.handin.models import Job

    said = [answer.said for answer in answers if not answer.kept]
    assert (sum(answer.kept for answer in answers), len(said)) == (CAP, AT_ONCE - CAP), said
    jobs = Job.objects.using(served.alias).filter(student__student_id=account.student_id, assignment=assignment)
    assert jobs.exclude(file="x").count() == CAP  # "x": a job the test made beforehand
    assert all(text.startswith(refusal) for text in said), said
    refused_by_api = [answer for answer in answers if answer.status and not answer.kept]
    assert refused_by_api and all(answer.status == status for answer in refused_by_api), refused_by_api
    if status == 429:
        assert all(0 < int(answer.retry_after) <= 3600 for answer in refused_by_api), refused_by_api
    kept_files = list((served.folder / ".gradewright" / "uploads" / assignment).iterdir())
    assert len(kept_files) == CAP  # a refused upload's file is removed with it


@pytest.mark.timeout(300)
def test_eight_uploads_at_once_against_max_submissions_keep_exactly_three(served):
    account = _account(served)
    answers = _all_at_once(served, account, TOTAL)
    _check(served, account, TOTAL, answers, f"you have used all {CAP} submissions of this assignment")


@pytest.mark.timeout(300)
def test_eight_uploads_at_once_against_submissions_per_hour_keep_exactly_three(served):
    account = _account(served)
    answers = _all_at_once(served, account, HOURLY)
    _check(served, account, HOURLY, answers, f"{CAP} submissions per hour: the next one is possible at ", 429)


@pytest.mark.timeout(300)
def test_eight_uploads_at_once_against_the_services_hourly_cap_keep_exactly_what_it_allows(served):
    from gradebook.models import Student
    from service.handin.models import Job
    from service.handin.uploads import UPLOADS_PER_HOUR

    account = _account(served)
    row = Student.objects.using(served.alias).get(student_id=account.student_id)
    Job.objects.using(served.alias).bulk_create(
        Job(
            student=row,
            assignment=UNCAPPED,
            file="x",
            original_name="x.py",
            size=1,
            sha256=f"{n:064x}",
            state=Job.GRADED,
        )
        for n in range(UPLOADS_PER_HOUR - CAP)
    )
    answers = _all_at_once(served, account, UNCAPPED)
    refusal = f"{UPLOADS_PER_HOUR} submissions in the last hour, the most the service takes; try again later"
    _check(served, account, UNCAPPED, answers, refusal, 429)


@pytest.mark.timeout(300)
def test_eight_runs_of_the_practice_checks_at_once_keep_exactly_three(served):
    """The practice checks' hourly limit (service/handin/practice.py) holds as the hand-ins' do: three
    runs queued, five refused with 429 and Retry-After, and no hand-in made."""
    from service.handin.models import Job, PracticeJob

    account = _account(served)
    start = threading.Barrier(AT_ONCE)

    def ask(index: int) -> httpx.Response:
        start.wait(timeout=60)
        return httpx.post(
            f"{served.url}/api/v1/assignments/{PRACTICE}/practice",
            headers={"Authorization": f"Token {account.token}"},
            files={"file": (UPLOAD.name, UPLOAD.read_bytes())},
            timeout=120,
        )

    with ThreadPoolExecutor(AT_ONCE) as pool:
        answers = list(pool.map(ask, range(AT_ONCE)))
    assert sorted(a.status_code for a in answers) == [201] * CAP + [429] * (AT_ONCE - CAP), [a.text for a in answers]
    refused = [a for a in answers if a.status_code == 429]
    assert all(a.json()["error"].startswith(f"{CAP} runs of the practice checks per hour") for a in refused)
    assert all(0 < int(a.headers["Retry-After"]) <= 3600 for a in refused)
    runs = PracticeJob.objects.using(served.alias).filter(student__student_id=account.student_id)
    assert runs.count() == CAP
    assert not Job.objects.using(served.alias).filter(student__student_id=account.student_id).exists()
    assert len(list((served.folder / ".gradewright" / "practice" / PRACTICE).iterdir())) == CAP  # refused: removed


def test_a_regrade_the_staff_queued_uses_none_of_the_students_submissions():
    from gradebook.models import Student
    from service.core.access import assignments
    from service.handin.models import Job
    from service.handin.uploads import allowance

    row = Student.objects.create(student_id=f"s{uuid.uuid4().hex[:10]}", on_roster=True)
    spec = assignments()["sequences-and-attention"].model_copy(update={"max_submissions": 1, "submissions_per_hour": 1})
    kept = {
        "student": row,
        "assignment": spec.name,
        "file": "x",
        "original_name": "x.py",
        "size": 1,
        "sha256": "0" * 64,
        "state": Job.GRADED,
    }
    Job.objects.create(**kept, regrade=True)
    assert allowance(row, spec) is None
    Job.objects.create(**kept)
    assert allowance(row, spec) == "you have used your only submission of this assignment"
    Job.objects.filter(student=row).delete()  # not for other tests' workers


@pytest.mark.timeout(300)
def test_eight_review_requests_at_once_open_one_thread(served):
    """A student's request to look again at a question, sent eight times at once (a double click, a
    script): one thread, with all eight messages; the database's constraint decides, not a count."""
    from gradebook.models import Student
    from service.handin.models import Job
    from service.marking.models import ReviewMessage, ReviewRequest

    account = _account(served)
    row = Student.objects.using(served.alias).get(student_id=account.student_id)
    job = Job.objects.using(served.alias).create(
        student=row, assignment=UNCAPPED, file="x", original_name="x.py", size=1, sha256="1" * 64, state=Job.GRADED
    )
    start = threading.Barrier(AT_ONCE)

    def ask(index: int) -> int:
        with httpx.Client(base_url=served.url, cookies=account.cookies, timeout=120) as browser:
            start.wait(timeout=60)
            answer = browser.post(
                f"/submissions/{job.id}/review/",
                data={
                    "question": "attention",
                    "message": f"please look again ({index})",
                    "csrfmiddlewaretoken": account.cookies["csrftoken"],
                },
            )
            return answer.status_code

    with ThreadPoolExecutor(AT_ONCE) as pool:
        statuses = list(pool.map(ask, range(AT_ONCE)))
    assert statuses == [302] * AT_ONCE
    (review,) = ReviewRequest.objects.using(served.alias).filter(job=job)
    texts = sorted(ReviewMessage.objects.using(served.alias).filter(request=review).values_list("text", flat=True))
    assert texts == sorted(f"please look again ({index})" for index in range(AT_ONCE))
