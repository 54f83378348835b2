"""A platform's words are text from outside (issue #54): its error body, ESC and BEL and all, reaches the
outbox's log line, its ``last_error`` (the staff's page, the command) only through the one escaping rule."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.utils import timezone

from gradebook.models import Student
from service.lti.models import ScoreToSend
from service.lti.outbox import send_due

from .conftest import ROOT
from .lti_platform import course_column
from .test_lti import registered_platform

pytestmark = pytest.mark.usefixtures("empty_queue")
# A terminal's hyperlink, a bell and a screen clear, as a platform's error body.
HOSTILE = b"Bad \x1b]8;;http://evil.example/\x07score\x1b]8;;\x07\n\x1b[2J refused\x07"
SHOWN = r"Bad \x1b]8;;http://evil.example/\x07score\x1b]8;;\x07 \x1b[2J refused\x07"


@pytest.fixture
def refusing_platform():
    made = registered_platform(f"LMS {uuid.uuid4().hex[:6]}")
    made.score_refusal = (400, HOSTILE)
    yield made
    made.close()


def _score_to_send(platform) -> ScoreToSend:
    from lti_tool.models import LtiUser

    item = course_column(platform, platform.registration, f"course-{uuid.uuid4().hex[:6]}")
    now = timezone.now()
    return ScoreToSend.objects.create(
        student=Student.objects.create(student_id=f"esc-{uuid.uuid4().hex[:6]}"),
        line_item=item,
        lti_user=LtiUser.objects.create(registration=platform.registration, sub=f"u-{uuid.uuid4().hex[:6]}"),
        assignment="a",
        score_given=7,
        score_maximum=10,
        activity_progress="Completed",
        grading_progress="FullyGraded",
        graded_at=now,
        revision="r",
        next_attempt_at=now,
    )


def test_a_platforms_control_characters_are_escaped_in_the_log_the_row_and_the_command(
    refusing_platform, caplog, capsys
):
    row = _score_to_send(refusing_platform)
    with caplog.at_level(logging.WARNING):
        outcome = send_due()
    row.refresh_from_db()
    assert row.state == ScoreToSend.PENDING and row.attempts == 1
    assert row.last_error == f"the platform answered 400: {SHOWN}"
    (line,) = [line for line in outcome.waiting if row.student.student_id in line]
    (logged,) = [record.getMessage() for record in caplog.records if row.student.student_id in record.getMessage()]
    for said in (row.last_error, line, logged):
        assert "\x1b" not in said and "\x07" not in said and SHOWN in said
    # The command tries it again and lists it, escaped too.
    from commands.autograder import main

    ScoreToSend.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now())
    capsys.readouterr()
    main(["--course", str(ROOT), "lti", "send-scores"])
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert any(row.student.student_id in said and SHOWN in said for said in err.splitlines())


def test_a_platforms_control_characters_in_a_roster_refusal_are_escaped_in_the_log(caplog):
    from django.test import Client

    from .lti_platform import INSTRUCTOR
    from .test_lti import launch

    platform = registered_platform(f"LMS {uuid.uuid4().hex[:6]}")
    platform.members_refusal = (500, HOSTILE)
    try:
        with caplog.at_level(logging.WARNING):
            launched = launch(Client(), platform, f"teacher-{uuid.uuid4().hex[:6]}", [INSTRUCTOR])
    finally:
        platform.close()
    assert launched.status_code == 302  # the launch goes on without the roster
    (logged,) = [r.getMessage() for r in caplog.records if "roster could not be read" in r.getMessage()]
    assert "\x1b" not in logged and "\x07" not in logged and r"\x1b]8;;http://evil.example/\x07" in logged
