"""A notebook that does not run (issue #49): its page leads with the cause (the cell, the line, the
error) above the questions and the review form, and each question that could not be graded links to
it; only its student and the staff read it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from service.models import Member

from .conftest import ASSIGNMENTS
from .served import graded_hand_in, student

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
