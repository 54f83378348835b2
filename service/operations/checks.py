"""The site's own system checks (Django's checks framework), for what an operator can get wrong. Run
with Django's: ``autograder manage check --deploy`` runs them all (the ``deploy`` ones only then).

- gradewright.W001: ALLOWED_HOSTS left ``*`` behind HTTPS (GRADEWRIGHT_HTTPS=1): name the site's host.
- gradewright.E002: the secret key's file readable by others than its owner.
- gradewright.W003: no grading worker alive: hand-ins would wait for ever.
- gradewright.E004: a course folder (the course's, an assignment's) this process cannot read, or a
  state folder it cannot write: the workers, which run as it does, could not grade.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.db import DatabaseError


@register("security", deploy=True)
def any_host_behind_https(app_configs: Any = None, **_: Any) -> list[CheckMessage]:
    if getattr(settings, "SECURE_SSL_REDIRECT", False) and "*" in settings.ALLOWED_HOSTS:
        return [
            Warning(
                "ALLOWED_HOSTS is '*' on a site served over HTTPS: any Host header is believed",
                hint="set GRADEWRIGHT_ALLOWED_HOSTS to the site's host names, comma-separated",
                id="gradewright.W001",
            )
        ]
    return []


@register("security")
def secret_key_readable_by_others(app_configs: Any = None, **_: Any) -> list[CheckMessage]:
    state = getattr(settings, "GRADEWRIGHT_STATE", None)
    path = Path(state) / "secret_key" if state else None
    if path is None or not path.is_file():
        return []
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return [
            Error(
                f"{path} is readable by others (mode {mode:o}): anyone who reads it can sign cookies as anyone",
                hint=f"chmod 600 {path}",
                id="gradewright.E002",
            )
        ]
    return []


@register("gradewright", deploy=True)
def no_worker(app_configs: Any = None, **_: Any) -> list[CheckMessage]:
    from .health import workers_alive

    try:
        alive = workers_alive()
    except DatabaseError:
        return []  # the database's own checks and /readyz say it is away
    if alive:
        return []
    return [
        Warning(
            "no grading worker is alive: hand-ins would wait for ever",
            hint="start the site with --workers N (N at least 1), or run autograder worker beside it",
            id="gradewright.W003",
        )
    ]


@register("gradewright")
def course_folders_unreadable(app_configs: Any = None, **_: Any) -> list[CheckMessage]:
    course = getattr(settings, "GRADEWRIGHT_COURSE", None)
    if not course:
        return []
    root = Path(course)
    problems = []
    folders = [root]
    assignments = root / "assignments"
    if assignments.is_dir() and os.access(assignments, os.R_OK | os.X_OK):
        folders += [folder for folder in sorted(assignments.iterdir()) if folder.is_dir()]
    for folder in folders:
        if not os.access(folder, os.R_OK | os.X_OK):
            problems.append(
                Error(
                    f"{folder}: this process cannot read the course folder, nor could a worker run as it",
                    hint="run the site and its workers as a user who may read the course (chmod or chown it)",
                    id="gradewright.E004",
                )
            )
    state = getattr(settings, "GRADEWRIGHT_STATE", None)
    if state and not os.access(state, os.W_OK | os.X_OK):
        problems.append(
            Error(
                f"{state}: this process cannot write the service's state folder (uploads, reports)",
                hint="run the site and its workers as the folder's owner",
                id="gradewright.E004",
            )
        )
    return problems
