"""The grader's secret: mixed into the seed of every hidden test's random inputs.

Hidden inputs are drawn from (secret, the submission's hash, the test), so the inputs one
submission saw are worth nothing for another (a leaked input cannot be memorised), while a regrade
of the same file draws the same inputs and gets the same verdict. The secret lives beside the
course's assignments (``assignments/.grader-secret``, created on first use, readable by its owner
only, never committed) or in ``$GRADEWRIGHT_SECRET``; the sandbox never sees either.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from course.private_files import made_once

from .assignment import Assignment
from .environment import is_set, read
from .errors import AssignmentError

SECRET_ENV = "GRADEWRIGHT_SECRET"
SECRET_FILE = ".grader-secret"


def grader_secret(assignment: Assignment) -> str:
    """The secret for ``assignment``'s course, created on first use."""
    if is_set(SECRET_ENV):
        return read(SECRET_ENV)
    path = secret_path(assignment)
    try:
        return made_once(path, lambda: secrets.token_hex(32))
    except (OSError, UnicodeDecodeError) as exc:
        raise AssignmentError(
            f"{path}: cannot read or create the grader's secret ({exc}); or set ${SECRET_ENV}"
        ) from None


def secret_path(assignment: Assignment) -> Path:
    return assignment.folder.parent / SECRET_FILE


def input_seed(secret: str, submission_sha256: str, test_id: str) -> int:
    """The seed of one hidden test's inputs for one submission."""
    material = "\0".join((secret, submission_sha256, test_id)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(material).digest()[:16], "big")
