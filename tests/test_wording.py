"""How numbers and counts read (course/wording.py): one rounding rule for every page and download,
full precision kept in the gradebook; one way to agree a count with its noun."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from course.wording import plural, shown_score


@pytest.mark.parametrize(
    ("value", "shown"),
    [(7.208333, "7.21"), (0.333333, "0.33"), (3.6875, "3.69"), (10.0, "10"), (1.5, "1.5"), (-0.001, "0"), (None, "")],
)
def test_a_score_is_shown_with_at_most_two_decimals(value, shown):
    assert shown_score(value) == shown


def test_pages_and_downloads_round_by_the_same_rule(tmp_path):
    """The template filter and the gradebook's files write the same text for a score."""
    from gradebook.reports import shown_score as downloads

    page = Template("{% load scores %}{{ value|score }} {{ n|counted:'minute' }}, {{ m|counted:'person,people' }}")
    assert page.render(Context({"value": 8.504166, "n": 1, "m": 2})) == "8.5 1 minute, 2 people"
    assert downloads is shown_score


@pytest.mark.parametrize(
    ("count", "word", "text"),
    [
        (1, "minute", "1 minute"),
        (1.0, "submission", "1 submission"),
        (2, "answer", "2 answers"),
        (0, "answer", "0 answers"),
        (1.5, "minute", "1.5 minutes"),
    ],
)
def test_a_count_agrees_with_its_noun(count, word, text):
    assert plural(count, word) == text
