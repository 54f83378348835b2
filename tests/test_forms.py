"""Bad input through the real endpoints, checked by the site's forms (service/core/forms.py): a query the
page's own form would not send is left out, a bad post is refused with the page's message, a 400
that names what was wrong, or a 404 for what does not exist; never a 500, and nothing is changed by
a refused post. Each test's rows are written in a transaction it rolls back."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from gradebook.models import Mark, RubricEdit, SimilarityRun, Submission
from service.accounts.forms import ROSTER_MAX_BYTES
from service.accounts.models import Member
from service.core.access import assignments
from service.core.forms import SitePath
from service.handin.models import Job
from service.marking.models import ReviewRequest

from .course_data import seed

pytestmark = pytest.mark.timeout(300)

GRADED = "sequences-and-attention"
HAND = "attention-not-explanation"
ADDRESS = "192.0.2.91"  # this module's own clients' address (the sign-in throttle counts by address)


def _client(role: str, student=None) -> Client:
    user = User.objects.create_user(f"f-{role}-{uuid.uuid4().hex[:8]}")
    Member.objects.create(user=user, role=role, student=student)
    client = Client(REMOTE_ADDR=ADDRESS)
    client.force_login(user)
    return client


@pytest.fixture
def course() -> Iterator[dict]:
    """Four students with two graded submissions of each assignment, a graded job for the first
    student's latest submission of each, the first student's, a TA's and an instructor's clients."""
    with transaction.atomic():
        prefix = f"f{uuid.uuid4().hex[:6]}-"
        seeded = seed(assignments()[GRADED], 4, prefix=prefix, accounts=False)
        seed(assignments()[HAND], 4, prefix=prefix, accounts=False)
        jobs = {}
        for name in (GRADED, HAND):
            latest = Submission.objects.filter(student__student_id=seeded.students[0], assignment__name=name)
            submission = latest.order_by("-id").first()
            assert submission is not None
            jobs[name] = Job.objects.create(
                student=submission.student,
                assignment=name,
                file=submission.file,
                original_name="answers.ipynb",
                size=1,
                sha256=submission.sha256,
                state=Job.GRADED,
                submission=submission,
            )
        student = jobs[GRADED].student
        yield {
            "students": seeded.students,
            "jobs": jobs,
            "student": _client(Member.STUDENT, student),
            "ta": _client(Member.TA),
            "instructor": _client(Member.INSTRUCTOR),
        }
        transaction.set_rollback(True)


def text_of(response) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_the_gradebook_leaves_out_what_its_own_form_would_not_send(course):
    """A threshold that is no number (or not finite), a filter or an order not offered: the page opens
    as if they had not been asked for; a good threshold filters."""
    ta = course["ta"]
    everyone = ta.get(f"/staff/gradebook/{GRADED}/")
    assert everyone.status_code == 200
    rows = sum(name in everyone.content.decode() for name in course["students"])
    assert rows == 4
    for query in ("below=nan", "below=inf", "below=1e999", "below=abc", "show=nope", "sort=nope", "page=zz"):
        page = ta.get(f"/staff/gradebook/{GRADED}/?{query}")
        assert page.status_code == 200, query
        assert sum(name in page.content.decode() for name in course["students"]) == 4, query
    assert 'value=""' in ta.get(f"/staff/gradebook/{GRADED}/?below=nan").content.decode()  # not shown back
    none = ta.get(f"/staff/gradebook/{GRADED}/?below=0")
    assert none.status_code == 200 and not any(name in none.content.decode() for name in course["students"])
    assert 'value="0"' in none.content.decode()  # the threshold as it was typed


def test_an_override_refuses_a_score_that_is_no_number_and_an_unknown_question(course):
    job = course["jobs"][GRADED]
    ta = course["ta"]
    for score in ("nan", "inf", "abc", "-1", "99"):
        page = ta.post(
            f"/staff/override/{job.id}/", {"question": "softmax", "score": score, "reason": "why"}, follow=True
        )
        assert page.status_code == 200, score
        assert "give a score between 0 and 2, and the reason the student will read" in text_of(page), score
    without_reason = ta.post(f"/staff/override/{job.id}/", {"question": "softmax", "score": "1"}, follow=True)
    assert "the reason the student will read" in text_of(without_reason)
    assert not Mark.objects.filter(student=job.student, question_id="softmax").exists()
    unknown = ta.post(f"/staff/override/{job.id}/", {"question": "nope", "score": "1", "reason": "why"})
    assert unknown.status_code == 404 and "no such graded question" in text_of(unknown)
    kept = ta.post(f"/staff/override/{job.id}/", {"question": "softmax", "score": " 1.5 ", "reason": "the check"})
    assert kept.status_code == 302
    assert Mark.objects.get(student=job.student, question_id="softmax").score == 1.5
    removed = ta.post(f"/staff/override/{job.id}/", {"question": "softmax", "score": " "})
    assert removed.status_code == 302 and not Mark.objects.filter(student=job.student, question_id="softmax").exists()


def test_a_regrade_names_its_bad_field_and_is_queued_by_the_queue(course):
    ta, job = course["ta"], course["jobs"][GRADED]
    before = Job.objects.count()
    for bad in ("abc", "1.5", "-3", "99999999999999999999"):
        refused = ta.post(f"/staff/regrade/{GRADED}/", {"job": bad})
        assert refused.status_code == 400 and "a whole number" in text_of(refused), bad
    unknown = ta.post(f"/staff/regrade/{GRADED}/", {"question": "../x"})
    assert unknown.status_code == 404 and "no such question" in text_of(unknown)
    assert Job.objects.count() == before
    # Another site's address as the page to go back to is never followed; this site's page is.
    for elsewhere in ("//elsewhere.example/", "/\\elsewhere.example/", "https://elsewhere.example/"):
        queued = ta.post(f"/staff/regrade/{GRADED}/", {"job": str(job.id), "question": "softmax", "back": elsewhere})
        assert queued.status_code == 302 and queued["Location"] == f"/staff/gradebook/{GRADED}/", elsewhere
    back = ta.post(f"/staff/regrade/{GRADED}/", {"student": job.student.student_id, "back": f"/submissions/{job.id}/"})
    assert back.status_code == 302 and back["Location"] == f"/submissions/{job.id}/"
    made = list(Job.objects.filter(id__gt=job.id, student=job.student, assignment=GRADED).order_by("id"))
    assert [(j.regrade, j.question, j.sha256, j.state) for j in made] == (
        [(True, "softmax", job.sha256, Job.QUEUED)] * 3 + [(True, "", job.sha256, Job.QUEUED)]
    )


def test_the_exports_page_answers_400_naming_the_field(course):
    staff = course["instructor"]
    bad_format = staff.post("/staff/exports/", {"assignment": GRADED, "format": "zzz"})
    assert bad_format.status_code == 400 and "format" in text_of(bad_format)
    no_assignment = staff.post("/staff/exports/", {"assignment": ["nope", ""], "format": "csv"})
    assert no_assignment.status_code == 400 and "at least one assignment" in text_of(no_assignment)
    fine = staff.post("/staff/exports/", {"assignment": [GRADED, "nope"], "format": "csv", "missing": "?"})
    assert fine.status_code == 200 and fine["Content-Type"] == "text/csv"
    assert course["students"][0] in fine.content.decode()


def test_a_similarity_threshold_outside_0_to_1_is_refused(course):
    staff = course["ta"]
    for threshold in ("2", "-0.1", "nan", "abc", ""):
        page = staff.post(f"/staff/similarity/{GRADED}/", {"threshold": threshold}, follow=True)
        assert page.status_code == 200 and "give a share between 0 and 1" in text_of(page), threshold
    assert not SimilarityRun.objects.filter(assignment=GRADED, requested_by__startswith="f-ta-").exists()


def test_a_mark_with_a_number_that_is_not_one_is_refused_and_nothing_saved(course):
    ta = course["ta"]
    submission = course["jobs"][HAND].submission
    address = f"/staff/marking/{HAND}/written/{submission.id}/"
    assert ta.get(address + "?names=zz").status_code == 200
    for field, value in (("adjustment", "inf"), ("adjustment", "abc"), ("score", "nan")):
        page = ta.post(address, {"rubric": ["artefacts"], field: value, "comment": "c"}, follow=True)
        assert page.status_code == 200 and "the score and the adjustment are numbers" in text_of(page), field
    assert not Mark.objects.filter(submission=submission, question_id="written").exists()
    # An item the rubric does not have is left out, as if not ticked.
    saved = ta.post(address, {"rubric": ["artefacts", "nope"], "adjustment": "", "comment": "  kept as typed "})
    assert saved.status_code == 302
    mark = Mark.objects.get(submission=submission, question_id="written")
    assert (mark.rubric, mark.adjustment, mark.comment) == (["artefacts"], 0.0, "  kept as typed ")


def test_a_rubric_item_with_points_that_are_no_number_is_refused(course):
    ta = course["ta"]
    before = RubricEdit.objects.count()
    for points in ("", "abc", "1e999", "nan"):
        page = ta.post(
            f"/staff/rubric/{HAND}/written/",
            {"text": "a new item", "points": points, "back": "//elsewhere.example/"},
            follow=True,
        )
        assert page.status_code == 200 and "an item's points are a number" in text_of(page), points
        assert page.redirect_chain[0][0] == f"/staff/marking/{HAND}/", points
    assert RubricEdit.objects.count() == before


def test_a_review_request_needs_a_known_question_and_a_message(course):
    student, job = course["student"], course["jobs"][GRADED]
    for fields in ({"question": "nope", "message": "look again"}, {"question": "softmax", "message": "   "}, {}):
        page = student.post(f"/submissions/{job.id}/review/", fields, follow=True)
        assert page.status_code == 200 and "say which question" in text_of(page), fields
    assert not ReviewRequest.objects.filter(job=job).exists()
    asked = student.post(f"/submissions/{job.id}/review/", {"question": "softmax", "message": "x" * 5000})
    assert asked.status_code == 302
    (review,) = ReviewRequest.objects.filter(job=job)
    assert len(review.messages.get().text) == 4000  # a longer message is cut, not refused


def test_the_api_hand_in_says_which_field_is_missing(course):
    student = course["student"]
    no_file = student.post("/api/v1/submissions", {"assignment": GRADED})
    assert no_file.status_code == 400 and no_file.json() == {"error": "send the notebook as the multipart field 'file'"}
    unknown = student.post("/api/v1/submissions", {"assignment": "nope"})
    assert unknown.status_code == 404 and "no assignment named 'nope'" in unknown.json()["error"]
    listed = student.get("/api/v1/submissions", {"assignment": GRADED})
    assert listed.status_code == 200 and [s["id"] for s in listed.json()["submissions"]] == [course["jobs"][GRADED].id]
    assert student.get("/api/v1/submissions", {"assignment": "nope"}).json() == {"submissions": []}


def test_the_roster_and_the_hand_in_pages_refuse_a_missing_or_too_large_file(course):
    from django.core.files.uploadedfile import SimpleUploadedFile

    staff = course["instructor"]
    missing = staff.post("/staff/roster/", {}, follow=True)
    assert "choose a roster CSV file of at most 2 MB" in text_of(missing)
    large = SimpleUploadedFile("roster.csv", b"x" * (ROSTER_MAX_BYTES + 1), content_type="text/csv")
    too_large = staff.post("/staff/roster/", {"roster": large}, follow=True)
    assert "choose a roster CSV file of at most 2 MB" in text_of(too_large)
    assert staff.get("/staff/roster/?q=%20&page=zz").status_code == 200
    nothing = course["student"].post(f"/assignments/{GRADED}/", {}, follow=True)
    assert nothing.status_code == 200 and "choose a notebook to hand in" in text_of(nothing)
    # A button value the page does not have is no open or close: it is a hand-in without a file.
    odd = staff.post(f"/assignments/{GRADED}/", {"submissions": "zz"}, follow=True)
    assert "choose a notebook to hand in" in text_of(odd)


def test_the_platforms_form_says_each_fields_own_problem_beside_it(course):
    """Issue #49: seven bad fields were one error naming an internal field (auth_url: ...): now each
    refused field says what is wrong beside it, in words, and a summary above links to each."""
    page = course["instructor"].post(
        "/staff/platforms/",
        {
            "name": "",
            "issuer": "",
            "client_id": "",
            "deployment_ids": ",,,",
            "auth_url": "x",
            "token_url": "y",
            "keyset_url": "z",
        },
    )
    assert page.status_code == 400
    shown = page.content.decode()
    assert 'value="x"' in shown  # the form shown again as it was filled
    beside = dict(re.findall(r'id="id_(\w+)-error">([^<]+)</div>', unescape(shown)))
    assert set(beside) == {"name", "issuer", "client_id", "deployment_ids", "auth_url", "token_url", "keyset_url"}
    assert beside["name"] == "required: copy it from the platform's page for the tool"
    assert beside["auth_url"].startswith("'x' is not an https:// address")
    assert beside["deployment_ids"] == beside["issuer"]  # none given: required, as the others
    summary = shown[shown.index("error-summary") : shown.index("</ul>", shown.index("error-summary"))]
    assert "7 fields to correct" in summary and '<a href="#id_auth_url">Authorization (OIDC auth) URL</a>' in summary
    assert not re.search(r"\b(auth_url|token_url|keyset_url|client_id):", text_of(page))  # no internal name


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/staff/gradebook/x/", "/staff/gradebook/x/"),
        ("/submissions/3/?a=b", "/submissions/3/?a=b"),
        ("//elsewhere.example/", ""),
        ("/\\elsewhere.example", ""),
        ("https://elsewhere.example/", ""),
        ("javascript:alert(1)", ""),
        ("staff/", ""),
        ("", ""),
    ],
)
def test_a_page_to_go_back_to_is_one_of_this_site(path, expected):
    assert SitePath().clean(path) == expected
