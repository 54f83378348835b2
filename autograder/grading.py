"""Grading one submission: its code in a sandboxed worker, the hidden suite here.

The hidden pytest suite runs in this (trusted) process. Its tests ask for two fixtures: ``student``,
whose attributes call the submission's functions in the worker, and ``reference``, the chosen
reference implementation. Each test module is marked with the question it grades
(``pytestmark = pytest.mark.question("softmax")``). A test's result becomes feedback only through
``Mismatch`` messages and student faults, which are written not to reveal hidden inputs.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from untrusted.text import bounded, storable

from .assignment import ANSWER_STUB, Assignment, Question, question_of_cell
from .errors import StudentFault
from .reports.model import QuestionResult, Report, Status, TestOutcome
from .sandbox.process import Limits
from .sandbox.runners import Runner
from .sandbox.session import LoadResult, StudentSession
from .secret import input_seed
from .submissions import Submission, Unreadable, answers_after_heading, extract
from .testing import Mismatch
from .version import grader_version

# A report's size is bounded whatever the submission does: at most this many problems, each this long.
MAX_REPORT_ERRORS = 50
MAX_ERROR_CHARS = 500
MAX_ANSWER_CHARS = 20_000  # per written answer, kept for hand grading

GENERIC_FAILURE = "the result was not what the question asks for"
# pytest plugins a hidden suite never needs; leaving them out saves about a third of a grading.
# (Checks go through Mismatch, so assertion rewriting is not needed either: --assert=plain.)
UNUSED_PLUGINS = [
    arg
    for name in (
        "cacheprovider",
        "stepwise",
        "faulthandler",
        "logging",
        "junitxml",
        "doctest",
        "pastebin",
        "debugging",
        "unraisableexception",
        "threadexception",
        "legacypath",
        "setuponly",
        "setupplan",
        "warnings",
        "python_path",
        "tmpdir",
        "monkeypatch",
        "recwarn",
    )  # fmt: skip
    for arg in ("-p", f"no:{name}")
]


class SuitePlugin:
    """Gives the hidden tests their fixtures and records each test's outcome."""

    def __init__(
        self, session: StudentSession, reference: ModuleType, questions: list[Question], seed_material: tuple[str, str],
        only: str | None = None,
    ):  # fmt: skip
        self.session = session
        self.seed_material = seed_material
        self.reference_module = reference
        self.known = {question.id for question in questions}
        self.outcomes: list[TestOutcome] = []
        self.only = only

    @pytest.fixture
    def student(self):
        return self.session.student

    @pytest.fixture
    def reference(self):
        return self.reference_module

    @pytest.fixture
    def rng(self, request):
        """Random inputs of the test's own for this submission: drawn from the grader's secret, the
        submission's hash and the test, so they are the same on a regrade of the same file (whatever
        order the tests run in) and different for any other file."""
        secret, sha256 = self.seed_material
        return np.random.default_rng(input_seed(secret, sha256, request.node.nodeid))

    def pytest_collection_modifyitems(self, config, items):
        """A regrade of one question runs that question's tests only."""
        if self.only is None:
            return
        kept = [item for item in items if _question_of(item) == self.only]
        config.hook.pytest_deselected(items=[item for item in items if _question_of(item) != self.only])
        items[:] = kept

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "question(id): the assignment question a hidden test grades")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and report.failed):
            self.outcomes.append(self._outcome(item, call.excinfo))

    def _outcome(self, item, excinfo) -> TestOutcome:
        question = _question_of(item)
        doc = (item.function.__doc__ or item.name).strip().splitlines()[0]
        common = {"question": question, "name": item.name, "description": doc}
        if excinfo is None:
            return TestOutcome(status="passed", **common)
        error = excinfo.value
        if isinstance(error, StudentFault):
            return TestOutcome(status=error.status, message=str(error), **common)
        if isinstance(error, Mismatch):
            return TestOutcome(status="failed", message=str(error), **common)
        return TestOutcome(status="failed", message=GENERIC_FAILURE, **common)


