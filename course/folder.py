"""A course folder: ``course.toml`` at its root says what the course is and where its parts are.

    title = "Machine Learning, Foundations"
    code = "ML101"
    term = "2026 autumn"

    [[modules]]
    number = 10
    title = "Sequences and attention"
    lessons = "lesson_data"                       # a folder of lesson files
    assignments = ["assignments/sequences-and-attention"]

    [sandbox]
    packages = ["numpy", "matplotlib"]            # what submissions may import (numpy always)

    [defaults]
    late_penalty = "10% per day"                  # for every assignment with a due time; its own wins

    [defaults.limits]                             # for every assignment; its own [limits] win
    call_timeout = 10

Every command finds its course by looking upward from the working directory for ``course.toml`` (as
git finds its repository), or takes ``--course DIR``. ``course init DIR`` writes a new one.
"""

from __future__ import annotations

import shutil
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from .errors import CourseFolderError

COURSE_FILE = "course.toml"
# What submissions may import in the sandbox when course.toml names nothing else ([sandbox] packages):
# the one statement of the default. Here, at the bottom of the imports, because the course's model,
# the engine's assignment and the sandbox's runtime all need it (autograder imports course, never
# the other way round).
SANDBOX_PACKAGES = ("numpy", "matplotlib")
NOT_FOUND = f"no {COURSE_FILE} here or above; run `course init DIR` or pass --course"


class CourseModule(BaseModel):
    # The module's number, as the course numbers it.
    number: int = Field(ge=0)
    # The module's title.
    title: str = Field(min_length=1)
    # The module's lessons folder, relative to course.toml.
    lessons: str = "lessons"
    # The module's assignment folders, relative to course.toml; each folder's name is the assignment's.
    assignments: list[str] = []
    exams: list[str] = []  # folders made by `course exam build`, whose open questions the staff mark on the console


class SandboxSettings(BaseModel):
    # What submissions may import in the sandbox, besides the standard library (numpy always: the
    # grader's protocol carries arrays).
    packages: list[str] = list(SANDBOX_PACKAGES)


class CourseDefaults(BaseModel):
    # Limits for every assignment of the course (autograder's Limits: call_timeout, memory_mib, ...);
    # an assignment's own [limits] win.
    limits: dict[str, float] = {}
    # The late policy of every assignment that sets a due time and no policy of its own.
    late_penalty: str | None = None


class CourseFolder(BaseModel):
    # The course's title, on every page and export.
    title: str = Field(min_length=1)
    # The course's code (MLF), in exports' titles.
    code: str = ""
    # The term (2026 autumn), in exports' titles.
    term: str = ""
    # The course's seed for values drawn per student (an assignment's [parameters]): a new seed each
    # term gives a new class new values; the same seed gives every student the same values again.
    seed: str = ""
    # The course's modules ([[modules]]), at least one.
    modules: list[CourseModule] = Field(min_length=1)
    # What submissions may import ([sandbox]).
    sandbox: SandboxSettings = SandboxSettings()
    # Defaults for every assignment of the course ([defaults]).
    defaults: CourseDefaults = CourseDefaults()
    root: Path

    @property
    def lesson_folders(self) -> list[Path]:
        return [self.root / module.lessons for module in self.modules]

    @property
    def assignment_folders(self) -> dict[str, Path]:
        """Each assignment's folder by its name (the folder's name)."""
        folders = [self.root / path for module in self.modules for path in module.assignments]
        return {folder.name: folder for folder in folders}

    @property
    def exam_folders(self) -> dict[str, Path]:
        """Each exam's folder by its name (the folder's name)."""
        folders = [self.root / path for module in self.modules for path in module.exams]
        return {folder.name: folder for folder in folders}

    def checks_title(self) -> str:
        """The title of a check-question export: the module's, for a course of one module."""
        if len(self.modules) == 1:
            module = self.modules[0]
            return f"Module {module.number}: {module.title}, check questions"
        return f"{self.title}: check questions"

    def exam_title(self) -> str:
        if len(self.modules) == 1:
            module = self.modules[0]
            return f"Module {module.number} exam: {module.title}"
        return f"{self.title} exam"


def find_course(explicit: Path | str | None = None, start: Path | None = None) -> CourseFolder:
    """The course at ``explicit`` (a folder holding course.toml), else the first course.toml in the
    working directory or above it; CourseFolderError when there is none."""
    if explicit is not None:
        folder = Path(explicit)
        if not (folder / COURSE_FILE).is_file():
            raise CourseFolderError(f"{folder}: no {COURSE_FILE} in this folder")
        return read_course(folder / COURSE_FILE)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / COURSE_FILE).is_file():
            return read_course(folder / COURSE_FILE)
    raise CourseFolderError(NOT_FOUND)


def course_or_none(explicit: Path | str | None = None) -> CourseFolder | None:
    """``find_course``, or None when no folder was named and there is no course.toml here or above
    (a command that has its own defaults then)."""
    try:
        return find_course(explicit)
    except CourseFolderError:
        if explicit:
            raise
        return None


def lesson_paths(given: Path | list[Path] | None, explicit: Path | str | None = None) -> list[Path]:
    """The lesson files or folders a command was given, else its course's lesson folders."""
    if given:
        return list(given) if isinstance(given, list) else [given]
    return find_course(explicit).lesson_folders


def read_course(path: Path) -> CourseFolder:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseFolderError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseFolderError(f"{path}: {exc}") from None
    try:
        return CourseFolder(**data, root=path.parent.resolve())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise CourseFolderError(f"{path}: {where}: {first['msg']}") from None
    except TypeError as exc:
        raise CourseFolderError(f"{path}: {exc}") from None


def init_course(folder: Path, title: str = "A new course") -> CourseFolder:
    """Write a new course skeleton into ``folder`` (which must not exist or be empty): course.toml,
    one module with an example lesson, and an example assignment with its source notebook, a hidden
    test, a reference and a known submission, ready to validate, release and grade."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise CourseFolderError(f"{folder}: exists and is not an empty folder; choose a new one")
    skeleton = resources.files("course").joinpath("skeleton")
    folder.mkdir(parents=True, exist_ok=True)
    with resources.as_file(skeleton) as source:
        shutil.copytree(source, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = folder / COURSE_FILE
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("A new course", title), encoding="utf-8")
    (folder / ".gitignore").write_text(".grader-secret\ngraded/\n.gradewright/\n", encoding="utf-8")
    return read_course(manifest)
