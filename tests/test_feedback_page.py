"""The site's feedback page (issue #49): a notebook that does not run leads with the cause (the cell,
the line, the error) above the questions and the review form, and each question that could not be
graded links to it; math in the feedback (sqrt(d_k), QK^T) is MathML, as on the exam pages; only the
student and the staff read it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from service.accounts.models import Member
from untrusted.mathml import plain_text_math

from .conftest import ASSIGNMENTS
from .served import PARTIAL, graded_hand_in, student

pytestmark = pytest.mark.timeout(300)
BROKEN = ASSIGNMENTS / "sequences-and-attention" / "known" / "syntax_error_in_one_cell.ipynb"


def test_the_cause_of_a_notebook_that_does_not_run_comes_first_and_is_linked():
    _, client, job = graded_hand_in(BROKEN)
    page = client.get(f"/submissions/{job.id}/").content.decode()
    problems = page.index('id="problems"')
    assert re.search(r"cell \d+.*line \d+.*SyntaxError", page[problems:], re.S)  # the cause, in words
    assert problems < page.index('class="table stack') < page.index('id="review"')  # before the table and the form
    assert '<a href="#problems">See the problems running your submission</a>' in page  # from its questions
    # Only the student and the staff read it.
    _, other = student()
    refused = other.get(f"/submissions/{job.id}/")
    assert refused.status_code in (403, 404) and 'id="problems"' not in refused.content.decode()
    assert Client().get(f"/submissions/{job.id}/").status_code == 302
    _, ta = student(Member.TA)
    assert 'id="problems"' in ta.get(f"/submissions/{job.id}/").content.decode()


def test_math_in_the_feedback_is_mathml_and_code_stays_code():
    shown = plain_text_math("Divide QK^T by sqrt(d_k), as np.sqrt(d_k) does <b>; x^2 and $\\frac{1}{2}$.")
    assert shown.count("<math") == 4 and "<msqrt>" in shown and "<mfrac>" in shown
    assert "np.sqrt(d_k)" in shown and "&lt;b&gt;" in shown and "<b>" not in shown  # code as written, text escaped
    assert plain_text_math("multi_head_attention, Q.shape[-1]") == "multi_head_attention, Q.shape[-1]"
    assert "<script" not in plain_text_math("$\\text{<script>alert(1)</script>}$")


def test_the_feedback_page_shows_the_mistakes_math_as_mathml():
    _, client, job = graded_hand_in(PARTIAL)  # scores not divided by sqrt(d_k)
    page = client.get(f"/submissions/{job.id}/").content.decode()
    feedback = page[page.index('class="table stack') :]
    assert "<msqrt>" in feedback and "sqrt(d_k)" not in feedback.replace("np.sqrt(d_k)", "")


def test_where_the_time_went_says_dates_and_durations_in_words():
    from datetime import timedelta

    from service.handin.models import Job

    _, _, job = graded_hand_in(PARTIAL)
    started = job.finished_at - timedelta(seconds=304668.063)
    Job.objects.filter(id=job.id).update(received_at=None, started_at=started.replace(microsecond=0))
    _, ta = student(Member.TA)
    page = ta.get(f"/submissions/{job.id}/").content.decode()
    times = page[page.index("Where the time went") :]
    assert "received</td><td>not recorded" in times and "shown</td><td>not yet" in times  # graded: never "not yet"
    assert "3 days 12 h" in times and "304668" not in times and ".000000" not in times
    assert re.search(r"started</td><td>\d+ \w{3} \d{4}, \d\d:\d\d:\d\d UTC", times)  # with its date
