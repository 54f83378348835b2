"""Hand in from a notebook cell: ``from gradewright import submit; submit()``.

For a classic Notebook, VS Code or any kernel (JupyterLab has its own buttons: the
``jupyterlab_gradewright`` extension). ``fetch(name)`` puts an assignment's released notebook in the
home folder, ``check()`` runs the notebook's public tests as ``autograder check`` does (and, signed
in, its practice checks on the server), ``submit()`` hands the notebook in and waits for its
feedback. On a JupyterHub the hub's token (from the server's environment) signs in; elsewhere the
token ``autograder login`` saved. The server decides everything: limits, deadlines, closed
assignments and who sees what, its refusals shown as it words them.
"""

from __future__ import annotations

from .cell import Feedback, check, fetch, submit
from .errors import GradewrightError

__all__ = ["Feedback", "GradewrightError", "check", "fetch", "submit"]
