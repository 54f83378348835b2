"""Reading a lesson file safely, and telling its format from its content."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import LessonFileError, Problem
from ..models import Lesson, LessonFormat

ModelT = TypeVar("ModelT", bound=BaseModel)

# A lesson is a few dozen kilobytes; anything this large is a mistake, and is refused before reading.
MAX_LESSON_BYTES = 5 * 1024 * 1024
WHOLE_FILE = "whole file"

_MARKDOWN_SIGNS = re.compile(r"(¶[ \t]*$|^#{1,6}[ \t]|^```|^~~~|\\\(|\\\[|\*\*\S)", re.MULTILINE)


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str

    @property
    def name(self) -> str:
        return str(self.path)

    def problem(self, where: str, what: str, severity: str = "error") -> Problem:
        return Problem(file=self.name, where=where, what=what, severity=severity)  # type: ignore[arg-type]

    def fail(self, where: str, what: str) -> LessonFileError:
        return LessonFileError([self.problem(where, what)])


class LoadedLesson(BaseModel):
    """A lesson as loaded, with the warnings its file earned (disagreements, missing parts)."""

    lesson: Lesson
    warnings: list[Problem] = []


def build_model(
    origin: SourceText, locate: Callable[[tuple[Any, ...]], str], model: type[ModelT], /, **fields: Any
) -> ModelT:
    """``model(**fields)``, its validation errors turned into Problems placed by ``locate(loc)``."""
    try:
        return model(**fields)
    except ValidationError as exc:
        problems = [origin.problem(locate(tuple(error["loc"])), _message(error)) for error in exc.errors()]
        raise LessonFileError(problems) from None


def _message(error: Any) -> str:
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message


def read_source(path: Path) -> SourceText:
    """The file's text, or a LessonFileError saying why it is not a readable text file."""
    name = str(path)

    def fail(what: str, where: str = WHOLE_FILE) -> LessonFileError:
        return LessonFileError([Problem(file=name, where=where, what=what)])

    try:
        size = path.stat().st_size
        if not path.is_file():
            raise fail("not a regular file")
        if size > MAX_LESSON_BYTES:
            raise fail(
                f"file is {size / 1e6:.1f} MB, over the {MAX_LESSON_BYTES // (1024 * 1024)} MB limit for a lesson file"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise fail("no such file") from None
    except IsADirectoryError:
        raise fail("is a folder, not a file") from None
    except PermissionError:
        raise fail("permission denied") from None
    except OSError as exc:
        raise fail(f"cannot be read: {exc.strerror or exc}") from None

    if not data.strip():
        raise fail("file is empty")
    if b"\x00" in data:
        offset = data.index(b"\x00")
        raise fail(
            f"binary content (a NUL byte at offset {offset}); a lesson file is text", f"line {_line_at(data, offset)}"
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as UTF-8",
            f"line {_line_at(data, exc.start)}",
        ) from None
    return SourceText(path=path, text=text.replace("\r\n", "\n").replace("\r", "\n"))


def detect_format(source: SourceText) -> LessonFormat:
    """JSON if it reads as a JSON object (or claims to be JSON), Markdown if it carries Markdown's
    marks (``¶`` headings, ``#`` headings, fences, ``\\( \\)`` math, bold), plain text otherwise;
    plain text has bullet lists too, so those do not count."""
    suffix = source.path.suffix.lower()
    if source.text.lstrip().startswith(("{", "[")) or suffix == ".json":
        return "json"
    if _MARKDOWN_SIGNS.search(source.text) or suffix in {".md", ".markdown"}:
        return "markdown"
    return "text"


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1
