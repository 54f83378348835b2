"""LTI: the roster follows the platform course's membership (Names and Role Provisioning Services,
with the statuses the platform sends: Active, Inactive, Deleted, or a member no longer listed), and
an instructor placing an assignment by deep linking stays signed in to the site."""

from __future__ import annotations

import re
import uuid

import pytest
from django.test import Client
from django.utils import timezone

from gradebook.models import Assignment, Student, Submission
from service.core.access import assignments, book

from .lti_platform import INSTRUCTOR, LEARNER
from .test_lti import ASSIGNMENT, launch, registered_platform

pytestmark = pytest.mark.usefixtures("empty_queue")


@pytest.fixture
def lms():
    made = registered_platform(f"LMS {uuid.uuid4().hex[:6]}")
    yield made
    made.close()


def member(sub: str, status: str = "Active", **fields) -> dict:
    return {"user_id": sub, "status": status, "name": f"Member {sub}", "roles": [LEARNER], **fields}


def exported_ids(tmp_path) -> str:
    from gradebook.exports import export_grades

    path, _table = export_grades(book(), [assignments()[ASSIGNMENT]], "canvas", tmp_path / f"{uuid.uuid4().hex}.csv")
    return path.read_text(encoding="utf-8")


def test_the_roster_follows_the_platforms_membership(lms, tmp_path):
    tag = uuid.uuid4().hex[:6]
    # Ids that sort first, so that the gradebook's first page shows them whatever other tests left.
    ada = member(f"ada-{tag}", email=f"ada-{tag}@example.edu", lis_person_sourcedid=f"0ada-{tag}")
    bo = member(f"bo-{tag}", email=f"bo-{tag}@example.edu")
    cy = member(f"cy-{tag}")  # neither email nor SIS id: the roster knows them by the platform's id
    di = member(f"di-{tag}", email=f"di-{tag}@example.edu")
    lms.members = [ada, bo, cy, di]
    staff = Client()
    launch(staff, lms, f"teacher-{tag}", [INSTRUCTOR], custom={"assignment": ASSIGNMENT})
    rows = {
        key: Student.objects.get(student_id=wanted)
        for key, wanted in (
            ("ada", f"0ada-{tag}"),
            ("bo", bo["email"]),
            ("cy", f"lti:{cy['user_id']}"),
            ("di", di["email"]),
        )
    }
    assert all(row.on_roster and row.dropped_at is None for row in rows.values())
    # Ada handed in: her grade stays when she leaves the course.
    Submission.objects.create(
        student=rows["ada"],
        assignment=Assignment.objects.get_or_create(name=ASSIGNMENT)[0],
        sha256="0" * 64,
        graded_at=timezone.now(),
    )
    assert f"0ada-{tag}" in exported_ids(tmp_path)

    # Ada made Inactive, Bo Deleted, Cy removed from the course; Di stays.
    lms.members = [{**ada, "status": "Inactive"}, {**bo, "status": "Deleted"}, di]
    launch(staff, lms, f"teacher-{tag}", [INSTRUCTOR], custom={"assignment": ASSIGNMENT})
    for key in ("ada", "bo", "cy"):
        rows[key].refresh_from_db()
        assert not rows[key].on_roster and rows[key].dropped_at is not None, key
    rows["di"].refresh_from_db()
    assert rows["di"].on_roster and rows["di"].dropped_at is None
    exported = exported_ids(tmp_path)
    assert f"0ada-{tag}" not in exported and bo["email"] not in exported and di["email"] in exported
    assert Submission.objects.filter(student=rows["ada"]).exists()  # the grade kept
    page = staff.get(f"/staff/gradebook/{ASSIGNMENT}/")
    assert page.status_code == 200
    shown = re.search(rf"0ada-{tag}</a>[^<]*<span[^>]*>([^<]*)</span>", page.content.decode())
    assert shown and shown.group(1) == "dropped"

    # Back in the course: back on the roster and in the grade files.
    lms.members = [ada, bo, cy, di]
    launch(staff, lms, f"teacher-{tag}", [INSTRUCTOR], custom={"assignment": ASSIGNMENT})
    for key in ("ada", "bo", "cy"):
        rows[key].refresh_from_db()
        assert rows[key].on_roster and rows[key].dropped_at is None, key
    assert f"0ada-{tag}" in exported_ids(tmp_path)


def test_placing_an_assignment_by_deep_linking_keeps_the_instructor_signed_in(lms):
    """django-lti clears the session on every launch; the deep linking launch signs the instructor
    in again, so that the site's staff pages answer after the assignment is placed."""
    staff = Client()
    chooser = launch(staff, lms, f"teacher-{uuid.uuid4().hex[:6]}", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
    assert chooser.status_code == 200
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', chooser.content.decode()).group(1)
    placed = staff.post("/lti/deep-link/", {"launch_id": launch_id, "assignment": ASSIGNMENT})
    assert placed.status_code == 200 and "deep-link-return" in placed.content.decode()
    for page in (f"/staff/gradebook/{ASSIGNMENT}/", "/staff/platforms/"):
        answer = staff.get(page)
        assert answer.status_code == 200, (page, answer.status_code, answer.get("Location"))
