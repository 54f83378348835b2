"""The export formats, by name: the one registry that ``course.exports`` builds its exporters from
and the command line offers, importable without loading any exporter (so ``course --help`` starts
at once)."""

from __future__ import annotations

from pathlib import Path

# name -> the module of course.exports that writes it (its ``export``, or ``module:function``)
EXPORT_FORMATS = {
    "qti12": "qti12",
    "qti21": "qti21",
    "moodle": "moodle",
    "gift": "gift",
    "olx": "olx",
    "olx-library": "olx:export_library",
    "json": "json_format",
}
DEFAULT_LESSONS = Path("lesson_data")
