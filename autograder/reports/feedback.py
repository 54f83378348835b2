"""``<student>.feedback.txt``: the report in words, for the student to read."""

from __future__ import annotations

from pathlib import Path

from untrusted.text import printable

from .model import Report
from .names import report_stem

MARKS = {"passed": "+", "partial": "~", "failed": "x", "error": "!", "timeout": "!", "manual": "?", "not_graded": "-"}


def text(report: Report) -> str:
    lines = [
        f"{report.assignment}: feedback for {report.student}",
        f"Score: {report.score:g} / {report.max_score:g}",
        "",
    ]
    for question in report.questions:
        mark = MARKS[question.status]
        lines.append(f"[{mark}] {question.id}: {question.score:g} / {question.max_score:g} ({question.status})")
        lines += [f"    {line}" for line in question.feedback.splitlines()]
        lines.append("")
    if report.errors:
        lines.append("Problems running your submission:")
        lines += [f"  - {error}" for error in report.errors]
        lines.append("")
    if report.output:
        lines += ["What your notebook printed while it ran (first 64 KiB):", report.output.rstrip(), ""]
    lines.append(f"Graded {report.graded_at} by grader {report.grader_version} (reference: {report.reference}).")
    return "\n".join(lines) + "\n"


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.feedback.txt"
    # Everything a student controls (names, messages, what the notebook printed) is shown, never acted on.
    path.write_text(printable(text(report), keep_newlines=True), encoding="utf-8")
    return path
