"""A hand mark is written by one gradebook function, ``gradebook.marking.marks.give_mark``, which checks its
score's bounds: the marking page, the staff's override and the marks sheet all record through it, and
a score out of bounds is the gradebook's error (a form error on the page, never a 500; a numbered row
of the sheet). The course's rows are written straight into the tables (tests/course_data.py) inside a
transaction rolled back afterwards: each test sees only its own students."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from gradebook.errors import BadEdit
from gradebook.marking.marks import give_mark, remove_mark
from gradebook.models import Mark, Student, Submission
from service.accounts.models import Member
from service.core.access import assignments, book
from service.handin.models import Job

from .course_data import seed

pytestmark = pytest.mark.timeout(300)

GRADED = "sequences-and-attention"  # its "attention" question is worth 3 points
HAND = "attention-not-explanation"  # its "written" question is graded by hand, with a rubric


@contextmanager
def seeded_course() -> Iterator[dict[str, Client]]:
    """Four students with graded submissions of both assignments; a TA's, a student's and an
    anonymous client. Undone afterwards."""
    with transaction.atomic():
        Student.objects.all().delete()  # other tests' students: back with the rollback
        for name in (GRADED, HAND):
            seed(assignments()[name], 4, prefix="w-", accounts=name == GRADED)
        ta = User.objects.create_user("mark-writer-ta")
        Member.objects.create(user=ta, role=Member.TA)
        clients = {"ta": Client(), "student": Client(), "anonymous": Client()}
        clients["ta"].force_login(ta)
        clients["student"].force_login(User.objects.get(username="u-w-00002"))  # not the student marked below
        yield clients
        transaction.set_rollback(True)


def latest(student_id: str, assignment: str) -> Submission:
    return Submission.objects.filter(student__student_id=student_id, assignment__name=assignment).latest("id")


def question(assignment: str, question_id: str):
    return next(q for q in assignments()[assignment].questions if q.id == question_id)


def test_give_mark_checks_the_bounds_and_the_last_mark_given_wins():
    with seeded_course():
        submission, attention = latest("w-00001", GRADED), question(GRADED, "attention")
        with pytest.raises(BadEdit, match=r"^score 4 is outside 0\.\.3$"):
            give_mark(book(), submission, attention, 4.0, "too many", "ta")
        with pytest.raises(BadEdit, match=r"^score -0\.5 is outside 0\.\.3$"):
            give_mark(book(), submission, attention, -0.5, "too few", "ta")
        assert not Mark.objects.filter(student=submission.student, question_id="attention").exists()
        give_mark(book(), submission, attention, 3.0, "right after all", "ta")
        given = give_mark(book(), submission, attention, 2.5, "second thoughts", "another-ta")
        rows = Mark.objects.filter(student=submission.student, question_id="attention")
        assert [(m.id, m.score, m.comment, m.marked_by, m.submission_id) for m in rows.all()] == [
            (given.id, 2.5, "second thoughts", "another-ta", submission.id)
        ]
        remove_mark(book(), submission, "attention")
        assert not rows.all().exists()  # .all(): a fresh query, not the rows read above


def test_the_override_page_says_the_gradebooks_bounds_error_and_writes_nothing():
    with seeded_course() as clients:
        submission = latest("w-00001", GRADED)
        job = Job.objects.create(
            student=submission.student,
            assignment=GRADED,
            file=submission.file,
            original_name="hand-in.ipynb",
            size=1,
            sha256=submission.sha256,
            state=Job.GRADED,
            submission=submission,
        )
        ta = clients["ta"]

        def override(client: Client, **fields: str):
            return client.post(f"/staff/override/{job.id}/", {"question": "attention", **fields})

        refused = override(ta, score="4", reason="too many")
        assert refused.status_code == 302
        said = ta.get(refused["Location"]).content.decode()
        assert "score 4 is outside 0..3: give a score between 0 and 3, and the reason the student will read" in said
        not_a_number = ta.get(override(ta, score="three", reason="why")["Location"]).content.decode()
        assert "give a score between 0 and 3, and the reason the student will read" in not_a_number
        assert not Mark.objects.filter(student=submission.student, question_id="attention").exists()
        assert override(ta, score="2", reason="our test was wrong").status_code == 302
        mark = Mark.objects.get(student=submission.student, question_id="attention")
        assert (mark.score, mark.comment, mark.marked_by) == (2.0, "our test was wrong", "mark-writer-ta")
        # Another student and an anonymous visitor are refused, and change nothing.
        assert override(clients["student"], score="3", reason="mine").status_code == 404
        assert override(clients["anonymous"], score="3", reason="mine").status_code == 302  # to sign in
        assert Mark.objects.get(student=submission.student, question_id="attention").score == 2.0
        override(ta, score="", reason="")
        assert not Mark.objects.filter(student=submission.student, question_id="attention").exists()


def test_the_marking_page_records_through_the_writer():
    with seeded_course() as clients:
        submission = latest("w-00001", HAND)  # unmarked: the seed marks every other student
        page = f"/staff/marking/{HAND}/written/{submission.id}/"
        ta = clients["ta"]
        assert ta.get(page).status_code == 200
        bad = ta.post(page, {"rubric": ["artefacts"], "adjustment": "lots", "comment": "c"})
        assert "the score and the adjustment are numbers" in ta.get(bad["Location"]).content.decode()
        assert not Mark.objects.filter(student=submission.student, question_id="written").exists()
        saved = ta.post(page, {"rubric": ["artefacts", "not-an-item"], "adjustment": "0.5", "comment": "close"})
        assert saved.status_code == 302
        mark = Mark.objects.get(student=submission.student, question_id="written")
        assert (mark.rubric, mark.adjustment, mark.score, mark.comment, mark.marked_by, mark.submission_id) == (
            ["artefacts"],
            0.5,
            0.0,
            "close",
            "mark-writer-ta",
            submission.id,
        )
        assert clients["student"].get(page).status_code == 404
        assert clients["anonymous"].post(page, {"rubric": ["baseline"]}).status_code == 302  # to sign in
        assert Mark.objects.get(student=submission.student, question_id="written").rubric == ["artefacts"]
