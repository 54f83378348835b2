"""Every error the ``course`` package raises for a user to read.

    CourseError                  base: its str() is one line, ready for stderr
     ├── LessonFileError         a lesson file that cannot be loaded; carries its Problems
     ├── LessonFolderError       a folder of lessons that is missing or not a folder
     └── LessonNotFound          no lesson with the asked slug

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
