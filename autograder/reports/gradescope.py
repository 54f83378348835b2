"""``<student>.gradescope.json``: Gradescope's autograder results format (results.json)."""

from __future__ import annotations

import json
from pathlib import Path

from .feedback import late_lines, mark_lines
from .model import Report
from .names import report_stem

GRADESCOPE_STATUS = {
    "passed": "passed",
    "partial": "failed",
    "failed": "failed",
    "error": "failed",
    "timeout": "failed",
}


def results(report: Report) -> dict:
    tests = []
    for question in report.questions:
        output = question.feedback
        if question.mark:
            output = "\n".join(line.strip() for line in mark_lines(question.mark)) or "marked by hand"
        test = {
            "name": question.id,
            "score": question.score,
            "max_score": question.max_score,
            "output": output,
            "visibility": "visible",
        }
        if question.status in GRADESCOPE_STATUS:
            test["status"] = GRADESCOPE_STATUS[question.status]
        tests.append(test)
    output = "\n".join(report.errors + (late_lines(report) if report.late and report.late.percent else []))
    return {
        "score": report.final_score,
        "output": output or f"Graded by {report.grader_version}.",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.gradescope.json"
    path.write_text(
        json.dumps(results(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace"
    )
    return path
