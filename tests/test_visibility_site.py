"""What a student sees, and when (issue #51), on the site: the submission's page and the API give
a student only what autograder.visibility allows, for every visibility value, before and after the
due time and once published; the staff publish (and unpublish) on the gradebook's page, which
another student and an anonymous visitor cannot; the course platform is told Pending, with no
score, before publishing, and FullyGraded with the score once published (LTI AGS)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from autograder.reports.model import QuestionResult, Report
from autograder.reports.model import TestOutcome as Outcome  # (not a test class)
from autograder.visibility import VISIBILITIES
from gradebook.grading import record_report
from gradebook.models import Student
from gradebook.publishing import published_state
from service.accounts.models import Member
from service.core import access
from service.core.access import assignments, book
from service.handin.models import Job

from .served import student

NAME = "sequences-and-attention"
SHOWN, UNSEEN = "test_shown_check", "test_unseen_check"
# What the grader writes of softmax, both checks failing (autograder/explain.py's order).
FEEDBACK = "\n".join(
    ["NAMED-MISTAKE of softmax.", "0 of 2 checks passed."]
    + [f"- MESSAGE-{name}. Checked: SENTENCE-{name}." for name in (SHOWN, UNSEEN)]
)


def with_spec(monkeypatch, **update):
    """The course's assignment, as the site reads it, with ``update`` (its visibility settings)."""
    real = dict(assignments())
    spec = real[NAME].model_copy(update=update)
    monkeypatch.setattr(access, "assignments", lambda: {**real, NAME: spec})
    return spec


def graded(spec, user) -> Job:
    """A graded hand-in of the student's: softmax with a check of each kind, its texts marked."""
    row = Student.objects.get(student_id=user.username)
    questions = []
    for q in spec.questions:
        tests = []
        if q.id == "softmax":
            tests = [
                Outcome(
                    question=q.id,
                    name=name,
                    description=f"SENTENCE-{name}.",
                    status="failed",
                    message=f"MESSAGE-{name}.",
                )
                for name in (SHOWN, UNSEEN)
            ]
        questions.append(
            QuestionResult(
                id=q.id,
                score=0.0 if tests else q.points,
                max_score=q.points,
                status="failed" if tests else "passed",
                feedback=FEEDBACK if tests else "",
                tests=tests,
            )
        )
    report = Report(
        student=user.username,
        assignment=spec.name,
        score=sum(q.score for q in questions),
        max_score=spec.max_score,
        questions=questions,
        submission="x.py",
        sha256=user.username.ljust(64, "0"),
        reference="numpy",
        sandbox="test",
        graded_at=timezone.now().isoformat(timespec="seconds"),
        grader_version="test",
    )
    gradebook = book()
    assignment = gradebook.run(lambda: gradebook.sync_assignment(spec))
    submission = gradebook.run(lambda: record_report(gradebook, assignment, report))
    return Job.objects.create(
        student=row,
        assignment=spec.name,
        file="x",
        original_name="x.py",
        size=1,
        sha256=report.sha256,
        state=Job.GRADED,
        submission=submission,
    )


