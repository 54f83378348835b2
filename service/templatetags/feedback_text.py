"""A question's feedback laid out as a page: what went wrong first, then the failing checks as a
list (autograder/explain.py writes it, and reads it back into these parts)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import mark_safe

from autograder.explain import parts
from untrusted.mathml import plain_text_math

register = template.Library()


@register.filter
def feedback_parts(feedback: str | None) -> dict[str, Any]:
    """``{"lead": [paragraph, ...], "checks": [(check, folded), ...]}`` for a question's feedback."""
    lead, checks = parts(feedback or "")
    return {"lead": lead, "checks": checks}


@register.filter
def math_text(text: str | None) -> str:
    """A line of feedback as HTML: escaped, its math (sqrt(d_k), QK^T, $...$) as MathML, as the
    exam pages show theirs (untrusted.mathml.plain_text_math)."""
    return mark_safe(plain_text_math(text or ""))  # noqa: S308  (escaped there, the MathML rebuilt from an allowlist)
