"""The one rule from a student's name to the stem of their report files.

Every report file is ``<stem><suffix>``, each suffix starting with a dot (``.json``,
``.feedback.txt``, ``.gradescope.json``), and a stem never holds a dot: the part of a file name
before its first dot is its stem, so one student's file can never be another's (a student named
``bob.gradescope`` does not write ``bob.gradescope.json``, which is ``bob``'s Gradescope file).

A name that is already a short, plain file name in lowercase is its own stem (``alice`` ->
``alice.json``). Any other name (a dot, a capital letter, spaces, path parts such as ``../x`` or
``a/b``, control characters, non-UTF-8 bytes, over 64 characters, a name Windows reserves) becomes
a plain stem plus a hash of the whole name, and so does a plain name that already ends like such a
hash: two students never share a report file, on a file system that ignores case too (macOS's,
Windows'), and a student always gets the same one. A stem is made of ``[A-Za-z0-9_-]`` only, so it
names a file inside the output folder, never a path out of it.
"""

from __future__ import annotations

import re

from untrusted.text import fingerprint

MAX_STEM = 64
_PLAIN = re.compile(r"[a-z0-9_][a-z0-9_-]*")  # no leading "-": not an option to a shell command
_HASHED = re.compile(r"-[0-9a-f]{12}$")
# Names Windows will not give a file, whatever its extension (an output folder on a shared drive).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}


def report_stem(student: str) -> str:
    """A file name stem for a student that is unique, stable and cannot leave the output folder."""
    if (
        len(student) <= MAX_STEM
        and _PLAIN.fullmatch(student)
        and not _HASHED.search(student)
        and student not in _RESERVED
    ):
        return student
    plain = re.sub(r"[^A-Za-z0-9_-]", "_", student).lstrip("-")[:MAX_STEM] or "_"
    return f"{plain}-{fingerprint(student)}"
