"""``{{ value|score }}``: a score as every page writes it (``7.21``, ``10``, ``1.5``: the rounding rule
of course/wording.py); ``{{ count|counted:"minute" }}``: a count and its noun, agreed (``1 minute``,
``2 minutes``; ``{{ n|counted:"person,people" }}`` where an s is wrong)."""

from typing import Any

from django import template

from autograder.reports.summary import ScoreSummary, score_summary
from course.wording import plural, shown_score

register = template.Library()


@register.filter
def score(value) -> str:
    return shown_score(value)


@register.filter
def counted(value, words: str) -> str:
    one, _, many = words.partition(",")
    return plural(value or 0, one, many or None)


@register.filter
def summary(report: Any) -> ScoreSummary | None:
    """The score and lateness in the words every face uses (autograder/reports/summary.py)."""
    return score_summary(report) if isinstance(report, dict) else None
