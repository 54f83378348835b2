"""Lesson loaders, one module per file format, chosen by the file's content.

Each loader is ``load(source: SourceText) -> LoadedLesson`` and raises ``LessonFileError`` with the
problems it found. Register a new format in ``LOADERS``; ``detect_format`` picks among them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..models import LessonFormat
from . import json_export, markdown, plain_text
from .source import MAX_LESSON_BYTES, LoadedLesson, SourceText, detect_format, read_source

LOADERS: dict[LessonFormat, Callable[[SourceText], LoadedLesson]] = {
    "json": json_export.load,
    "markdown": markdown.load,
    "text": plain_text.load,
}


def load_lesson(path: Path | str) -> LoadedLesson:
    """Load one lesson file of any supported format; raises LessonFileError if it cannot be loaded."""
    source = read_source(Path(path))
    return LOADERS[detect_format(source)](source)


__all__ = ["LOADERS", "MAX_LESSON_BYTES", "LoadedLesson", "SourceText", "detect_format", "load_lesson", "read_source"]