def _question_of(item) -> str:
    marker = item.get_closest_marker("question")
    return marker.args[0] if marker and marker.args else "unmarked"


def run_hidden_suite(
    assignment: Assignment, session: StudentSession, reference: ModuleType, seed_material: tuple[str, str],
    only: str | None = None,
) -> list[TestOutcome]:  # fmt: skip
    plugin = SuitePlugin(session, reference, assignment.questions, seed_material, only)
    # Plugins installed beside the grader (pytest-benchmark, pytest-timeout...) are not loaded: a
    # hidden suite needs none, and loading them cost a fifth of each grading.
    arguments = [str(assignment.hidden_path), "-c", os.devnull, "--rootdir", str(assignment.hidden_path),
                 "--import-mode=importlib", "-q", "-s", "--assert=plain", "--tb=no", "--disable-plugin-autoload",
                 *UNUSED_PLUGINS]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = pytest.main(arguments, plugins=[plugin])
    if code == pytest.ExitCode.INTERRUPTED:  # pytest swallows Ctrl-C and SIGTERM: pass them on
        raise KeyboardInterrupt
    return plugin.outcomes


def grade_submission(
    assignment: Assignment,
    submission: Submission,
    runner: Runner,
    reference: ModuleType,
    limits: Limits | None = None,
    secret: str = "",
    only_question: str | None = None,
) -> Report:
    """Grade one submission (with ``only_question``, that question alone: the report holds its result
    only); never raises for anything the student's code did."""
    limits = limits or assignment.limits
    started = time.monotonic()
    errors: list[str] = []
    outcomes: list[TestOutcome] = []
    answers: dict[str, str] = {}
    load: LoadResult | None = None
    question_ids = [question.id for question in assignment.questions]
    try:
        if submission.problem:
            raise Unreadable(submission.problem)
        extracted = extract(submission.path)
    except Unreadable as unreadable:
        errors.append(str(unreadable))
    else:
        answers = dict(extracted.answers)
        for question_id, heading in assignment.answer_headings.items():
            if not any(question_of_cell(grade_id, question_ids) == question_id for grade_id in answers):
                found = answers_after_heading(extracted.layout, heading)
                answers |= {f"{question_id}_{cell}": text for cell, text in found.items()}
        with StudentSession(runner, extracted.cells, limits) as session:
            load = session.load()
            if load.failure:
                errors.append(load.failure)
            else:
                errors += [str(error) for error in load.cell_errors]
                outcomes = run_hidden_suite(assignment, session, reference, (secret, submission.sha256), only_question)
    if len(errors) > MAX_REPORT_ERRORS:
        errors = errors[:MAX_REPORT_ERRORS] + [f"... and {len(errors) - MAX_REPORT_ERRORS} more problems"]
    errors = [bounded(error, MAX_ERROR_CHARS) for error in errors]
    graded = [question for question in assignment.questions if only_question in (None, question.id)]
    questions = [_question_result(question, outcomes, load, answers, question_ids) for question in graded]
    if only_question is None:  # the other questions' results are needed to point at a cause
        questions = with_dependencies(assignment, questions)
    return Report(
        student=submission.student,
        assignment=assignment.name,
        score=sum(q.score for q in questions),
        max_score=assignment.max_score,
        questions=questions,
        errors=errors,
        output=load.output if load else "",
        submission=storable(str(submission.path)),
        sha256=submission.sha256,
        reference=getattr(reference, "NAME", reference.__name__),
        sandbox=runner.name,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        grader_version=grader_version(),
        ran=load is not None and not load.failure,
        submitted_at=submission.submitted_at.isoformat(timespec="seconds") if submission.submitted_at else None,
        feedback=assignment.feedback,
        seconds=round(time.monotonic() - started, 3),
        only_question=only_question,
    )