@pytest.mark.parametrize("value", VISIBILITIES)
@pytest.mark.parametrize("due_passed", [False, True], ids=["before the due time", "after it"])
def test_the_page_and_the_api_show_a_student_no_more_than_the_rule(monkeypatch, value, due_passed):
    due = timezone.now() + (timedelta(hours=-1) if due_passed else timedelta(days=1))
    softmax = {"visibility": None, "checks": {SHOWN: "visible", UNSEEN: value}}
    spec = with_spec(monkeypatch, visibility="visible", publish="by_staff", due=due)
    spec = with_spec(
        monkeypatch,
        visibility="visible",
        publish="by_staff",
        due=due,
        questions=[q.model_copy(update=softmax) if q.id == "softmax" else q for q in spec.questions],
    )
    user, client = student()
    job = graded(spec, user)
    shown = value == "visible" or (value == "after_due" and due_passed)
    page = client.get(f"/submissions/{job.id}/").content.decode()
    answer = client.get(f"/api/v1/submissions/{job.id}").json()
    for face, text in (("the page", page), ("the API", json.dumps(answer))):
        assert "SENTENCE-test_shown_check" in text, face
        for marker in (UNSEEN, f"SENTENCE-{UNSEEN}", f"MESSAGE-{UNSEEN}", "NAMED-MISTAKE"):
            assert (marker in text) == shown, (face, marker, value)
        if not shown:
            assert "more point" in text and "decided by checks you will" in text, face
    if not shown:  # the honest totals, as such, at the top of the page
        assert 'id="shown-part">Visible checks: ' in page
    if not shown:
        assert answer["report"]["score"] is None and answer["report"]["hidden_results"] == "in part"


def test_the_staff_publish_on_the_gradebooks_page_and_no_student_can(monkeypatch):
    spec = with_spec(monkeypatch, publish="by_staff")
    staff, staff_client = student(Member.INSTRUCTOR)
    other, other_client = student()
    page = staff_client.get(f"/staff/gradebook/{NAME}/")
    assert "Published grades" in page.content.decode()
    token = staff_client.cookies["csrftoken"].value
    refused = other_client.post(
        f"/staff/publish/{NAME}/",
        {"action": "publish", "csrfmiddlewaretoken": other_client.cookies.get("csrftoken", "")},
    )
    assert refused.status_code in {403, 404}
    assert Client().post(f"/staff/publish/{NAME}/", {"action": "publish"}).status_code in {302, 403}
    assert not published_state(book(), spec).assignment
    done = staff_client.post(
        f"/staff/publish/{NAME}/", {"action": "publish", "reason": "reviewed", "csrfmiddlewaretoken": token}
    )
    assert done.status_code == 302 and published_state(book(), spec).assignment
    page = staff_client.get(f"/staff/gradebook/{NAME}/").content.decode()
    assert "grades published by" in page and "reviewed" in page
    staff_client.post(f"/staff/publish/{NAME}/", {"action": "unpublish", "csrfmiddlewaretoken": token})
    assert not published_state(book(), spec).assignment


def test_the_platform_is_told_pending_before_publishing_and_the_score_once_published(monkeypatch):
    from gradebook.publishing import publish
    from service.lti.scores import current_score

    spec = with_spec(monkeypatch, publish="by_staff")
    user, _ = student()
    graded(spec, user)
    row = Student.objects.get(student_id=user.username)
    before = current_score(book(), spec, row)
    assert (before.activity_progress, before.grading_progress) == ("Submitted", "Pending")
    publish(book(), spec, by="test")
    after = current_score(book(), spec, row)
    assert after.grading_progress == "FullyGraded" and after.given == spec.max_score - 2


@pytest.mark.parametrize("progress", ["Pending", "FullyGraded"])
def test_a_pending_grade_reaches_the_platform_without_a_score(monkeypatch, progress):
    from types import SimpleNamespace

    from service.lti import outbox

    sent = []

    class Platform:
        def put_grade(self, grade, line_item):
            sent.append(grade.get_value())

    monkeypatch.setattr(outbox, "service", lambda *args: Platform())
    row = SimpleNamespace(
        lti_user=SimpleNamespace(sub="s-1"),
        score_given=7.0,
        score_maximum=10.0,
        activity_progress="Submitted" if progress == "Pending" else "Completed",
        grading_progress=progress,
        graded_at=timezone.now(),
        line_item=SimpleNamespace(context=None, url="https://lms.example/line_items/1"),
    )
    outbox._put(row, None)
    (grade,) = [json.loads(value) if isinstance(value, str) else value for value in sent]
    assert grade["gradingProgress"] == progress
    assert ("scoreGiven" in grade) == (progress == "FullyGraded")
