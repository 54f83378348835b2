"""``<student>.json``: the full report, as the grader and other tools read it."""

from __future__ import annotations

import json
from pathlib import Path

from .model import Report
from .names import report_stem


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.json"
    path.write_text(
        json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
        errors="backslashreplace",
    )
    return path
