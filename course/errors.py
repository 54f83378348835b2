"""Every error the ``course`` package raises for a user to read.

    CourseError                  base: its str() is one line, ready for stderr
     ├── CourseFolderError       no course.toml where one was looked for, or one that cannot be used
     ├── LessonFileError         a lesson file that cannot be loaded; carries its Problems
     ├── LessonFolderError       a folder of lessons that is missing or not a folder
     ├── LessonNotFound          no lesson with the asked slug
     ├── ExportError             check questions that cannot be exported (a bad check, no folder)
     ├── CheckImportError        a platform's file whose checks cannot be imported
     └── ExamError               a roster, an answer-sheet file or an exam folder that cannot be used

A dependency's errors (lxml, zipfile, bytes that are not UTF-8) are said in the package's words in
one place, ``dependency_error``.

A student's or author's mistake inside a lesson file is data (a ``Problem``), reported one per
line as ``FILE: WHERE: WHAT``; exceptions are only raised where a caller cannot go on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from untrusted.text import one_line


class Problem(BaseModel):
    """One thing wrong (or suspicious, for a warning) at one place in one file."""

    model_config = ConfigDict(frozen=True)

    file: str
    where: str
    what: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return one_line(f"{self.file}: {self.where}: {prefix}{self.what}")


class CourseError(Exception):
    """Base of the package's errors; the message is a single user-facing line."""


class CourseFolderError(CourseError):
    """No course.toml where one was looked for, or one that cannot be used."""


class ExportError(CourseError):
    pass


class CheckImportError(CourseError):
    pass


class ExamError(CourseError):
    pass


class LessonFileError(CourseError):
    def __init__(self, problems: list[Problem]):
        if not problems:
            raise ValueError("LessonFileError needs at least one problem")
        self.problems = problems
        super().__init__(str(problems[0]))


class LessonFolderError(CourseError):
    pass


class LessonNotFound(CourseError):
    pass


def dependency_error(exc: BaseException) -> str | None:
    """The one place that says a dependency's error in the package's words (one line), or None for
    an error that is not a known dependency's. lxml and zipfile are told apart by where their
    classes live, so that importing this module costs nothing."""
    kind = type(exc)
    if kind.__module__.startswith("lxml") and kind.__name__ == "XMLSyntaxError":
        line = getattr(exc, "lineno", None)
        message = str(getattr(exc, "msg", "") or exc).split(", line ")[0]
        return f"not well-formed XML{f' at line {line}' if line else ''}: {message}"
    if kind.__module__ == "zipfile":
        return f"not a readable zip archive ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (a byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
    return None
