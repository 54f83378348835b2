"""The one rule from a student's name to the stem of their report files.

A name that is already a short, plain file name is its own stem (``alice`` -> ``alice.json``).
Any other name (spaces, control characters, non-UTF-8 bytes, a leading dot, over 64 characters)
becomes a plain stem plus a hash of the whole name, and so does a plain name that already ends like
such a hash: two students never share a report file, and a student always gets the same one.
"""

from __future__ import annotations

import re

from untrusted.text import fingerprint

MAX_STEM = 64
_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_HASHED = re.compile(r"-[0-9a-f]{12}$")


def report_stem(student: str) -> str:
    """A file name stem for a student that is unique, stable and cannot leave the output folder."""
    if _PLAIN.fullmatch(student) and len(student) <= MAX_STEM and not _HASHED.search(student):
        return student
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", student).lstrip(".")[:MAX_STEM] or "_"
    return f"{plain}-{fingerprint(student)}"
