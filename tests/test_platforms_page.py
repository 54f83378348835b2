"""The instructor's Course platforms page says where each score not sent stands, in words and why
(one being sent now, one to be tried again with the platform's answer, one failed), a next attempt
less than a minute away as such, and counts in the plural only where there are several."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from gradebook.models import Student
from service.accounts.models import Member
from service.lti.models import ScoreToSend
from service.lti.outbox import CLAIM
from service.templatetags.pages import ago

from .test_lti import ASSIGNMENT, registered_platform

pytestmark = pytest.mark.usefixtures("empty_queue")


def row_text(page: str, sub: str) -> str:
    row = re.search(rf"<tr[^>]*><td>{re.escape(sub)}</td>(.*?)</tr>", page, re.S)
    assert row, sub
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(1)))


def test_each_score_not_sent_says_where_it_stands_and_why():
    from lti_tool.models import LtiContext, LtiLineItem, LtiUser

    from .served import student

    platform = registered_platform(f"LMS {uuid.uuid4().hex[:6]}")
    try:
        context = LtiContext.objects.create(
            deployment=platform.registration.deployments.get(), id_on_platform="c-p", can_publish_scores=True
        )
        item = LtiLineItem.objects.create(
            context=context,
            url=f"{platform.base}/lineitems/p",
            label="Column P",
            maximum_score=10,
            resource_id=ASSIGNMENT,
        )
        now, tag = timezone.now(), uuid.uuid4().hex[:6]
        rows = {
            # (state, attempts, next attempt, last error)
            f"flight-{tag}": (ScoreToSend.PENDING, 0, now + CLAIM, ""),  # claimed by a sender just now
            f"retry-{tag}": (
                ScoreToSend.PENDING,
                2,
                now + timedelta(seconds=40),
                "the platform did not answer in time",
            ),
            f"failed-{tag}": (ScoreToSend.FAILED, 20, now, "the platform refused the score (HTTP 400)"),
        }
        for sub, (state, attempts, next_at, error) in rows.items():
            ScoreToSend.objects.create(
                student=Student.objects.create(student_id=sub),
                lti_user=LtiUser.objects.create(registration=platform.registration, sub=sub),
                line_item=item,
                assignment=ASSIGNMENT,
                score_given=5,
                score_maximum=10,
                activity_progress="Completed",
                grading_progress="FullyGraded",
                graded_at=now,
                revision="r",
                state=state,
                attempts=attempts,
                next_attempt_at=next_at,
                last_error=error,
            )
        _, instructor = student(Member.INSTRUCTOR)
        page = unescape(instructor.get("/staff/platforms/").content.decode())
        flight = row_text(page, f"flight-{tag}")
        assert "being sent" in flight and "sending it now" in flight and "pending" not in flight
        retry = row_text(page, f"retry-{tag}")
        assert "to be tried again" in retry and "did not answer in time" in retry
        assert "(in under a minute)" in retry and "just now" not in retry
        failed = row_text(page, f"failed-{tag}")
        assert "failed" in failed and "HTTP 400" in failed
        assert ago(now - timedelta(seconds=20)) == "just now"
        failing = ScoreToSend.objects.filter(state=ScoreToSend.FAILED).count()  # this one, and any another test left
        done = instructor.post(
            "/staff/platforms/",
            {"action": "retry", "csrfmiddlewaretoken": instructor.cookies["csrftoken"].value},
            follow=True,
        )
        said = unescape(done.content.decode())
        assert ("1 failed score will" if failing == 1 else f"{failing} failed scores will") + " be sent again" in said
    finally:
        platform.close()


def test_the_grade_files_page_warns_as_the_command_line_does():
    """The warnings `autograder grades export` prints for Canvas's and Moodle's files (empty Canvas
    ids, which field to map Moodle's import by) are on the page, before the download."""
    from gradebook.exports import WARNINGS, grades_table
    from service.core.access import assignments, book

    from .served import student

    tag = uuid.uuid4().hex[:6]
    Student.objects.create(student_id=f"no-ids-{tag}", on_roster=True)  # no Canvas or SIS id
    Student.objects.create(student_id=f"email-{tag}", email=f"e-{tag}@example.edu", on_roster=True)
    _, staff = student(Member.TA)
    page = unescape(staff.get("/staff/exports/").content.decode())
    shown = re.search(r'<section id="export-warnings".*?</section>', page, re.S)
    assert shown
    table = grades_table(book(), list(assignments().values()))
    for kind, label in (("canvas", "Canvas"), ("moodle", "Moodle")):
        said = WARNINGS[kind](table)
        assert said and f">{label}</p>" in shown.group(0)
        assert all(f"<li>{line}</li>" in shown.group(0) for line in said), (kind, said)
    assert "have no canvas_id or sis_id" in shown.group(0) and "map the import by" in shown.group(0)
