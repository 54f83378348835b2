"""Grading one submission: its code in a sandboxed worker, the hidden suite here.

The hidden pytest suite runs in this (trusted) process, collected once per process (suite.py). Its
tests ask for two fixtures: ``student``, whose attributes call the submission's functions in the
worker, and ``reference``, the chosen reference implementation. Each test module is marked with the
question it grades (``pytestmark = pytest.mark.question("softmax")``). A test's result becomes
feedback only through ``Mismatch`` messages and student faults, which are written not to reveal
hidden inputs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from course.wording import plural
from untrusted.text import bounded, storable

from .assignment import ANSWER_STUB, Assignment, Question, question_of_cell
from .causes import Causes, failing_uses, find_causes
from .explain import checks_feedback, lead_with
from .mistakes import AnswerRecorder, known_mistakes, named_mistake, recognise
from .mutant_names import named_mutant
from .own_values import compare, mismatch_sentence, student_values
from .reports.model import QuestionResult, Report, Status, TestOutcome
from .sandbox.limits import Limits
from .sandbox.runners import Runner
from .sandbox.session import LoadResult, StudentSession
from .submissions import Extracted, Submission, Unreadable, answers_after_heading, extract
from .suite import HiddenSuite, hidden_suite
from .version import grader_version

logger = logging.getLogger(__name__)
# A hidden test that failed by its own code: what its check and its question say to the student.
TEST_FAULT = "The grader's own check failed here, not your code; it is not counted against you."
NOT_GRADED_TESTS_FAILED = "Not graded: the assignment's tests failed (not your code):"
_TOLD: set[tuple[str, str, str, str]] = set()  # the tests' own faults this process has logged
# A report's size is bounded whatever the submission does: at most this many problems, each this long.
MAX_REPORT_ERRORS = 50
MAX_ERROR_CHARS = 500
MAX_ANSWER_CHARS = 20_000  # per written answer, kept for hand grading


def grade_submission(
    assignment: Assignment,
    submission: Submission,
    runner: Runner,
    reference: ModuleType,
    limits: Limits | None = None,
    secret: str = "",
    only_question: str | None = None,
    mistakes_seen: dict[str, list[str]] | None = None,
    values: Mapping[str, Any] | None = None,
) -> Report:
    """Grade one submission (with ``only_question``, that question alone: the report holds its result
    only); never raises for anything the student's code did. ``mistakes_seen``, when given, is
    filled with each failing question's known mistakes whose answers the submission's match (their
    files, for ``autograder verify``). An assignment's [parameters] are the values drawn for the
    submission's student (own_values.py), which the report compares with the notebook's; ``values``,
    when given, are used instead and nothing is compared (a known version, written with the template's)."""
    limits = limits or assignment.limits
    started = time.monotonic()
    suite = hidden_suite(assignment)  # collected before any student code runs: a broken suite is the instructor's
    own = dict(values) if values is not None else student_values(assignment, submission.student)
    own_values = None
    errors: list[str] = []
    outcomes: list[TestOutcome] = []
    answers: dict[str, str] = {}
    load: LoadResult | None = None
    question_ids = [question.id for question in assignment.questions]
    extracted: Extracted | None = None
    try:
        if submission.problem:
            raise Unreadable(submission.problem)
        extracted = extract(submission.path)
    except Unreadable as unreadable:
        errors.append(str(unreadable))
    else:
        answers = answer_cells(assignment, extracted)
        if values is None:  # the student's values beside the notebook's: a swapped notebook is data, not an error
            own_values = compare(assignment, submission.student, (cell.source for cell in extracted.cells))
            if own_values is not None and not own_values.matches:
                errors.append(mismatch_sentence(own_values))
    graded = [question for question in assignment.questions if only_question in (None, question.id)]
    causes: Causes = {}
    recorder: AnswerRecorder | None = None
    if extracted is not None:
        with StudentSession(runner, extracted.cells, limits) as session:
            load = session.load()
            if load.failure:
                errors.append(load.failure)
            else:
                errors += [str(error) for error in load.cell_errors]
                # What the student's code answered, kept to compare with the known mistakes' answers.
                recorder = AnswerRecorder(session.student, suite)
                # Practice checks are the student's to run (practice.py), never the grade's.
                practice = assignment.visibility_rules.practice_checks()
                outcomes = suite.run(
                    recorder, reference, (secret, submission.sha256), only_question, values=own, leave_out=practice
                )
                outcomes = confirmed_faults(suite, outcomes, reference, (secret, submission.sha256), own)
                if only_question is None:  # the other questions' results are needed to point at a cause
                    measured = [_question_result(q, outcomes, load, answers, question_ids) for q in graded]
                    causes = find_causes(
                        assignment, measured, session, suite, reference, (secret, submission.sha256), own
                    )
    if len(errors) > MAX_REPORT_ERRORS:
        errors = errors[:MAX_REPORT_ERRORS] + [f"... and {plural(len(errors) - MAX_REPORT_ERRORS, 'more problem')}"]
    errors = [bounded(error, MAX_ERROR_CHARS) for error in errors]
    questions = [_question_result(question, outcomes, load, answers, question_ids) for question in graded]
    if only_question is None:
        questions = with_dependencies(assignment, questions, causes)
    if recorder is not None:
        questions = with_known_mistakes(assignment, questions, recorder, mistakes_seen)
    faults = list({(o.question, o.name): o.fault for o in outcomes if o.fault is not None}.values())
    for fault in faults:
        told = (assignment.name, fault.question, fault.test, fault.error)
        if told in _TOLD:  # once per process: every submission's report keeps it for the staff's pages
            continue
        _TOLD.add(told)
        logger.warning(
            "assignment %s: the hidden test %s of question %s failed by its own code at %s (%s): the question "
            "is not graded; fix the test, then grade it again (autograder grade --question %s)",
            assignment.name,
            fault.test,
            fault.question,
            fault.where,
            fault.error,
            fault.question,
        )
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
        visibility=assignment.visibility_rules,
        seconds=round(time.monotonic() - started, 3),
        only_question=only_question,
        test_faults=faults,
        own_values=own_values,
    )


