"""The roster's accounts: one-time sign-in links (the command's and the instructor's roster page),
a roster imported on the web with its errors said, names neutralised for the spreadsheet."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from gradebook.models import Student
from service.accounts.models import Member

from .served import student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


def test_one_time_sign_in_links_for_the_roster(tmp_path):
    from service.accounts.members import sign_in_links

    name = f"r{uuid.uuid4().hex[:8]}"
    Student.objects.create(student_id=name, name="Rosa Roster", email=f"{name}@example.edu", on_roster=True)
    out = tmp_path / "links.csv"
    assert sign_in_links("http://course.example/", out) >= 1
    import csv

    link = next(row["link"] for row in csv.DictReader(out.open()) if row["student_id"] == name)
    assert link.startswith("http://course.example/welcome/")
    path = link.removeprefix("http://course.example")
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(path)
    assert page.status_code == 200 and f"Welcome, {name}" in page.content.decode()
    done = browser.post(
        path,
        {
            "new_password1": "correct horse battery",
            "new_password2": "correct horse battery",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
        },
    )
    assert done.status_code == 302 and done["Location"] == "/assignments/"
    assert browser.get("/assignments/").status_code == 200  # signed in
    assert Client().get(path).status_code == 404  # used once
    signed_in = Client().post("/accounts/login/", {"username": name, "password": "correct horse battery"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/assignments/"  # the page, throttled
    member = Member.objects.get(user__username=name)
    assert member.role == Member.STUDENT and member.student.student_id == name


def test_the_instructor_imports_the_roster_and_downloads_links_on_the_web(tmp_path):
    import csv

    from django.core.files.uploadedfile import SimpleUploadedFile

    _, instructor = student(Member.INSTRUCTOR)
    tag = uuid.uuid4().hex[:6]
    lines = [
        ["student_id", "name", "email"],
        [f"w{tag}a", '=HYPERLINK("x")', f"a{tag}@example.edu"],
        [f"w{tag}b", "Bea", f"b{tag}@example.edu"],
        ["", "Nobody", f"n{tag}@example.edu"],
    ]
    roster = "".join(",".join(f'"{cell}"'.replace('("x")', '(""x"")') for cell in line) + "\n" for line in lines)

    def post(data):
        instructor.get("/staff/roster/")
        return instructor.post("/staff/roster/", {**data, "csrfmiddlewaretoken": instructor.cookies["csrftoken"].value})

    done = post({"roster": SimpleUploadedFile("roster.csv", roster.encode())})
    assert done.status_code == 302
    page = instructor.get("/staff/roster/").content.decode()
    assert "2 students added, 0 updated" in page and "row 4: no student_id" in page
    assert f"w{tag}a" in page and "=HYPERLINK(&quot;x&quot;)" in page
    links = post({"action": "links"})
    assert links["Content-Type"] == "text/csv"
    rows = {row["student_id"]: row for row in csv.DictReader(links.content.decode().splitlines())}
    assert rows[f"w{tag}a"]["name"] == '\'=HYPERLINK("x")'  # neutralised for the spreadsheet it is mailed from
    assert rows[f"w{tag}b"]["link"].startswith("http://testserver/welcome/")
    repeated = post(
        {"roster": SimpleUploadedFile("r.csv", f"student_id,name,email\nx{tag},A,a\nx{tag},B,b\n".encode())}
    )
    assert "repeated; nothing was imported" in instructor.get(repeated["Location"]).content.decode()
    # A roster student named like a staff account does not make it a student's.
    staff_name = Member.objects.filter(role=Member.INSTRUCTOR).first().user.username
    Student.objects.create(student_id=staff_name, on_roster=True)
    post({"action": "links"})
    assert Member.objects.get(user__username=staff_name).role == Member.INSTRUCTOR
    # Teaching assistants and students do not reach it.
    for role in (Member.TA, Member.STUDENT):
        _, other = student(role)
        assert other.get("/staff/roster/").status_code == 404
