"""Every lesson under some files and folders, and every problem met on the way.

One bad file never hides the good ones: its problems are collected and the scan goes on.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from .errors import LessonFileError, LessonFolderError, LessonNotFound, Problem
from .formats import DEFAULT_LESSONS
from .generated import generated_problems
from .item_writing import item_writing_warnings
from .loaders import load_lesson
from .loaders.source import WHOLE_FILE
from .models import Course, Lesson, Module

DEFAULT_FOLDER = DEFAULT_LESSONS
# Documentation that sits beside lessons and is not itself a lesson.
NOT_LESSONS = re.compile(r"^(readme|licen[cs]e|notice|copying|authors|changelog)(\..*)?$", re.IGNORECASE)


class Catalog(BaseModel):
    lessons: list[Lesson] = []
    problems: list[Problem] = []
    files: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def lesson(self, slug: str) -> Lesson:
        for lesson in self.lessons:
            if lesson.slug == slug:
                return lesson
        known = [lesson.slug for lesson in self.lessons]
        close = difflib.get_close_matches(slug, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known) or 'none'}"
        raise LessonNotFound(f"no lesson with slug {slug!r}{hint}")

    def course(self) -> Course:
        """Lessons grouped by module. A lesson that names no module joins the module whose page
        is in the same catalog, when there is exactly one."""
        pages = [lesson for lesson in self.lessons if lesson.module and lesson.format == "markdown"]
        home = pages[0].module if len(pages) == 1 else None
        groups: dict[tuple[int | None, str], list[Lesson]] = {}
        objectives: dict[tuple[int | None, str], list] = {}
        for lesson in self.lessons:
            module = lesson.module or home
            key = (module.number, module.title) if module else (None, "Lessons outside any module")
            groups.setdefault(key, []).append(lesson)
            if lesson.objectives:
                objectives.setdefault(key, []).extend(lesson.objectives)
        known = next((lesson.course for lesson in self.lessons if lesson.course), None)
        modules = [
            Module(number=number, title=title, objectives=objectives.get((number, title), []), lessons=lessons)
            for (number, title), lessons in sorted(
                groups.items(), key=lambda kv: (kv[0][0] is None, kv[0][0] or 0, kv[0][1])
            )
        ]
        return Course(slug=known.slug if known else None, title=known.title if known else None, modules=modules)


def lesson_files(folder: Path) -> list[Path]:
    """The files of a folder that may be lessons: not hidden, not README/LICENCE/NOTICE."""
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith((".", "_")) for part in relative.parts):
            continue
        if path.is_file() and not NOT_LESSONS.match(path.name):
            found.append(path)
    return found


def load_catalog(paths: Iterable[Path | str], item_writing: bool = False) -> Catalog:
    """The lessons under ``paths``, and every problem met; with ``item_writing`` (``course validate``),
    the item-writing warnings of their checks too, and the problems of their generated questions,
    each drawn many times."""
    lessons: list[Lesson] = []
    problems: list[Problem] = []
    sources: dict[str, str] = {}
    files = 0
    for path in map(Path, paths):
        if path.is_dir():
            candidates = lesson_files(path)
            if not candidates:
                problems.append(Problem(file=str(path), where="folder", what="holds no lesson files"))
        elif path.exists():
            candidates = [path]
        else:
            problems.append(Problem(file=str(path), where=WHOLE_FILE, what="no such file or folder"))
            continue
        for file in candidates:
            files += 1
            try:
                loaded = load_lesson(file)
            except LessonFileError as exc:
                problems.extend(exc.problems)
                continue
            lesson = loaded.lesson
            if lesson.slug in sources:
                problems.append(
                    Problem(
                        file=str(file),
                        where=WHOLE_FILE,
                        what=f"slug {lesson.slug!r} is already used by {sources[lesson.slug]}; this file is skipped",
                    )
                )
                continue
            sources[lesson.slug] = str(file)
            lessons.append(lesson)
            problems.extend(loaded.warnings)
            if item_writing:
                problems.extend(item_writing_warnings(str(file), lesson))
                problems.extend(generated_problems(str(file), lesson.generated))
    return Catalog(lessons=lessons, problems=problems, files=files)


def load_lessons(paths: list[Path]) -> Catalog:
    """``course lessons`` and ``course show``: one folder's lessons (``load_folder``: a missing folder
    is an error), or those of several files and folders."""
    return load_folder(paths[0]) if len(paths) == 1 else load_catalog(paths)


def load_folder(folder: Path | str = DEFAULT_FOLDER) -> Catalog:
    """The lessons of one folder (``lesson_data/`` by default); a missing folder is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "folder not found"
        hint = " (run from the project's root, or name the folder)" if folder == DEFAULT_FOLDER else ""
        raise LessonFolderError(f"{folder}: {what}{hint}")
    return load_catalog([folder])
