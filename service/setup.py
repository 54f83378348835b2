"""The site's database and first accounts, before it serves: Django configured for the course,
the migrations applied, the LTI tool's key made, and on a first start the starting accounts."""

from __future__ import annotations

import secrets
from pathlib import Path

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
