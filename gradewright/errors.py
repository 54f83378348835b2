"""Errors of the ``gradewright`` package (hand-in from a notebook cell); each message is one line.

GradewrightError     base: the server refused (its own words), or there is no notebook, assignment or
                     sign-in to hand in with
 +-- NotebookExists  fetch() would replace a notebook there already (the student's work)
 +-- WhichAssignment the notebook does not say which assignment it is; ``known`` lists the course's
 +-- Unreachable     the server cannot be reached, or answered something that is not its API's
 +-- HandInWarned    submit() without anyway=True, where the server warns of a hand-in now (late, or
                     replacing a better or an on-time grade): nothing was handed in

JupyterLab's server side (jupyterlab_gradewright/handlers.py) answers each with its own status.
"""

from __future__ import annotations


class GradewrightError(Exception):
    """Shown in a notebook as its message alone: a student is told what to do, not given a traceback."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for how an exception is shown
        return [f"gradewright: {self}"]


class NotebookExists(GradewrightError):
    pass


class WhichAssignment(GradewrightError):
    def __init__(self, message: str, known: list[str]) -> None:
        super().__init__(message)
        self.known = known


class Unreachable(GradewrightError):
    pass


class HandInWarned(GradewrightError):
    """Nothing was handed in: the server's warnings of a hand-in now, each a whole sentence."""

    def __init__(self, warnings: list[str]) -> None:
        told = " ".join(warnings)
        super().__init__(f"nothing was handed in: {told} To hand in all the same: submit(anyway=True).")
        self.warnings = warnings
