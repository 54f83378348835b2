"""``<student>.gradescope.json``: Gradescope's autograder results format (results.json).

Per Gradescope's specification: a test per question, named by the question's title with its
``number``; a question graded by hand is informational (``max_score`` 0, no status) until it is
marked, then scored; each test's ``visibility`` is its checks' (autograder.visibility, in Gradescope's
words: visible, after_due_date, after_published, hidden), a question whose checks differ written as
one test per visibility (its name says which), a hand mark after_published when the staff publish;
the whole result's ``visibility`` the least hidden of its tests';
``execution_time`` (whole seconds, as the specification has it: the grading's time rounded up) and
``extra_data`` (the submission's hash, the grader's version, and for the staff the hidden tests that
failed by their own code) filled; scores as graded, never rounded. A question not graded for its
tests' own fault has no status (Gradescope's neither passed nor failed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from course.wording import plural

from ..explain import checks_feedback
from .feedback import late_lines, mark_lines
from .model import (
    FROM_FEEDBACK,
    GRADESCOPE,
    VISIBILITIES,
    QuestionResult,
    Report,
    TestOutcome,
    Visibility,
    VisibilityRules,
)
from .names import report_stem

GRADESCOPE_STATUS = {
    "passed": "passed",
    "partial": "failed",
    "failed": "failed",
    "error": "failed",
    "timeout": "failed",
    "not_graded": "failed",
}
# What a test's name says when a question's checks are split by visibility.
PART: dict[Visibility, str] = {
    "visible": "checks shown at once",
    "after_due": "checks shown after the due date",
    "after_published": "checks shown when published",
    "hidden": "hidden checks",
}


def rules_of_report(report: Report) -> VisibilityRules:
    """The report's visibility rules; a report written before them: its ``feedback`` for every check."""
    return report.visibility or VisibilityRules(default=FROM_FEEDBACK[report.feedback])


def _test(number: int, question: QuestionResult, rules: VisibilityRules, faulty: bool = False) -> list[dict]:
    name = question.title or question.id
    test: dict = {"number": str(number), "name": name, "output": question.feedback}
    if question.status == "manual" and question.mark is None:
        # Not marked yet: informational, so it neither counts as a failed 0 nor adds to the maximum.
        test.update(score=0.0, max_score=0.0, visibility="visible")
        return [test]
    if question.mark:
        test.update(score=question.score, max_score=question.max_score)
        test["output"] = "\n".join(line.strip() for line in mark_lines(question.mark)) or "marked by hand"
        test["visibility"] = "after_published" if rules.publish == "by_staff" else "visible"
        return [test]
    groups: dict[Visibility, list[TestOutcome]] = {}
    for outcome in question.tests:
        groups.setdefault(rules.of_check(question.id, outcome.name), []).append(outcome)
    if len(groups) <= 1:
        visibility = next(iter(groups), rules.of_question(question.id))
        test.update(score=question.score, max_score=question.max_score, visibility=GRADESCOPE[visibility])
        if question.status in GRADESCOPE_STATUS and not faulty:  # the tests' own fault: neither passed nor failed
            test["status"] = GRADESCOPE_STATUS[question.status]
        return [test]
    # Checks of several visibilities: a test for each, scored by its own checks (the named mistake,
    # which rests on them all, stays out of every part).
    each = question.max_score / len(question.tests)
    tests: list[dict] = []
    for visibility in sorted(groups, key=VISIBILITIES.index):
        outcomes = groups[visibility]
        passed = sum(outcome.status == "passed" for outcome in outcomes)
        earned = 0.0 if question.score == 0 else min(question.score, each * (passed if not faulty else len(outcomes)))
        all_passed = passed == len(outcomes)
        output = f"all {plural(len(outcomes), 'check')} passed" if all_passed else checks_feedback(outcomes)
        part: dict = {
            "number": f"{number}.{len(tests) + 1}",
            "name": f"{name} ({PART[visibility]})",
            "output": output,
            "score": earned,
            "max_score": each * len(outcomes),
            "visibility": GRADESCOPE[visibility],
        }
        if not faulty:
            part["status"] = "passed" if all_passed else "failed"
        tests.append(part)
    return tests


def results(report: Report) -> dict:
    rules = rules_of_report(report)
    faulty = {fault.question for fault in report.test_faults}  # questions not graded for their tests' own fault
    extra: dict = {"sha256": report.sha256, "grader_version": report.grader_version}
    if report.test_faults:  # the staff's alone: Gradescope shows extra_data to no student
        extra["test_faults"] = [fault.model_dump(mode="json") for fault in report.test_faults]
    output = "\n".join(report.errors + (late_lines(report, report.late) if report.late and report.late.percent else []))
    tests = [
        test for number, q in enumerate(report.questions, start=1) for test in _test(number, q, rules, q.id in faulty)
    ]
    # The whole result is shown as soon as its least hidden test is (each test then by its own).
    shown = {test["visibility"] for test in tests if test.get("max_score")} or {"visible"}
    document: dict = {
        "score": report.final_score,
        "output": output or f"Graded by {report.grader_version}.",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": extra,
    }
    document["visibility"] = next(GRADESCOPE[v] for v in VISIBILITIES if GRADESCOPE[v] in shown)
    if report.seconds is not None:
        document["execution_time"] = math.ceil(report.seconds)  # an integer: Gradescope's field is whole seconds
    return document


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.gradescope.json"
    path.write_text(
        json.dumps(results(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace"
    )
    return path
