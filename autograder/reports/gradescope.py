"""``<student>.gradescope.json``: Gradescope's autograder results format (results.json).

Per Gradescope's specification: a test per question, named by the question's title with its
``number``; a question graded by hand is informational (``max_score`` 0, no status) until it is
marked, then scored; ``visibility`` follows the assignment's ``feedback`` (immediate: visible;
after_due: after_due_date; hidden: hidden), the questions graded by hand always visible;
``execution_time`` (whole seconds, as the specification has it: the grading's time rounded up) and
``extra_data`` (the submission's hash, the grader's version, and for the staff the hidden tests that
failed by their own code) filled; scores as graded, never rounded. A question not graded for its
tests' own fault has no status (Gradescope's neither passed nor failed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .feedback import late_lines, mark_lines
from .model import QuestionResult, Report
from .names import report_stem

GRADESCOPE_STATUS = {
    "passed": "passed",
    "partial": "failed",
    "failed": "failed",
    "error": "failed",
    "timeout": "failed",
    "not_graded": "failed",
}
VISIBILITY = {"immediate": "visible", "after_due": "after_due_date", "hidden": "hidden"}


def _test(number: int, question: QuestionResult, visibility: str, faulty: bool = False) -> dict:
    test: dict = {"number": str(number), "name": question.title or question.id, "output": question.feedback}
    if question.status == "manual" and question.mark is None:
        # Not marked yet: informational, so it neither counts as a failed 0 nor adds to the maximum.
        test.update(score=0.0, max_score=0.0, visibility="visible")
        return test
    test.update(score=question.score, max_score=question.max_score, visibility=visibility)
    if question.mark:
        test["output"] = "\n".join(line.strip() for line in mark_lines(question.mark)) or "marked by hand"
        test["visibility"] = "visible"
    elif question.status in GRADESCOPE_STATUS and not faulty:  # the tests' own fault: neither passed nor failed
        test["status"] = GRADESCOPE_STATUS[question.status]
    return test


def results(report: Report) -> dict:
    visibility = VISIBILITY[report.feedback]
    faulty = {fault.question for fault in report.test_faults}  # questions not graded for their tests' own fault
    extra: dict = {"sha256": report.sha256, "grader_version": report.grader_version}
    if report.test_faults:  # the staff's alone: Gradescope shows extra_data to no student
        extra["test_faults"] = [fault.model_dump(mode="json") for fault in report.test_faults]
    output = "\n".join(report.errors + (late_lines(report, report.late) if report.late and report.late.percent else []))
    document = {
        "score": report.final_score,
        "output": output or f"Graded by {report.grader_version}.",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": [_test(number, q, visibility, q.id in faulty) for number, q in enumerate(report.questions, start=1)],
        "extra_data": extra,
    }
    if report.seconds is not None:
        document["execution_time"] = math.ceil(report.seconds)  # an integer: Gradescope's field is whole seconds
    return document


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.gradescope.json"
    path.write_text(
        json.dumps(results(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace"
    )
    return path
