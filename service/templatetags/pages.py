"""What every page writes the same way: dates (``{{ when|moment }}``: "1 Dec 2026, 14:44 UTC", with
seconds or milliseconds where they matter), lengths of time (``{{ seconds|duration }}``), how long ago, a job's or a question's state as a badge in words (colour is never the only
signal), the points still waiting for hand grading, and the course's title for the top bar."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince, timeuntil

from autograder.reports.summary import awaiting_points
from course.wording import plural

register = template.Library()

# A job's state and a question's status: the words shown and the badge's colour (Bootstrap's).
BADGES = {
    "queued": ("queued", "secondary"),
    "grading": ("grading", "info"),
    "running": ("running", "info"),  # a run of the practice checks (service/handin/practice.py)
    "done": ("done", "success"),
    "graded": ("graded", "success"),
    "failed": ("failed", "danger"),
    "passed": ("passed", "success"),
    "partial": ("partial", "warning"),
    "error": ("error", "danger"),
    "timeout": ("timeout", "danger"),
    "manual": ("awaiting hand grading", "primary"),
    "not_graded": ("not graded", "secondary"),
    "hidden": ("hidden", "secondary"),
    "late": ("late", "warning"),
    "awaiting": ("awaiting hand grading", "primary"),
    "counts": ("counts", "primary"),  # the submission that counts for the grade (gradebook.grades.which_counts)
    "right": ("right", "success"),  # an answer to a lesson's check question (service/lessons/)
    "wrong": ("not right", "danger"),
}


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    if timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


@register.filter
def moment(value: Any) -> str:
    """A date and time as every page writes it: ``1 Dec 2026, 14:44 UTC`` (empty for none)."""
    when = _as_datetime(value)
    return "" if when is None else f"{when.day} {when:%b %Y, %H:%M} UTC"


@register.filter
def moment_seconds(value: Any) -> str:
    """The same with seconds, where they matter (an exam's log): ``1 Dec 2026, 14:44:05 UTC``."""
    when = _as_datetime(value)
    return "" if when is None else f"{when.day} {when:%b %Y, %H:%M:%S} UTC"


@register.filter
def moment_precise(value: Any) -> str:
    """The same to the millisecond, where moments a fraction of a second apart are read side by side
    (an attempt's log, where the time went): ``1 Dec 2026, 14:44:05.155 UTC``; a whole second as
    ``moment_seconds`` writes it."""
    when = _as_datetime(value)
    if when is None:
        return ""
    fraction = f".{when.microsecond // 1000:03d}" if when.microsecond // 1000 else ""
    return f"{when.day} {when:%b %Y, %H:%M:%S}{fraction} UTC"


@register.filter
def duration(seconds: Any) -> str:
    """A length of time as every page writes it: ``0.31 s``, ``12.4 s``, ``4 min 9 s``, ``3 h 12 min``,
    ``3 days 12 h`` (empty for none)."""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return ""
    if value < 0:
        return f"-{duration(-value)}"
    if value < 10:
        return f"{value:.2f} s".replace(".00 s", " s")
    if value < 60:
        return f"{value:.1f} s".replace(".0 s", " s")
    whole = round(value)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return plural(days, "day") + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{minutes} min" + (f" {secs} s" if secs else "")


@register.filter
def iso(value: Any) -> str:
    """The machine-readable form, for ``<time datetime="...">``."""
    when = _as_datetime(value)
    return "" if when is None else when.isoformat(timespec="seconds")


@register.filter
def ago(value: Any) -> str:
    """How long ago (or how long from now): ``3 hours ago``, ``in 2 days``."""
    when = _as_datetime(value)
    if when is None:
        return ""
    now = timezone.now()
    if abs((now - when).total_seconds()) < 60:  # a time ahead is never "just now"
        return "just now" if when <= now else "in under a minute"
    if when <= now:
        return f"{timesince(when, now, depth=1)} ago"
    return f"in {timeuntil(when, now, depth=1)}"


@register.simple_tag
def at(value: Any, relative: bool = False) -> SafeString | str:
    """``<time>`` with the date as every page writes it, and how long ago where that helps."""
    when = _as_datetime(value)
    if when is None:
        return ""
    if relative:
        return format_html(
            '<time datetime="{}">{}</time> <span class="text-body-secondary">({})</span>',
            iso(when),
            moment(when),
            ago(when),
        )
    return format_html('<time datetime="{}">{}</time>', iso(when), moment(when))


@register.filter
def badge(state: Any) -> SafeString:
    """A state in words, on a coloured badge."""
    words, colour = BADGES.get(str(state), (str(state), "secondary"))
    return format_html('<span class="badge text-bg-{}">{}</span>', colour, words)


@register.filter
def badge_colour(state: Any) -> str:
    return BADGES.get(str(state), ("", "secondary"))[1]


@register.filter
def hand_badge(question: Any) -> SafeString:
    """A question scored by hand (marked, or its score set over the grader's): said so, coloured by
    the score given, never the grader's "failed" left beside a score of 1.5 of 3."""
    mark = question.get("mark") or {}
    score, most = float(question.get("score") or 0), float(question.get("max_score") or 0)
    colour = "success" if score >= most else "danger" if score <= 0 else "warning"
    words = "score set by hand" if mark.get("override") else "marked by hand"
    return format_html('<span class="badge text-bg-{}">{}</span>', colour, words)


@register.filter
def first_lost(report: Any) -> str:
    """The first question of a shown report that lost points (a review is most often about it)."""
    for question in report.get("questions", []) if isinstance(report, dict) else []:
        score, most = question.get("score"), question.get("max_score")
        if score is not None and most is not None and float(score) < float(most):
            return str(question.get("id", ""))
    return ""


@register.filter
def awaiting(report: Any) -> float:
    """The points of a shown report's questions that still wait for hand grading (0 for none)."""
    return awaiting_points(report) if isinstance(report, dict) else 0.0


@register.simple_tag
def course_title() -> str:
    """The course's title (course.toml), for the top bar; the site's name if it cannot be read."""
    from course.errors import CourseError
    from service.core.access import course

    try:
        return course().title
    except (CourseError, OSError, ValueError):
        return "Gradewright"
