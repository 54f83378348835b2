"""Named staff accounts: `autograder accounts add NAME --role instructor|ta` makes one (or gives an
account with no role, such as createsuperuser's, its role), never turns a student's account into
staff's (the command itself runs as docs/operators/accounts.md shows it, in tests/test_docs_examples.py);
the console adds a member for an account that has none, which it refused before (403); the Staff page
adds one with a one-time link, and refuses anyone but an instructor."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from service.accounts.members import add_staff
from service.accounts.models import Member
from service.errors import ServiceError

pytestmark = pytest.mark.timeout(300)
PASSWORD = "a long passphrase for the staff 9"


@pytest.fixture
def rolled_back() -> Iterator[None]:
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def test_an_account_without_a_role_is_made_staff_and_a_students_never_is(rolled_back):
    name = f"root-{uuid.uuid4().hex[:8]}"
    User.objects.create_superuser(name, password=PASSWORD)  # what createsuperuser makes: no role
    assert add_staff(name, "instructor") == "made instructor (it had no role)"
    assert Member.objects.get(user__username=name).role == Member.INSTRUCTOR
    assert add_staff(name, "ta") == "made teaching assistant (was instructor)"
    assert add_staff(name, "ta") == "teaching assistant already"
    assert User.objects.get(username=name).check_password(PASSWORD)  # kept as it was
    student = User.objects.create_user(f"s-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=student, role=Member.STUDENT)
    with pytest.raises(ServiceError, match="is a student's account"):
        add_staff(student.username, "ta")
    assert Member.objects.get(user=student).role == Member.STUDENT
    with pytest.raises(ServiceError, match="'student' is not a staff role: give one of instructor, ta"):
        add_staff("ben", "student")
    with pytest.raises(ServiceError, match="too short"):
        add_staff("ben", "ta", password="ben")
    assert not User.objects.filter(username="ben").exists()


def test_the_console_adds_a_member_for_an_account_without_a_role(rolled_back):
    instructor = User.objects.create_user(f"i-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=instructor, role=Member.INSTRUCTOR)
    lonely = User.objects.create_user(f"n-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    student = User.objects.create_user(f"s-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=student, role=Member.STUDENT)
    client = Client(REMOTE_ADDR="192.0.2.72")
    client.force_login(instructor)
    page = client.get("/admin/service/member/add/")
    assert page.status_code == 200
    html = page.content.decode()
    assert lonely.username in html and student.username not in html  # members already are not offered
    assert 'value="ta"' in html and 'value="student"' not in html
    refused = client.post("/admin/service/member/add/", {"user": student.pk, "role": "instructor"})
    assert refused.status_code == 200 and Member.objects.get(user=student).role == Member.STUDENT
    added = client.post("/admin/service/member/add/", {"user": lonely.pk, "role": "ta"})
    assert added.status_code == 302, added.content.decode()[:2000]
    assert Member.objects.get(user=lonely).role == Member.TA
    # A teaching assistant does not reach the console at all.
    ta = Client(REMOTE_ADDR="192.0.2.72")
    ta.force_login(lonely)
    assert ta.get("/admin/service/member/add/").status_code == 404


def test_the_staff_page_adds_a_ta_with_a_one_time_link_and_only_an_instructor_reaches_it(rolled_back):
    from service.accounts.models import SignInLink

    instructor = User.objects.create_user(f"i-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=instructor, role=Member.INSTRUCTOR)
    ta = User.objects.create_user(f"t-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=ta, role=Member.TA)
    student = User.objects.create_user(f"s-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    Member.objects.create(user=student, role=Member.STUDENT)
    # Refused: anyone not signed in (sent to sign in), a student and a teaching assistant, reading or adding.
    assert Client().get("/staff/members/").status_code == 302
    for user in (student, ta):
        client = Client(REMOTE_ADDR="192.0.2.73")
        client.force_login(user)
        assert client.get("/staff/members/").status_code in {403, 404}
        assert client.post("/staff/members/", {"username": "sneaky", "role": "instructor"}).status_code in {403, 404}
    assert not User.objects.filter(username="sneaky").exists()
    client = Client(REMOTE_ADDR="192.0.2.73")
    client.force_login(instructor)
    page = client.get("/staff/members/")
    assert page.status_code == 200 and instructor.username in page.content.decode()
    name = f"ta-{uuid.uuid4().hex[:8]}"
    added = client.post("/staff/members/", {"username": name, "role": "ta", "email": "ta@example.edu"})
    html = added.content.decode()
    assert added.status_code == 200 and f"{name}: teaching assistant account made." in html
    (link,) = re.findall(r'<code id="sign-in-link"[^>]*>(http://testserver/welcome/[^<]+/)</code>', html)
    made = User.objects.get(username=name)
    assert Member.objects.get(user=made).role == Member.TA and not made.has_usable_password()
    assert SignInLink.objects.filter(user=made).count() == 1 and link.rsplit("/", 2)[1] not in str(
        list(SignInLink.objects.filter(user=made).values())
    )  # kept as its digest only
    again = client.get("/staff/members/").content.decode()
    assert name in again and "sign-in-link" not in again  # the link is shown once
    refused = client.post("/staff/members/", {"username": student.username, "role": "ta"})
    assert refused.status_code == 400 and "is a student&#x27;s account" in refused.content.decode()
    assert Member.objects.get(user=student).role == Member.STUDENT
