"""Run by tests/test_lti.py in a process of its own, on a database of its own (an SQLite file or a
PostgreSQL database: the first argument, "sqlite" for the service's own SQLite file): several senders at once over one outbox, each
score sent exactly once. Prints one line, "sent N scores to N users", or fails with the reason."""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORES, SENDERS = 30, 3


def main(database_url: str) -> None:
    from service.settings import configure

    state = Path(tempfile.mkdtemp(prefix="gradewright-senders-"))
    atexit.register(shutil.rmtree, state, ignore_errors=True)
    configure(ROOT, database_url=None if database_url == "sqlite" else database_url, state=state)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)
    from django.db import connection
    from django.test import Client
    from django.utils import timezone
    from lti_tool.models import LtiUser

    from gradebook.models import Student
    from service.lti.models import ScoreToSend
    from service.lti.outbox import send_due
    from service.lti.platforms import add_platform, platform_settings
    from tests.lti_platform import Platform, course_column

    platform = Platform(tool_jwks=lambda: Client().get("/lti/jwks.json").json())
    registration = add_platform(
        platform_settings(
            name="LMS",
            issuer=platform.issuer,
            client_id=platform.client_id,
            deployment_ids=[platform.deployment_id],
            **platform.endpoints,
        )
    )
    item = course_column(platform, registration)
    now = timezone.now()
    for number in range(SCORES):
        ScoreToSend.objects.create(
            student=Student.objects.create(student_id=f"s{number}"),
            line_item=item,
            lti_user=LtiUser.objects.create(registration=registration, sub=f"u{number}"),
            assignment="a",
            score_given=number % 10,
            score_maximum=10,
            activity_progress="Completed",
            grading_progress="FullyGraded",
            graded_at=now,
            revision="r",
            next_attempt_at=now,
        )
    connection.close()
    start, problems = threading.Barrier(SENDERS), []

    def sender() -> None:
        try:
            start.wait()
            while send_due().tried:
                pass
        except Exception as exc:  # reported by the test
            problems.append(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    platform.close()
    assert not problems, problems
    users = [score["userId"] for _, score in platform.scores]
    assert sorted(users) == sorted(f"u{number}" for number in range(SCORES)), users  # each once
    assert set(ScoreToSend.objects.values_list("state", flat=True)) == {ScoreToSend.SENT}
    print(f"sent {len(users)} scores to {len(set(users))} users")


if __name__ == "__main__":
    main(sys.argv[1])
