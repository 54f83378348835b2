"""``{{ value|score }}``: a score as the reports write it (``7.375``, ``10``, ``1.4``)."""

from typing import Any

from django import template

from autograder.reports.summary import ScoreSummary, points, score_summary

register = template.Library()


@register.filter
def score(value) -> str:
    return points(value)


@register.filter
def summary(report: Any) -> ScoreSummary | None:
    """The score and lateness in the words every face uses (autograder/reports/summary.py)."""
    return score_summary(report) if isinstance(report, dict) else None
