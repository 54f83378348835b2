"""``{{ value|score }}``: a score as every page writes it (``7.21``, ``10``, ``1.5``: the rounding rule
of course/wording.py); ``{{ count|counted:"minute" }}``: a count and its noun, agreed (``1 minute``,
``2 minutes``; ``{{ n|counted:"person,people" }}`` where an s is wrong)."""

from django import template

from course.wording import plural, shown_score

register = template.Library()


@register.filter
def score(value) -> str:
    return shown_score(value)


@register.filter
def counted(value, words: str) -> str:
    one, _, many = words.partition(",")
    return plural(value or 0, one, many or None)
