"""A student asks for a review of a question and the staff answer in the submission's thread."""

from __future__ import annotations

import pytest

from service.accounts.models import Member

from .conftest import needs_sandbox
from .served import graded_hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


@needs_sandbox
def test_a_student_asks_for_a_review_and_the_staff_answer_in_the_thread():
    alice, as_alice, job = graded_hand_in()
    page = f"/submissions/{job.id}/"

    def post(client, url, **fields):
        client.get(page if client is not as_bob else "/assignments/")
        return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})

    # The form asks about the first question that lost points, unless the student picks another.
    first_lost = next(q for q in job.submission.results.order_by("id") if q.score < q.max_score).question_id
    assert f'<option value="{first_lost}" selected>' in as_alice.get(page).content.decode()
    _, as_bob = student()
    assert post(as_bob, f"/submissions/{job.id}/review/", question="attention", message="mine").status_code == 404
    assert (
        post(
            as_alice, f"/submissions/{job.id}/review/", question="attention", message="My masks follow the <b>spec</b>"
        ).status_code
        == 302
    )
    _, ta = student(Member.TA)
    waiting = ta.get("/staff/reviews/").content.decode()
    listed = f"Module 10 notebook: attention built by hand, submission {job.id}"  # its title, not its folder's name
    assert listed in waiting.split('id="answered"')[0] and alice.username in waiting
    # The staff's navigation counts the requests waiting; a student's has no such count.
    assert '<span class="badge text-bg-primary" id="reviews-waiting">' in waiting
    assert 'id="reviews-waiting"' not in as_alice.get(page).content.decode()
    from service.marking.models import ReviewRequest

    review = ReviewRequest.objects.get(job=job)
    assert post(ta, f"/staff/reviews/{review.id}/", message="Right: score corrected.").status_code == 302
    assert post(as_alice, f"/staff/reviews/{review.id}/", message="me too").status_code == 404  # staff only
    thread = as_alice.get(page).content.decode()
    assert "My masks follow the &lt;b&gt;spec&lt;/b&gt;" in thread and "Right: score corrected." in thread
    assert "attention (answered)" in thread
    # Answered: no longer waiting, still listed, with the others answered.
    waiting, answered = ta.get("/staff/reviews/").content.decode().split('id="answered"')
    assert listed not in waiting and listed in answered
