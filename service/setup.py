"""The site's database and first accounts, before it serves: Django configured for the course,
the migrations applied, the LTI tool's key made, and on a first start the starting accounts.

The site and its workers start at once (systemd starts their units together): one process at a
time brings the database up to date, the others wait for it, so that no two create the same table
(PostgreSQL: an advisory lock, for every machine sharing the database; SQLite: a lock on a file in
the state folder, for the processes of its one machine)."""

from __future__ import annotations

import fcntl
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEMO_INSTRUCTOR = "instructor"
DEMO_STUDENT = "student"


def prepare(course_root: Path, database_url: str | None, demo: bool = True) -> dict[str, str]:
    """Configure Django for the course, migrate, and on a first start (no account yet; with
    ``demo``) make the demo accounts: {username: password}, shown once; empty when accounts exist."""
    from .settings import configure

    configure(course_root, database_url)
    from django.core.management import call_command

    with _one_at_a_time():
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)
        from .lti.platforms import ensure_tool_key

        ensure_tool_key()  # LTI: the tool's signing key, published at /lti/jwks.json
        return _first_accounts() if demo else {}


PREPARING = 0x6772_6164_6570  # the advisory lock's key ("gradep"), the same in every process
LOCK_FILE = "prepare.lock"  # in the state folder, on SQLite


@contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Held while a process brings the database up to date; the others wait for it."""
    from django.conf import settings
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [PREPARING])
            try:
                yield
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [PREPARING])
        return
    with (Path(settings.GRADEWRIGHT_STATE) / LOCK_FILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _first_accounts() -> dict[str, str]:
    from django.contrib.auth.models import User

    from gradebook.models import STAFF_PREFIX, Student

    from .accounts.models import Member

    if User.objects.exists():
        return {}
    made = {}
    for username, role in ((DEMO_INSTRUCTOR, Member.INSTRUCTOR), (DEMO_STUDENT, Member.STUDENT)):
        made[username] = secrets.token_urlsafe(12)
        user = User.objects.create_user(username, password=made[username])
        # The demo student's work is filed as the staff's own tries: never counted in grades.
        student = Student.objects.create(student_id=f"{STAFF_PREFIX}{username}") if role == Member.STUDENT else None
        Member.objects.create(user=user, role=role, student=student)
    return made
