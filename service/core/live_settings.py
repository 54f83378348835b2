"""The course's settings as the running site and its workers use them: course.toml and each
assignment.toml, read again whenever the file changes (its modification time and size), so that the
pages and the grader never disagree about a due date or a policy.

A live file that no longer reads (a typo: ``due = "next tuesday"``) changes nothing in force: its
last good reading stays (the other assignments, and the hand-ins to this one, go on as before), and
the fault is said, once per change of the file, in the log (a warning), on the staff's pages (a
banner: ``context``) and in ``/readyz`` (``faults``), until the file reads again (said too, once).
A file that never read in this process (an assignment added with a typo) has no reading to keep: its
assignment is left out, and said so the same way."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from django.http import HttpRequest
from django.utils import timezone

from autograder.assignment import MANIFEST, course_assignment
from autograder.assignment import Assignment as AssignmentSpec
from autograder.errors import AutograderError
from course.errors import CourseError
from course.folder import COURSE_FILE, CourseFolder, find_course
from untrusted.text import one_line

T = TypeVar("T")
Version = tuple[Any, ...]
logger = logging.getLogger("gradewright.settings")
UNREADABLE = (AutograderError, CourseError)  # what a settings file that does not read raises


@dataclass(frozen=True)
class Fault:
    """A live settings file that does not read now."""

    path: Path
    problem: str  # the one line reading it gave, naming the file and the place
    since: datetime
    kept: bool  # whether an earlier reading stays in force (else: nothing of the file is)

    @property
    def effect(self) -> str:
        if self.kept:
            return "the settings read before stay in force until it is fixed"
        return "nothing of it is in force until it is fixed" + (
            "" if self.path.name == COURSE_FILE else " (its assignment is left out)"
        )

    def said(self, root: Path | None = None) -> str:
        """The fault in one line, its file named from the course's folder."""
        shown = self.path.relative_to(root) if root is not None and self.path.is_relative_to(root) else self.path
        problem = self.problem if self.problem.startswith(str(self.path)) else f"{shown}: {self.problem}"
        return f"{problem.replace(str(self.path), str(shown), 1)}; {self.effect}"


class LiveFiles:
    """Readings of live files, by path: the good reading of each file's current version, else its
    last good reading with the fault noted. Shared by a process's threads (the site's requests)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._good: dict[Path, tuple[Version, Any]] = {}
        self._faults: dict[Path, tuple[Version, Fault]] = {}

    def read(self, path: Path, version: Version, load: Callable[[], T]) -> T | None:
        """``load()``'s reading of ``path`` at ``version`` (kept until the version changes); where it
        raises one of ``UNREADABLE``, the last good reading (None where there was none), the fault noted."""
        with self._lock:
            good = self._good.get(path)
            fault = self._faults.get(path)
        if good is not None and good[0] == version:
            return good[1]
        if fault is not None and fault[0] == version:
            return None if good is None else good[1]  # this version was read already, and did not read
        try:
            value = load()
        except UNREADABLE as exc:
            noted = Fault(path, one_line(str(exc)), timezone.now(), kept=good is not None)
            with self._lock:
                self._faults[path] = (version, noted)
            logger.warning("%s", noted.said())
            return None if good is None else good[1]
        with self._lock:
            self._good[path] = (version, value)
            was = self._faults.pop(path, None)
        if was is not None:
            logger.warning("the file %s is read again: its settings are in force", path)
        return value

    def faults(self, among: set[Path] | None = None) -> list[Fault]:
        """The files that do not read now (of ``among``, when given: a file no longer in the course
        is no fault of it)."""
        with self._lock:
            found = [fault for _, fault in self._faults.values()]
        return sorted((f for f in found if among is None or f.path in among), key=lambda f: str(f.path))

    def forget(self) -> None:
        with self._lock:
            self._good.clear()
            self._faults.clear()


LIVE = LiveFiles()


def version(path: Path) -> tuple[int, int]:
    """A file's version as the site sees it: its modification time and size (0, 0: none; reading it
    then says what is wrong)."""
    try:
        status = path.stat()
    except OSError:
        return (0, 0)
    return (status.st_mtime_ns, status.st_size)


def course_in_force(root: Path) -> CourseFolder:
    """The course as course.toml says now, or as it last read; CourseError where it never read."""
    path = root / COURSE_FILE
    found = LIVE.read(path, version(path), lambda: find_course(root))
    return find_course(root) if found is None else found  # never read: its own error, raised


def assignment_in_force(course: CourseFolder, name: str) -> AssignmentSpec | None:
    """The assignment ``name`` of ``course`` as its assignment.toml says now, or as it last read
    (None: it never read)."""
    folder = course.assignment_folders[name]
    path = folder / MANIFEST
    return LIVE.read(path, (version(course.root / COURSE_FILE), version(path)), lambda: course_assignment(course, name))


def assignments_in_force(course: CourseFolder) -> dict[str, AssignmentSpec]:
    """Every assignment of the course in force, in course.toml's order (one that never read left out)."""
    found = {name: assignment_in_force(course, name) for name in course.assignment_folders}
    return {name: spec for name, spec in found.items() if spec is not None}


def faults(course: CourseFolder) -> list[Fault]:
    """The course's live settings files that do not read now."""
    return LIVE.faults({course.root / COURSE_FILE, *(f / MANIFEST for f in course.assignment_folders.values())})


def grading_spec(course: CourseFolder, name: str) -> AssignmentSpec:
    """What a worker grades a job of assignment ``name`` with: the assignment in force, or (never
    read in this process) the error its file gives."""
    spec = assignment_in_force(course, name) if name in course.assignment_folders else None
    return course_assignment(course, name) if spec is None else spec


def context(request: HttpRequest) -> dict[str, Any]:
    """Every page's ``settings_faults`` for the staff's banner: each live file that does not read,
    in one line, and what is in force instead."""
    from django.conf import settings

    from service.accounts.models import staff_request

    if not staff_request(request):
        return {}
    try:
        folder = course_in_force(Path(settings.GRADEWRIGHT_COURSE))
    except CourseError:
        return {}
    found = faults(folder)
    return {"settings_faults": [fault.said(folder.root) for fault in found]} if found else {}