def _question_result(
    question: Question,
    outcomes: list[TestOutcome],
    load: LoadResult | None,
    answers: dict[str, str],
    question_ids: list[str],
) -> QuestionResult:
    base: dict[str, Any] = {"id": question.id, "title": question.title, "max_score": question.points}
    if question.manual:
        written = {
            grade_id: bounded(text.strip(), MAX_ANSWER_CHARS)
            for grade_id, text in answers.items()
            if question_of_cell(grade_id, question_ids) == question.id and text.replace(ANSWER_STUB, "").strip()
        }
        feedback = "graded by hand" + (
            f"; {len(written)} written answer(s) to read" if written else "; no written answer found"
        )
        return QuestionResult(score=0.0, status="manual", feedback=feedback, answers=written, **base)
    if load is None or load.failure:
        reason = "your submission could not be read" if load is None else f"your code could not be run: {load.failure}"
        return QuestionResult(score=0.0, status="error", feedback=reason, **base)
    tests = [outcome for outcome in outcomes if outcome.question == question.id]
    if not tests:
        return QuestionResult(score=0.0, status="error", feedback="no test graded this question", **base)
    missing = [f for f in question.functions if f not in load.defined]
    status: Status
    passed = sum(test.status == "passed" for test in tests)
    score = question.points * passed / len(tests)  # exact: rounded only where it is shown
    if missing:
        status, feedback = "error", f"{', '.join(missing)} is not defined in your submission"
        score = 0.0
    elif passed == len(tests):
        status, feedback = "passed", f"all {len(tests)} checks passed"
    else:
        failing = [test for test in tests if test.status != "passed"]
        if passed:
            status = "partial"
        elif all(test.status == "timeout" for test in failing):
            status = "timeout"
        elif all(test.status in {"error", "timeout"} for test in failing):
            # Every check stopped by the code itself (raised, or ran out of time or memory, as a
            # submission that fills memory slowly does by either, depending on the machine's load):
            # an error, never "failed", which says the values were wrong.
            status = "error"
        else:
            status = "failed"
        lines = [f"{passed} of {len(tests)} checks passed."]
        seen: set[str] = set()
        for test in failing:
            line = f"- {test.description}: {test.message}"
            if line not in seen:
                seen.add(line)
                lines.append(line)
        feedback = "\n".join(lines)
    return QuestionResult(score=score, status=status, feedback=feedback, tests=tests, **base)


def with_dependencies(assignment: Assignment, results: list[QuestionResult]) -> list[QuestionResult]:
    """Feedback that points at the cause: when a question fails and a function it uses (``uses`` in
    the manifest) fails its own question, the feedback says so first. The dependent question is
    charged as measured (``charge_dependents = true``, the default) or, when the instructor says
    ``false``, marked not graded, with no score, until the function it uses passes."""
    by_id = {result.id: result for result in results}
    owner = {function: question.id for question in assignment.questions for function in question.functions}
    updated = []
    for question, result in zip(assignment.questions, results, strict=True):
        broken = [
            function
            for function in question.uses
            if function in owner and owner[function] != question.id and by_id[owner[function]].status != "passed"
        ]
        if not broken or result.status in {"passed", "manual"}:
            updated.append(result)
            continue
        names = " and ".join(broken)
        first = f"Your {names} {'fails' if len(broken) == 1 else 'fail'} {'its' if len(broken) == 1 else 'their'} own tests; fix {'it' if len(broken) == 1 else 'them'} first: these failures may come from {'it' if len(broken) == 1 else 'them'}."
        if assignment.charge_dependents:
            updated.append(result.model_copy(update={"feedback": f"{first}\n{result.feedback}"}))
        else:
            updated.append(
                result.model_copy(
                    update={
                        "score": 0.0,
                        "status": "not_graded",
                        "feedback": f"Not graded: depends on {names}. {first}\n{result.feedback}",
                    }
                )
            )
    return updated
