"""Whether a function that a failing question uses explains the failure.

A question's function may call functions that other questions grade (``uses`` in the manifest). When
the question fails and one of those fails its own question, blaming it ("fix it first") helps only if
it went wrong on what the question gave it: a softmax that overflows on scores in the thousands
explains a failing attention, but an attention that ignores masks does not explain a multi-head
attention that never passes a mask and splits its heads wrongly.

So the question's failing checks are run once more with those functions watched (the worker keeps, for each,
the arguments the submission's own code gave it and what it returned; see sandbox/worker.py), and each
returned value is compared, by the one tolerance rule, with what the reference's function of the same
name returns for the same arguments:

- ``wrong``: some call returned a wrong value (or raised): it explains the failure, fix it first;
- ``right``: every call returned the right value: the fault is in the question's own function;
- ``unused``: the question's function never called it: it cannot be the cause;
- ``unknown``: the grader cannot tell (no reference of that name, the reference refused the
  arguments, the watch was lost to a crash): the feedback says the failures *may* come from it.

The watched calls come from the submission's process, which the student controls (a forged record, or
a function that behaves differently while watched, as ``sys.getprofile()`` can tell): what is found here
changes the wording of a question's feedback, never a score (grading.py's ``with_dependencies``). The
reference's work on those calls runs under a budget of its own (budgeted.py: REFERENCE_SECONDS of CPU at
most a call's time limit, REFERENCE_MEMORY_MIB): arguments chosen to make it compute for long or fill
memory leave the causes unknown and the grader as it was. The extra run costs a question's failing
checks once more, only for a submission that fails a question and a function it uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from .assignment import Assignment
from .budgeted import run_within_budget
from .reports.model import QuestionResult
from .testing import agrees

if TYPE_CHECKING:
    from .sandbox.session import ObservedCall, StudentSession, Watched
    from .suite import HiddenSuite

Cause = Literal["wrong", "right", "unused", "unknown"]
Causes = dict[str, dict[str, Cause]]  # question id -> each failing function it uses -> what it did
CAUSES: tuple[Cause, ...] = ("wrong", "right", "unused", "unknown")
# The reference's budget for judging one question's watched calls: memory beyond what the grader holds
# (an honest rerun needs a few MiB), and CPU time (a call's time limit at most).
REFERENCE_MEMORY_MIB = 256
REFERENCE_SECONDS = 10.0


def failing_uses(assignment: Assignment, results: Sequence[QuestionResult]) -> dict[str, list[str]]:
    """For each question that did not pass, the functions it uses whose own question did not pass."""
    # A question whose only failures are its tests' own (the assignment's fault) counts as passing here.
    status = {
        result.id: "passed"
        if result.tests and all(t.status == "passed" or t.fault for t in result.tests)
        else result.status
        for result in results
    }
    owner = {function: question.id for question in assignment.questions for function in question.functions}
    found: dict[str, list[str]] = {}
    for question in assignment.questions:
        if status.get(question.id) in (None, "passed", "manual"):
            continue
        broken = [
            function
            for function in question.uses
            if function in owner and owner[function] != question.id and status.get(owner[function]) != "passed"
        ]
        if broken:
            found[question.id] = broken
    return found


def find_causes(
    assignment: Assignment,
    results: Sequence[QuestionResult],
    session: StudentSession,
    suite: HiddenSuite,
    reference: ModuleType,
    seed_material: tuple[str, str],
    values: Mapping[str, Any] | None = None,
) -> Causes:
    """What each failing function a failing question uses did with what that question gave it
    (``values``: the student's, as the suite's run had them)."""
    causes: Causes = {}
    for question_id, functions in failing_uses(assignment, results).items():
        result = next(result for result in results if result.id == question_id)
        failing = {test.name for test in result.tests if test.status != "passed"}
        if not failing or not session.watch(functions):
            causes[question_id] = dict.fromkeys(functions, "unknown")
            continue
        # The failing checks again, with the same inputs (their seeds are the test's and the file's).
        suite.run(session.student, reference, seed_material, question_id, failing, values=values)
        watched = session.watched()

        def judged(functions: list[str] = functions, watched: Watched = watched) -> dict[str, Cause]:
            return {
                function: judge(
                    getattr(reference, function, None),
                    [call for call in watched.calls if call.name == function],
                    complete=not watched.dropped,
                )
                for function in functions
            }

        found = (
            run_within_budget(judged, min(REFERENCE_SECONDS, session.limits.call_timeout), REFERENCE_MEMORY_MIB)
            if watched.calls
            else judged()
        )
        found = found if isinstance(found, dict) else {}
        causes[question_id] = {
            function: found[function] if found.get(function) in CAUSES else "unknown" for function in functions
        }
    return causes


def judge(implementation: Any, calls: Sequence[ObservedCall], complete: bool = True) -> Cause:
    """What the calls of one function show, against the reference's ``implementation`` of it
    (``complete``: every call was kept; when some were not, only a wrong one can tell)."""
    if not callable(implementation):
        return "unknown"
    if not calls:
        return "unused" if complete else "unknown"
    unsure = not complete
    for call in calls:
        try:
            expected = implementation(*call.args, **call.kwargs)
        except Exception:  # arguments the reference refuses: this call cannot tell
            unsure = True
            continue
        if call.value is None or not agrees(call.value, expected):
            return "wrong"
    return "unknown" if unsure else "right"
