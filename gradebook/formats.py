"""The grade file formats, by name, and what a file says of a student with nothing handed in: the
one registry that ``gradebook.exports`` builds its writers from and ``autograder grades export``
offers, importable without loading Django or any writer (so ``autograder --help`` starts at once)."""

from __future__ import annotations

from typing import Literal, get_args

# name -> the module of gradebook.exports that writes it (its ``write``, and its ``warnings`` if any)
GRADE_FORMATS = {
    "canvas": "canvas",
    "moodle": "moodle",
    "csv": "plain",
}
# A student with nothing handed in: an empty cell, zero, or (skip) no row when they handed in none of
# the file's assignments (Moodle clears a grade for an empty cell; a row left out changes nothing).
Missing = Literal["empty", "zero", "skip"]
MISSING: tuple[Missing, ...] = get_args(Missing)
