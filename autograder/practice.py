"""Practice checks: hidden tests a student may run but never read.

An instructor marks some of a question's hidden tests as practice (``checks = { test_name =
"practice" }`` in its question, autograder.visibility). Grading leaves them out: they count in no
score. ``run_practice`` runs them, and only them, on a submission in the sandbox, here on the grader's
side (nothing of them ever reaches the student's machine), and returns what the student may read of
each: its question, its sentence (the first paragraph of the test's docstring) and whether it
passed. Never its code, its inputs, its expected values, nor even its message: a practice check
says what it checks and whether the code does it, and no more.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

from pydantic import BaseModel

from .assignment import Assignment
from .reports.model import check_name
from .sandbox.limits import Limits
from .sandbox.runners import Runner
from .sandbox.session import StudentSession
from .submissions import Submission, Unreadable, extract
from .suite import hidden_suite


class PracticeCheck(BaseModel):
    """One practice check's result, as its student reads it."""

    question: str
    sentence: str  # what it checks, in the instructor's words
    passed: bool
    # Of a check that did not pass: failed (wrong values), error (the code raised), timeout.
    status: Literal["passed", "failed", "error", "timeout"]


class PracticeRun(BaseModel):
    """What one run of an assignment's practice checks on a submission gives its student."""

    assignment: str
    checks: list[PracticeCheck]
    # Why none could run (the submission could not be read, or its code run), else None.
    problem: str | None = None


def practice_checks(assignment: Assignment, question: str | None = None) -> set[tuple[str, str]]:
    """The assignment's practice checks (question, test name), or one question's."""
    return {
        (owner, name)
        for owner, name in assignment.visibility_rules.practice_checks()
        if question is None or owner == question
    }


def run_practice(
    assignment: Assignment,
    submission: Submission,
    runner: Runner,
    reference: ModuleType,
    limits: Limits | None = None,
    secret: str = "",
    question: str | None = None,
) -> PracticeRun:
    """Run the practice checks (with ``question``, that question's) on ``submission`` in the sandbox;
    never raises for anything the student's code did (a submission that cannot run is ``problem``)."""
    wanted = practice_checks(assignment, question)
    suite = hidden_suite(assignment)
    if not wanted:
        return PracticeRun(assignment=assignment.name, checks=[])
    try:
        if submission.problem:
            raise Unreadable(submission.problem)
        extracted = extract(submission.path)
    except Unreadable as unreadable:
        return PracticeRun(assignment=assignment.name, checks=[], problem=str(unreadable))
    with StudentSession(runner, extracted.cells, limits or assignment.limits) as session:
        load = session.load()
        if load.failure:
            return PracticeRun(
                assignment=assignment.name, checks=[], problem=f"your code could not be run: {load.failure}"
            )
        outcomes = suite.run(session.student, reference, (secret, submission.sha256), question, checks=wanted)
    # A parametrised test is one check (as its visibility is): passed when every copy passed, else
    # told by its first copy that did not.
    checks: dict[tuple[str, str], PracticeCheck] = {}
    for outcome in outcomes:
        key = (outcome.question, check_name(outcome.name))
        told = checks.get(key)
        if told is None or (told.passed and outcome.status != "passed"):
            checks[key] = PracticeCheck(
                question=outcome.question,
                sentence=outcome.description,
                passed=outcome.status == "passed",
                status=outcome.status,
            )
    return PracticeRun(assignment=assignment.name, checks=list(checks.values()))


def practice_job(
    submission: dict,
    assignment: dict,
    options: dict,
    reference_kind: str,
    secret: str = "",
    question: str | None = None,
) -> dict:
    """One run of the practice checks, in whichever process runs it (the worker's own, or a Dask
    cluster's, as ``batch.grade_job`` is): plain data in and out, the ``PracticeRun`` as JSON."""
    from .batch import GradeOptions
    from .pool import pool_job
    from .references import load_reference

    spec = Assignment.model_validate(assignment)
    grade_options = GradeOptions.model_validate(options)
    with pool_job():  # as a grading job: in a pool's process, the SIGTERM that interrupts it ends the process
        run = run_practice(
            spec,
            Submission.model_validate(submission),
            grade_options.runner(spec),
            load_reference(spec, reference_kind),
            grade_options.limits(spec),
            secret,
            question,
        )
    return run.model_dump(mode="json")
