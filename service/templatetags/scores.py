"""``{{ value|score }}``: a score as the reports write it (``7.375``, ``10``, ``1.4``)."""

from django import template

register = template.Library()


@register.filter
def score(value) -> str:
    return "" if value is None else f"{round(float(value), 6):g}"