class _ReferenceAsStudent:
    """The reference standing in for the student: a test that fails with it too fails by its own code."""

    def __init__(self, reference: ModuleType):
        self._reference = reference

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._reference, name)


def confirmed_faults(
    suite: HiddenSuite,
    outcomes: list[TestOutcome],
    reference: ModuleType,
    seed_material: tuple[str, str],
    values: Mapping[str, Any] | None = None,
) -> list[TestOutcome]:
    """``outcomes`` with each test that raised in its own code (``TestOutcome.fault``) run again, on
    the same inputs, with the reference as the student: one that fails by its own code again is the
    assignment's fault (an error the student is not charged for, its fault kept); one that passes
    failed on what the student's code returned (an answer of the wrong kind), and stays a failure."""
    suspects = {(o.question, o.name) for o in outcomes if o.fault is not None}
    if not suspects:
        return outcomes
    again = suite.run(
        _ReferenceAsStudent(reference), reference, seed_material, tests={name for _, name in suspects}, values=values
    )
    broken = {(o.question, o.name) for o in again if o.fault is not None}
    updated = []
    for outcome in outcomes:
        if outcome.fault is None:
            updated.append(outcome)
        elif (outcome.question, outcome.name) in broken:
            updated.append(outcome.model_copy(update={"status": "error", "message": TEST_FAULT}))
        else:
            updated.append(outcome.model_copy(update={"fault": None}))
    return updated


def answer_cells(assignment: Assignment, extracted: Extracted) -> dict[str, str]:
    """A notebook's written answers, each cell by its nbgrader ``grade_id`` (question_of_cell says
    whose), or, for a question whose cells lost their metadata, the cells under its heading
    (``<question>_cell N``). The released notebook read this way gives the starter text each
    answer began as (gradebook.marking.empty_answers)."""
    question_ids = [question.id for question in assignment.questions]
    answers = dict(extracted.answers)
    for question_id, heading in assignment.answer_headings.items():
        if not any(question_of_cell(grade_id, question_ids) == question_id for grade_id in answers):
            found = answers_after_heading(extracted.layout, heading)
            answers |= {f"{question_id}_{cell}": text for cell, text in found.items()}
    return answers


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
            f"; {plural(len(written), 'written answer')} to read" if written else "; no written answer found"
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
    broken = [test for test in tests if test.fault is not None]  # the assignment's fault: counted as passed
    score = question.points * (passed + len(broken)) / len(tests)  # exact: rounded only where it is shown
    if missing:
        status, feedback = "error", f"{', '.join(missing)} is not defined in your submission"
        score = 0.0
    elif broken:
        working = [test for test in tests if test.fault is None]
        failing = [test for test in working if test.status != "passed"]
        status = "not_graded"
        feedback = (
            f"{NOT_GRADED_TESTS_FAILED} {plural(len(broken), 'check')} of {len(tests)} could not run; "
            "they count as passed until your instructor fixes them and grades this question again."
        )
        if failing:
            feedback += "\n" + checks_feedback(working)
    elif passed == len(tests):
        status, feedback = (
            "passed",
            f"all {plural(len(tests), 'check')} passed" if len(tests) > 1 else "the one check passed",
        )
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
        feedback = checks_feedback(tests)
    return QuestionResult(score=score, status=status, feedback=feedback, tests=tests, **base)


