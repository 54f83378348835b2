"""Errors of the ``gradewright`` package (hand-in from a notebook cell); each message is one line.

GradewrightError     base: the server refused (its own words), cannot be reached, or there is no
                     notebook, assignment or sign-in to hand in with
"""

from __future__ import annotations


class GradewrightError(Exception):
    """Shown in a notebook as its message alone: a student is told what to do, not given a traceback."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for how an exception is shown
        return [f"gradewright: {self}"]
