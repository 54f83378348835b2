from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from commands.course import main as course_main
from course.exams.variants import ExamKey, Variant, VariantQuestion

from .postgres import fresh_database, needs_postgres

ROOT = Path(__file__).resolve().parent.parent
# The fixtures' own assignments hold hidden tests (test_*.py) that the grader runs, never pytest.
collect_ignore_glob = ["fixtures/*"]


def _configure_django() -> None:
    """One Django for the whole run: the grading service's, for the shipped course, its state in a
    temporary folder. The gradebook's own tests open their gradebooks as further databases of it."""
    import tempfile

    from service.settings import configure

    state = Path(tempfile.mkdtemp(prefix="gradewright-service-test-"))
    atexit.register(shutil.rmtree, state, ignore_errors=True)  # this process's, gone when it ends
    configure(ROOT, state=state)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)


_configure_django()


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's PBKDF2 with few iterations, for the accounts the tests make and sign in to in this process
    (hundreds; a million iterations cost 0.2 s of CPU each here). Its hashes are PBKDF2's own, each with
    its iterations written in it: a served site (a process of its own, with Django's hashers) verifies
    them as they are, and makes them full strength at the first sign-in."""

    iterations = 1_000


def _quick_password_hashing() -> None:
    from django.conf import settings

    full = "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    quick = f"{__name__}.{QuickPBKDF2PasswordHasher.__name__}"
    settings.PASSWORD_HASHERS = [quick, *(name for name in settings.PASSWORD_HASHERS if name != full)]


_quick_password_hashing()


def _patient_browser_assertions() -> None:
    """Playwright's `expect` waits up to 5 s by default; on a busy 2-core machine a page can take
    longer to answer. One wait for every browser test: they wait for what they check, never time it."""
    try:
        from playwright.sync_api import expect
    except ImportError:  # no Playwright: the browser tests skip
        return
    expect.set_options(timeout=20_000)


_patient_browser_assertions()
# Reference values remembered on disk (autograder/remembered.py) go to a folder of this run's own:
# shared by the run's grading subprocesses, never by another run or the user's grading.
os.environ["GRADEWRIGHT_REFERENCE_CACHE"] = __import__("tempfile").mkdtemp(prefix="gradewright-reference-values-")
atexit.register(shutil.rmtree, os.environ["GRADEWRIGHT_REFERENCE_CACHE"], ignore_errors=True)
LESSON_DATA = ROOT / "lesson_data"
JSON_LESSON = LESSON_DATA / "from-sequences-to-attention.lesson.json"
MODULE_PAGE = LESSON_DATA / "module-10-sequences-and-attention.md"
TEXT_LESSON = LESSON_DATA / "sequences-from-recurrence-to-attention.txt"
NUMBERED_TEXT_LESSON = LESSON_DATA / "lesson-4-sequences-and-transformers.txt"
SHARED = ROOT.parent / "shared"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def course(capsys):
    """Run the `course` command in-process: course("validate", "x") -> Result."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        try:
            code = course_main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def seed_document() -> dict:
    return json.loads(JSON_LESSON.read_text(encoding="utf-8"))


@pytest.fixture
def lesson_document(seed_document) -> dict:
    """A fresh, mutable copy of the JSON lesson export."""
    return copy.deepcopy(seed_document)


ASSIGNMENTS = ROOT / "assignments"


def _sandbox_missing() -> list[str]:
    from autograder.sandbox.runners import missing_for_sandbox

    return missing_for_sandbox()


# Sandboxed tests run wherever bubblewrap can start; on CI (which installs it) they never skip.
_MISSING = _sandbox_missing()
needs_sandbox = pytest.mark.skipif(
    bool(_MISSING) and os.environ.get("CI") != "true",
    reason=f"the sandbox cannot start here: missing {'; '.join(_MISSING)}",
)

LEFT_BEHIND = "left unfinished by an earlier test"


@pytest.fixture
def empty_queue():
    """The service's queue, empty: each test that grades the queue starts with nothing in it but its
    own jobs. A job another test left queued (a test that failed midway, or one that only hands
    in) would otherwise be claimed, graded and counted by this test's worker. Such jobs are ended
    as failed, not deleted, so what a test reads of its own students' jobs stays as it was."""
    from django.utils import timezone

    from service.handin.models import Job

    def end_unfinished() -> None:
        Job.objects.filter(state__in=[Job.QUEUED, Job.GRADING]).update(
            state=Job.FAILED, error=LEFT_BEHIND, finished_at=timezone.now(), lease_expires_at=None
        )

    end_unfinished()
    yield
    end_unfinished()  # and none is left for the next


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``autograder serve`` on a copy of the shipped course, with one worker, for the module that asks
    (each module its own): (its address, the demo accounts' passwords by username, the course copy,
    the environment for commands). One assignment is due 30 hours ago, with a late penalty; an exam
    with two open questions for the walk-through's roster is listed, for the staff to mark."""
    from datetime import timedelta

    from django.utils import timezone

    from course.exams.build import build_exam

    from .served import commands_env, course_copy, serve

    home = tmp_path_factory.mktemp("served")
    copy = course_copy(home)
    late = copy / "assignments" / "attention-not-explanation" / "assignment.toml"
    due = (timezone.now() - timedelta(hours=30)).isoformat(timespec="seconds")
    late.write_text(f'due = {due}\nlate_penalty = "10% per day"\n' + late.read_text())
    # The exam is listed last: the module's table is the manifest's last.
    (copy / "exams").mkdir()
    roster = ROOT / "docs" / "walkthrough" / "roster.csv"
    build_exam(roster, copy / "exams" / "midterm", seed=4, lessons=[copy / "lesson_data"], open_questions=2)
    with (copy / "course.toml").open("a") as manifest:
        manifest.write('exams = ["exams/midterm"]\n')
    env = commands_env(home)
    with serve(copy, env, home / "serve.log", workers=1, options=["--threads", "3"]) as site:
        assert set(site.passwords) == {"instructor", "student"}, site.log.read_text()
        assert ", 3 requests at a time; Ctrl-C stops" in site.log.read_text()  # --threads, as waitress took it
        yield site.url, site.passwords, copy, env


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def database(request, tmp_path):
    """Gradebook options for a fresh gradebook: an SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield ["--gradebook", str(tmp_path / "gradebook.db")]
        return
    with fresh_database() as url:
        yield ["--database-url", url]


def open_question_drawn(key: ExamKey) -> tuple[str, list[tuple[Variant, VariantQuestion]]]:
    """An exam's first open question (its first variant's) and, in the roster's order, each variant
    that drew it with where the question is on it (open questions vary between variants)."""
    question = next(q for q in key.variants[0].questions if q.kind == "open").question
    drew = [
        (variant, placed) for variant in key.variants for placed in variant.questions if placed.question == question
    ]
    return question, drew


@pytest.fixture
def exam(tmp_path, monkeypatch):
    """An exam of two open questions for the walk-through's roster, listed by the course (the
    exams' marking pages': tests/test_exam_marking.py, tests/test_answer_groups.py)."""
    import uuid

    from course.exams.build import build_exam
    from service.core.access import course
    from service.exams import marking as exam_marking
    from service.exams.models import ExamAttempt
    from service.marking import answers as hand_grading

    # Attempts an earlier test made under this name were another exam's (marks are by title, attempts
    # by name): this one starts untaken, as if on paper.
    ExamAttempt.objects.filter(exam="midterm").delete()
    folder = tmp_path / "exams" / "midterm"
    folder.parent.mkdir()
    # A title of its own: the service's database is shared by the run's tests, and marks are by title.
    build_exam(
        ROOT / "docs" / "walkthrough" / "roster.csv",
        folder,
        seed=4,
        lessons=[LESSON_DATA],
        open_questions=2,
        title=f"Midterm {uuid.uuid4().hex[:8]}",
    )
    module = course().modules[0].model_copy(update={"exams": [str(folder)]})
    listed = course().model_copy(update={"modules": [module]})
    monkeypatch.setattr(exam_marking, "course", lambda: listed)
    monkeypatch.setattr(hand_grading, "course", lambda: listed)
    return folder