def with_known_mistakes(
    assignment: Assignment,
    results: list[QuestionResult],
    recorder: AnswerRecorder,
    seen: dict[str, list[str]] | None = None,
) -> list[QuestionResult]:
    """Each failing question's feedback opened by the sentence of the known mistake whose answers
    the student's match on every failing check (mistakes.py), then by the mutant's they match
    (mutant_names.py); the others as they are."""
    failing = {  # a question whose only failures are its tests' own faults shows no mistake of the student
        result.id
        for result in results
        if result.status not in ("passed", "manual")
        and not (result.tests and all(test.status == "passed" or test.fault for test in result.tests))
    }
    mistakes = known_mistakes(assignment) if failing else []  # loaded once a submission fails something
    if not failing:
        return results
    updated = []
    for result in results:
        sentences: list[str] = []
        if result.id in failing and result.tests:
            found = recognise(mistakes, result.id, result.tests, recorder) if mistakes else []
            if seen is not None:
                seen[result.id] = [mistake.file for mistake in found]
            # The instructor's own known mistake first, then the solution's change it matches (mutant_names.py).
            named = (named_mistake(found, failing), named_mutant(assignment, result.id, result.tests, recorder))
            sentences = [sentence for sentence in named if sentence]
        updated.append(
            result.model_copy(update={"feedback": lead_with("\n".join(sentences), result.feedback)})
            if sentences
            else result
        )
    return updated


def with_dependencies(
    assignment: Assignment, results: list[QuestionResult], causes: Causes | None = None
) -> list[QuestionResult]:
    """Feedback that points at the cause: when a question fails and a function it uses (``uses`` in
    the manifest) fails its own question, the feedback says whether that function explains it
    (``causes``: what it did with what this question gave it, from causes.py; without a finding,
    that the failures may come from it). A function that went wrong on those inputs, or that the
    grader could not judge, is the one to fix first; one that returned the right values, or was
    never called, is not blamed: the fault is the question's own.

    ``causes`` come from the submission's own process (a rerun it can detect) and change the wording
    only, never a score: the question is charged as measured (``charge_dependents = true``, the
    default) or, when the instructor says ``false``, marked not graded, with no score, while any
    function it uses fails its own question, whatever the rerun found."""
    causes = causes or {}
    broken_by_question = failing_uses(assignment, results)
    updated = []
    for question, result in zip(assignment.questions, results, strict=True):
        broken = broken_by_question.get(question.id, [])
        found = causes.get(question.id, {})
        blamed = [function for function in broken if found.get(function, "unknown") in ("wrong", "unknown")]
        innocent = [function for function in broken if found.get(function) == "right"]
        lines = []
        if blamed:
            lines.append(_blame(blamed, question, all(found.get(f) == "wrong" for f in blamed)))
        if innocent:
            lines.append(_acquit(innocent, question))
        feedback = "\n".join([*lines, result.feedback])
        if broken and not assignment.charge_dependents:
            update = {
                "score": 0.0,
                "status": "not_graded",
                "feedback": f"Not graded: depends on {' and '.join(broken)}. {feedback}",
            }
            updated.append(result.model_copy(update=update))
        else:
            updated.append(result.model_copy(update={"feedback": feedback}) if lines else result)
    return updated


def _blame(functions: list[str], question: Question, shown: bool) -> str:
    one = len(functions) == 1
    names = " and ".join(functions)
    it = "it" if one else "them"
    why = (
        f"{'it goes' if one else 'they go'} wrong on what your {' and '.join(question.functions)} passes {it}."
        if shown
        else f"these failures may come from {it}."
    )
    return f"Your {names} {'fails its' if one else 'fail their'} own tests; fix {it} first: {why}"


def _acquit(functions: list[str], question: Question) -> str:
    one = len(functions) == 1
    names = " and ".join(functions)
    own = " and ".join(question.functions)
    return (
        f"Your {names} {'fails its' if one else 'fail their'} own tests, but {'it returns' if one else 'they return'} "
        f"the right values for everything your {own} passes {'it' if one else 'them'}: look for the fault in {own} itself."
    )
