"""The proctors' view of an online exam while it runs (issue #53): how many have started, are saving,
have gone quiet, have finished, and each one's time left on the server's clock, through the real page
and its live part (Django's test client); the staff's only."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from service.accounts.models import Member
from service.exams.models import ExamAttempt, ExamLogEntry
from service.exams.room import QUIET

from .test_online_exams import account, send, variant
from .test_online_exams import midterm as midterm  # noqa: F401 (the fixture, shared)

pytestmark = pytest.mark.timeout(120)

ROOM = "/staff/online-exams/midterm/room/"


def seat(page: str, student_id: str) -> str:
    return re.search(rf'<tr class="seat" data-state="\w+"><td>{student_id}.*?</tr>', page, re.S).group(0)


def test_the_room_counts_who_started_saves_went_quiet_and_finished_with_their_time_left(midterm):
    key, (saving_id, quiet_id, later_id) = midterm["key"], midterm["ids"]
    saving, quiet, later = account(saving_id), account(quiet_id), account(later_id)
    send(saving, "/exams/midterm/")
    send(quiet, "/exams/midterm/")
    question = variant(key, saving_id).questions[0]
    assert send(saving, "/exams/midterm/answer", position=question.position, value="A").status_code == 200
    # The quiet one's page last reached the server longer ago than the room's limit.
    ExamLogEntry.objects.filter(attempt__student__student_id=quiet_id).update(
        at=timezone.now() - QUIET - timedelta(seconds=30)
    )
    ExamAttempt.objects.filter(exam="midterm", student__student_id=saving_id).update(
        ends_at=timezone.now() + timedelta(minutes=10, seconds=30)
    )
    ta = account(role=Member.TA)
    page = ta.get(ROOM).content.decode()
    assert 'hx-trigger="every 5s"' in page and "htmx.min.js" in page  # live, as the site's other live pages
    assert re.search(r'id="started">2 of 3 students on the roster \(1 not yet\)', page)
    assert re.search(r'id="saving">1<', page) and re.search(r'id="quiet">1 ', page)
    assert re.search(r'id="finished">0<', page)
    mine = seat(page, saving_id)
    assert "saving" in mine and re.search(r'class="left">10 min \d+ s<', mine)  # the server's clock
    assert "gone quiet" in seat(page, quiet_id) and re.search(r">2 min 3\d s ago<", seat(page, quiet_id))
    assert later_id not in page
    # One starts and submits: the live part alone (what the page asks for again) counts them finished.
    send(later, "/exams/midterm/")
    send(later, "/exams/midterm/submit")
    live = ta.get(ROOM + "?part=live").content.decode()
    assert "<html" not in live and live.lstrip().startswith('<div id="room"')
    assert re.search(r'id="started">3 of 3 students on the roster<', live) and re.search(r'id="finished">1<', live)
    assert "(submitted)" in seat(live, later_id)
    # The exam's staff page links to it.
    assert 'href="/staff/online-exams/midterm/room/"' in ta.get("/staff/online-exams/midterm/").content.decode()


def test_the_room_is_the_staffs_only(midterm):
    student = account(midterm["ids"][0])
    send(student, "/exams/midterm/")
    assert student.get(ROOM).status_code == 404
    assert student.get(ROOM + "?part=live").status_code == 404
    anonymous = Client().get(ROOM)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert account(role=Member.INSTRUCTOR).get("/staff/online-exams/nothing/room/").status_code == 404
