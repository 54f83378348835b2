"""File names derived from student names."""

from __future__ import annotations

import re


def safe_name(student: str) -> str:
    """A file name for a student that cannot leave the output folder."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", student).lstrip(".")
    return name or "_"
