"""A question's feedback laid out as a page: what went wrong first, then the failing checks as a
list (autograder/explain.py writes it, and reads it back into these parts)."""

from __future__ import annotations

from typing import Any

from django import template

from autograder.explain import parts

register = template.Library()


@register.filter
def feedback_parts(feedback: str | None) -> dict[str, Any]:
    """``{"lead": [paragraph, ...], "checks": [(check, folded), ...]}`` for a question's feedback."""
    lead, checks = parts(feedback or "")
    return {"lead": lead, "checks": checks}
