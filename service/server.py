"""``autograder serve``: the site, its database brought up to date, a demo instructor on first
start, and N grading workers (``autograder worker``), until stopped."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .settings import MAX_UPLOAD_BYTES

if TYPE_CHECKING:
    from course.folder import CourseFolder

DEMO_INSTRUCTOR = "instructor"
DEMO_STUDENT = "student"


def prepare(course_root: Path, database_url: str | None, demo: bool = True) -> dict[str, str]:
    """Configure Django for the course, migrate, and on a first start (no account yet; with
    ``demo``) make the demo accounts: {username: password}, shown once; empty when accounts exist."""
    from .settings import configure

    configure(course_root, database_url)
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)
    from .lti.platforms import ensure_tool_key

    ensure_tool_key()  # LTI: the tool's signing key, published at /lti/jwks.json
    from gradebook.models import STAFF_PREFIX, Student

    from .models import Member

    if not demo or User.objects.exists():
        return {}
    made = {}
    for username, role in ((DEMO_INSTRUCTOR, Member.INSTRUCTOR), (DEMO_STUDENT, Member.STUDENT)):
        made[username] = secrets.token_urlsafe(12)
        user = User.objects.create_user(username, password=made[username])
        # The demo student's work is filed as the staff's own tries: never counted in grades.
        student = Student.objects.create(student_id=f"{STAFF_PREFIX}{username}") if role == Member.STUDENT else None
        Member.objects.create(user=user, role=role, student=student)
    return made


def serve(course_root: Path, host: str, port: int, workers: int, database_url: str | None,
          say: Callable[[str], None] = print) -> None:  # fmt: skip
    """Serve until interrupted; the workers are stopped with the site."""
    made = prepare(course_root, database_url)
    for username, password in made.items():
        say(f"demo {'instructor' if username == DEMO_INSTRUCTOR else 'student'}: {username} / {password} "
            "(shown once)")  # fmt: skip
    if not made:
        from django.contrib.auth.models import User

        say(f"{User.objects.count()} accounts exist already: `autograder accounts list` lists them, "
            "`autograder accounts password USER` sets a new password")
    started = [_start_worker(course_root, database_url) for _ in range(workers)]
    say(f"serving {course_root} on http://{host}:{port}/ with {workers} grading worker(s); Ctrl-C stops")
    from waitress import serve as waitress_serve

    try:
        # waitress refuses a request body over the upload limit before the site reads any of it.
        waitress_serve(application(), host=host, port=port, threads=8, ident="gradewright",
                       max_request_body_size=MAX_UPLOAD_BYTES + 1024 * 1024, **proxy_options())  # fmt: skip
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def work(
    course: CourseFolder, database_url: str | None, once: bool = False, scheduler: str | None = None,
    unsafe_no_sandbox: bool = False, on_refused: Callable[[str], None] | None = None,
) -> int:  # fmt: skip
    """``autograder worker``: grade the queue's jobs, one at a time, until stopped (with ``once``:
    until the queue is empty), here or on the Dask cluster ``scheduler`` names (else
    ``$DASK_SCHEDULER_ADDRESS``). The number graded."""
    prepare(course.root, database_url)
    from autograder.batch import GradeOptions
    from autograder.cluster import GradingNeeds
    from autograder.distributed import executor_for

    from .settings import state_folder
    from .worker import run_worker

    options = GradeOptions(jobs=1, unsafe_no_sandbox=unsafe_no_sandbox)
    needs = GradingNeeds.here(course.sandbox.packages, unsafe_no_sandbox, [course.root])
    with executor_for(scheduler, needs, on_refused) as executor:
        return run_worker(course, state_folder(course.root), options, once=once, executor=executor)


def application() -> Any:
    """The site's WSGI application; under a JupyterHub's proxy, its prefix taken off first."""
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application

    from .hub import StripPrefix

    prefix = getattr(settings, "FORCE_SCRIPT_NAME", None)
    return StripPrefix(get_wsgi_application(), prefix) if prefix else get_wsgi_application()


def proxy_options() -> dict[str, Any]:
    """waitress's options for the proxy in front of the site, ``$GRADEWRIGHT_TRUSTED_PROXY`` (its
    address). From that proxy only, waitress takes the client's address from X-Forwarded-For into
    REMOTE_ADDR (what sign-in throttling counts by) and keeps X-Forwarded-Proto (what
    GRADEWRIGHT_HTTPS reads); from anyone else, and when no proxy is named, it drops both, since
    anyone can write them."""
    proxy = os.environ.get("GRADEWRIGHT_TRUSTED_PROXY", "").strip()
    if not proxy:
        return {}
    return {"trusted_proxy": proxy, "trusted_proxy_count": 1,
            "trusted_proxy_headers": "x-forwarded-for x-forwarded-proto"}  # fmt: skip


def _start_worker(course_root: Path, database_url: str | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "autograder", "--course", str(course_root), "worker"]
    if database_url:
        command += ["--database-url", database_url]
    return subprocess.Popen(command, env=dict(os.environ))
