"""The released notebook students download: made once per assignment with ``autograder release``'s
own function, and made again when the source notebook changes."""

from __future__ import annotations

from pathlib import Path

from autograder.assignment import Assignment as AssignmentSpec
from autograder.release import release


def released_notebook(spec: AssignmentSpec, state: Path) -> Path:
    folder = state / "released" / spec.name
    made = folder / spec.released_notebook
    if not made.is_file() or made.stat().st_mtime < spec.notebook_path.stat().st_mtime:
        folder.mkdir(parents=True, exist_ok=True)
        return release(spec, folder)
    return made
