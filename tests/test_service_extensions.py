"""An assignment's extensions page: the instructor grants, changes and takes back a student's own due
time (through gradebook.extensions, as `autograder extend`); a teaching assistant reads it; another
student and an anonymous visitor are refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gradebook.models import Extension
from service.accounts.models import Member
from service.core import access

from .served import student

NAME = "sequences-and-attention"
PAGE = f"/staff/extensions/{NAME}/"
DUE = datetime(2026, 12, 8, 23, 59, tzinfo=UTC)


@pytest.fixture
def with_due(monkeypatch):
    """The assignment with a due time (the shipped one has none)."""
    specs = {name: spec.model_copy(update={"due": DUE}) for name, spec in access.assignments().items()}
    monkeypatch.setattr(access, "assignments", lambda: specs)
    # The run's service database is shared by a file's tests and those before it, which grant extensions
    # of the shipped assignment too (tests/test_service_hand_ins.py, tests/test_pages_design.py): the
    # page's "none granted" is asserted, so this test starts and leaves the assignment with none.
    Extension.objects.filter(assignment__name=NAME).delete()
    yield
    Extension.objects.filter(assignment__name=NAME).delete()


def post(client, **fields):
    client.get(PAGE)
    return client.post(PAGE, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def test_the_instructor_grants_changes_and_takes_back_an_extension(with_due):
    alice, as_alice = student()
    teacher, instructor = student(Member.INSTRUCTOR)
    assert post(instructor, action="grant", student_id=alice.username, until="2026-12-10T12:00").status_code == 302
    page = instructor.get(PAGE).content.decode()
    assert "10 Dec 2026, 12:00 UTC" in page and alice.username in page and "Take back" in page
    # Granted by the signed-in instructor, never the account the site runs as (issue #49: "by root").
    assert Extension.objects.get(student__student_id=alice.username).granted_by == teacher.username
    assert f"by {teacher.username}" in page
    assert Extension.objects.get(student__student_id=alice.username).until == datetime(2026, 12, 10, 12, tzinfo=UTC)
    post(instructor, action="grant", student_id=alice.username, until="2026-12-11T09:30")  # changed
    assert Extension.objects.get(student__student_id=alice.username).until == datetime(2026, 12, 11, 9, 30, tzinfo=UTC)
    refused = post(instructor, action="grant", student_id="nobody-here", until="2026-12-11T09:30")
    assert refused.status_code == 302 and "nobody-here" in instructor.get(PAGE).content.decode()
    assert not Extension.objects.filter(student__student_id="nobody-here").exists()
    post(instructor, action="revoke", student_id=alice.username)
    assert not Extension.objects.filter(student__student_id=alice.username).exists()
    assert "No extension granted." in instructor.get(PAGE).content.decode()
    # A teaching assistant reads the page and changes nothing; the student and a visitor see nothing.
    _, ta = student(Member.TA)
    assert ta.get(PAGE).status_code == 200
    assert post(ta, action="grant", student_id=alice.username, until="2026-12-20T12:00").status_code in {403, 404}
    assert not Extension.objects.filter(student__student_id=alice.username).exists()
    post(instructor, action="grant", student_id=alice.username, until="2026-12-10T12:00")
    _, bob = student()
    from django.test import Client

    for other in (as_alice, bob):
        assert other.get(PAGE).status_code == 404
    assert Client().get(PAGE)["Location"].startswith("/accounts/login/")
