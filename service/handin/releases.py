"""The released notebook students download: made once per assignment with ``autograder release``'s
own function, and made again when the source notebook changes; each student is sent their own copy
(autograder.own_values: the values drawn for them, for an assignment with parameters)."""

from __future__ import annotations

from pathlib import Path

from django.http import HttpResponse

from autograder.assignment import Assignment as AssignmentSpec
from autograder.own_values import own_notebook_file
from autograder.release import release


def released_notebook(spec: AssignmentSpec, state: Path) -> Path:
    folder = state / "released" / spec.name
    made = folder / spec.released_notebook
    if not made.is_file() or made.stat().st_mtime < spec.notebook_path.stat().st_mtime:
        folder.mkdir(parents=True, exist_ok=True)
        return release(spec, folder)
    return made


def own_notebook_response(spec: AssignmentSpec, state: Path, student_id: str) -> HttpResponse:
    """The student's own notebook as a download: the released file with the values drawn for them
    (byte for byte what ``autograder fetch --student`` writes), the released file's own bytes for an
    assignment without parameters. The assignment page's download and the API's (JupyterLab's Fetch,
    gradewright.fetch()) both send it."""
    body = own_notebook_file(spec, released_notebook(spec, state), student_id)
    response = HttpResponse(body, content_type="application/json")  # a notebook is JSON
    response["Content-Disposition"] = f'attachment; filename="{spec.released_notebook}"'
    return response
