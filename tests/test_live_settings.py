"""A typo in a live settings file (``due = "next tuesday"`` in an assignment.toml, a broken
course.toml) stops nothing: the last good settings stay in force, hand-ins to every assignment and
the API go on, and the fault is said on the staff's pages (a banner), in the log (once per change,
not per request) and in /readyz, until the file is fixed (service/core/live_settings.py)."""

from __future__ import annotations

import logging
import os

import pytest
from django.test import Client, override_settings

from service.accounts.models import Member
from service.core.access import reread_course
from service.handin.models import Job

from .served import PARTIAL, course_copy, hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")
TYPO = 'due = "next tuesday"\n'


@pytest.fixture
def live_course(tmp_path):
    """A copy of the shipped course served by this run's site, its assignments read once (in force)."""
    copy = course_copy(tmp_path)
    with override_settings(GRADEWRIGHT_COURSE=str(copy)):
        reread_course()
        try:
            yield copy
        finally:
            reread_course()


def _edit(path, text: str) -> None:
    """Write ``text``, as a later edit: a new modification time even within the clock's tick."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def _listed(client: Client) -> dict[str, dict]:
    answer = client.get("/api/v1/assignments")
    assert answer.status_code == 200, answer.content
    return {row["name"]: row for row in answer.json()["assignments"]}


def test_a_typo_in_a_live_assignment_toml_keeps_the_last_good_settings_and_says_so(live_course, caplog):
    _, pupil = student()
    _, staff = student(Member.INSTRUCTOR)
    manifest = live_course / "assignments" / "sequences-and-attention" / "assignment.toml"
    good = manifest.read_text(encoding="utf-8")
    _edit(manifest, "due = 2031-05-17T09:00:00Z\n" + good)
    assert _listed(pupil)["sequences-and-attention"]["due"].startswith("2031-05-17")  # in force
    assert "settings-faults" not in staff.get("/assignments/").content.decode()

    caplog.set_level(logging.WARNING, logger="gradewright.settings")
    _edit(manifest, TYPO + good)
    for _ in range(3):  # every request, and each hand-in, goes on with the settings read before
        listed = _listed(pupil)
        assert set(listed) == {"sequences-and-attention", "attention-not-explanation"}
        assert listed["sequences-and-attention"]["due"].startswith("2031-05-17")
    before = Job.objects.count()
    assert hand_in(pupil, PARTIAL).status_code == 302
    assert hand_in(pupil, PARTIAL, "attention-not-explanation").status_code == 302
    assert Job.objects.count() == before + 2

    page = staff.get("/assignments/").content.decode()
    assert 'id="settings-faults"' in page and "assignments/sequences-and-attention/assignment.toml" in page
    assert "the settings read before stay in force until it is fixed" in page
    assert "settings-faults" not in pupil.get("/assignments/").content.decode()  # the staff's to fix
    ready = Client().get("/readyz").json()
    assert ready["ready"] is True and len(ready["settings"]) == 1
    assert ready["settings"][0].startswith("assignments/sequences-and-attention/assignment.toml: ")
    said = [record.getMessage() for record in caplog.records if record.name == "gradewright.settings"]
    assert len(said) == 1 and "assignment.toml" in said[0] and "stay in force" in said[0]  # once, not per request

    _edit(manifest, good)  # fixed: read at once, and said once
    assert not (_listed(pupil)["sequences-and-attention"]["due"] or "").startswith("2031-05-17")
    assert Client().get("/readyz").json()["settings"] == "ok"
    assert "settings-faults" not in staff.get("/assignments/").content.decode()
    said = [record.getMessage() for record in caplog.records if record.name == "gradewright.settings"]
    assert len(said) == 2 and said[1].endswith("is read again: its settings are in force")


def test_a_broken_live_course_toml_keeps_the_course_as_it_read(live_course):
    _, pupil = student()
    _, staff = student(Member.INSTRUCTOR)
    course_file = live_course / "course.toml"
    good = course_file.read_text(encoding="utf-8")
    assert len(_listed(pupil)) == 2
    _edit(course_file, good.replace('title = "Machine Learning, Foundations"', "title = Machine Learning"))
    assert len(_listed(pupil)) == 2 and hand_in(pupil, PARTIAL).status_code == 302
    page = staff.get("/assignments/").content.decode()
    assert 'id="settings-faults"' in page and "course.toml" in page
    ready = Client().get("/readyz").json()
    assert ready["ready"] is True and ready["settings"][0].startswith("course.toml: ")


def test_an_assignment_added_with_a_typo_is_left_out_and_said(live_course):
    _, pupil = student()
    manifest = live_course / "assignments" / "attention-not-explanation" / "assignment.toml"
    _edit(manifest, TYPO + manifest.read_text(encoding="utf-8"))
    reread_course()  # as a site started after the typo: no good reading to keep
    assert set(_listed(pupil)) == {"sequences-and-attention"}
    ready = Client().get("/readyz").json()
    assert ready["ready"] is True and "its assignment is left out" in ready["settings"][0]
