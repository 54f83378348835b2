"""``autograder verify`` tests the tests: each question's mutants graded by its hidden suite.

A question's mutants (mutants.py) run in one sandboxed session per question: the solution's
definitions, and beside them every mutant's functions under names of their own (``softmax__m3``),
loaded once; the hidden tests call a mutant through a view that gives its functions their own
names. A mutant is

- **killed** when some check of the question fails on it (a timeout or an error counts: the
  mutant's calls have ``MUTANT_CALL_SECONDS`` each at most);
- **equivalent** when it passes and answers as the solution does, by the one tolerance rule, on
  every input drawn: the calls the hidden tests made under the secret, and each of them again with
  its real arrays stretched a thousandfold (large inputs, where an unstable formula shows); no test
  can tell it from the solution, so it is set aside;
- **survived** otherwise: the hidden tests pass a program that answers differently. Its diff and
  sentence say what the suite misses, so the instructor adds a check or a known mistake, or
  accepts it in the question's ``mutants.accepted`` with the reason (then it is **accepted**; an
  entry may be a pattern, ``"f:*"``, for a function whose checks test a property that other answers
  keep too).

The mutation score of a question is the killed mutants over the non-equivalent ones.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from course.wording import plural

from .assignment import Assignment, Question
from .errors import StudentFault
from .mistakes import AnswerRecorder, Call
from .mutants import Mutant, question_mutants, renamed_sources, solution_program
from .own_values import known_values
from .sandbox.limits import Limits
from .sandbox.reported import Cell
from .sandbox.runners import Runner
from .sandbox.session import StudentSession
from .suite import hidden_suite
from .testing import agrees

MUTANT_CALL_SECONDS = 3.0  # a mutant's call, at most (a flipped loop condition may never end)
STRETCH = 1000.0  # the real arrays of a drawn call, stretched: where an unstable formula shows
SUFFIX = "__m"

MutantStatus = Literal["killed", "survived", "equivalent", "accepted"]


class MutantResult(BaseModel):
    id: str
    operator: str
    sentence: str  # what verify says: "your hidden tests pass a softmax that ..."
    diff: str
    status: MutantStatus
    reason: str = ""  # an accepted survivor's reason (mutants.accepted)


class QuestionMutation(BaseModel):
    question: str
    mutants: list[MutantResult]
    problem: str = ""  # why the question's mutants could not be judged (the solution fails its own checks)
    stale: list[str] = []  # accepted ids (or patterns) that no mutant has any more

    def count(self, status: MutantStatus) -> int:
        return sum(mutant.status == status for mutant in self.mutants)

    @property
    def judged(self) -> int:
        """The non-equivalent mutants: the score's denominator."""
        return len(self.mutants) - self.count("equivalent")

    @property
    def killed_share(self) -> float:
        return self.count("killed") / self.judged if self.judged else 1.0

    def lines(self) -> list[str]:
        """What ``autograder verify`` prints: the score, then, indented, each survivor (its diff and
        sentence), each accepted one (its reason) and each accepted id that no mutant has any more."""
        same = self.count("equivalent")
        head = (
            self.problem or f"{self.killed_share:.0%}, {self.count('killed')} of {plural(self.judged, 'mutant')} killed"
        )
        if not self.mutants and not self.problem:
            head = "no mutant made (the solution defines none of its functions, or its operators are all off)"
        found = [
            f"mutants {self.question}: {head}" + (f" ({plural(same, 'equivalent one')} set aside)" if same else "")
        ]
        for mutant in self.mutants:
            if mutant.status == "survived":
                found.append(f"  survives {mutant.id}: {mutant.diff}: {mutant.sentence}")
            elif mutant.status == "accepted":
                found.append(f"  accepted {mutant.id}: {mutant.diff}: {mutant.reason}")
        found += [f"  stale mutants.accepted {id_}: no mutant has this id any more" for id_ in self.stale]
        return found


def mutation_limits(limits: Limits) -> Limits:
    """A question's session of mutants: a short call, and time for all of them."""
    return limits.model_copy(
        update={
            "call_timeout": min(limits.call_timeout, MUTANT_CALL_SECONDS),
            "submission_timeout": max(limits.submission_timeout, 600.0),
            "cpu_seconds": max(limits.cpu_seconds, 600),
        }
    )


def mutation_scores(
    assignment: Assignment,
    runner: Runner,
    reference: Any,
    secret: str,
    limits: Limits | None = None,
    on_question: Callable[[str], None] | None = None,
) -> list[QuestionMutation]:
    """Every graded question's mutants judged by its hidden suite under ``secret``."""
    program = solution_program(assignment)
    found = []
    for question in assignment.questions:
        if question.manual or not question.functions:
            continue
        mutants = question_mutants(assignment, question, program)
        found.append(_judge(assignment, question, mutants, program, runner, reference, secret, limits))
        if on_question:
            on_question(question.id)
    return found


class _View:
    """The session's functions as the hidden tests ask for them, the question's under a mutant's names."""

    def __init__(self, student: Any, names: set[str], suffix: str):
        self._student, self._names, self._suffix = student, names, suffix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._student, name + self._suffix if name in self._names else name)


def _judge(
    assignment: Assignment,
    question: Question,
    mutants: list[Mutant],
    program: str,
    runner: Runner,
    reference: Any,
    secret: str,
    limits: Limits | None,
) -> QuestionMutation:
    accepted = question.mutants.accepted
    stale = sorted(pattern for pattern in accepted if not any(fnmatchcase(m.id, pattern) for m in mutants))
    if not mutants:
        return QuestionMutation(question=question.id, mutants=[], stale=stale)
    suite = hidden_suite(assignment)
    source = program + "".join(f"\n\n{renamed_sources(m, f'{SUFFIX}{i}')}" for i, m in enumerate(mutants))
    seed = (secret, f"mutants of {question.id}")
    names = set(question.functions)
    results = []
    with StudentSession(
        runner, [Cell(index=1, source=source)], mutation_limits(limits or assignment.limits)
    ) as session:
        load = session.load()
        recorder = AnswerRecorder(session.student, suite)
        values = known_values(assignment)  # the solution's are the template's
        solution = [] if load.failure else suite.run(recorder, reference, seed, question.id, values=values)
        failing = [test for test in solution if test.status != "passed"]
        if load.failure or failing or not solution:
            why = load.failure or (
                f"the solution fails its own check {failing[0].name}: {failing[0].message}"
                if failing
                else "no hidden test grades it"
            )
            return QuestionMutation(question=question.id, mutants=[], problem=why, stale=stale)
        drawn = probes([call for calls in recorder.calls.values() for call in calls if call.name in names])
        expected = [_answer(session.student, call.name, call) for call in drawn]
        for index, mutant in enumerate(mutants):
            view = _View(session.student, names, f"{SUFFIX}{index}")
            outcomes = suite.run(view, reference, seed, question.id, values=values)
            if any(outcome.status != "passed" for outcome in outcomes):
                status: MutantStatus = "killed"
            elif all(alike(_answer(view, call.name, call), want) for call, want in zip(drawn, expected, strict=True)):
                status = "equivalent"
            else:
                status = "accepted" if accepted_reason(mutant.id, accepted) is not None else "survived"
            results.append(
                MutantResult(
                    id=mutant.id,
                    operator=mutant.operator,
                    sentence=mutant.gap,
                    diff=mutant.diff,
                    status=status,
                    reason=accepted_reason(mutant.id, accepted) or "" if status == "accepted" else "",
                )
            )
    return QuestionMutation(question=question.id, mutants=results, stale=stale)


def accepted_reason(mutant_id: str, accepted: dict[str, str]) -> str | None:
    """Why a surviving mutant is accepted: its id's entry, else the first pattern that matches it
    (``"explanation_breaking_input:*"``: every mutant of a function whose checks test a property
    any such change may keep), else None."""
    if mutant_id in accepted:
        return accepted[mutant_id]
    return next((reason for pattern, reason in accepted.items() if fnmatchcase(mutant_id, pattern)), None)


def probes(calls: list[Call]) -> list[Call]:
    """The drawn calls, and each again with its real arrays stretched (where it has any)."""
    stretched = []
    for call in calls:
        args, kwargs = _stretched(call.args), _stretched(call.kwargs)
        if args is not None or kwargs is not None:
            stretched.append(Call(call.name, args if args is not None else call.args, kwargs or call.kwargs))
    return calls + stretched


def _stretched(value: Any) -> Any:
    """``value`` with every real (floating) array times ``STRETCH``; None when it holds none."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value * STRETCH
    if isinstance(value, tuple | list):
        items = [_stretched(item) for item in value]
        if all(item is None for item in items):
            return None
        return type(value)(new if new is not None else old for new, old in zip(items, value, strict=True))
    if isinstance(value, dict):
        changed = {key: _stretched(item) for key, item in value.items()}
        if all(item is None for item in changed.values()):
            return None
        return {key: changed[key] if changed[key] is not None else item for key, item in value.items()}
    return None


def _answer(student: Any, name: str, call: Call) -> tuple[str, Any]:
    """What the function answers: ("value", it) or ("raised", the fault's kind)."""
    try:
        return "value", getattr(student, name)(*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs))
    except StudentFault as fault:
        return "raised", type(fault).__name__


def alike(got: tuple[str, Any], want: tuple[str, Any]) -> bool:
    """Two answers alike: both raised the same kind of fault, or both values by the one tolerance rule."""
    if got[0] != want[0]:
        return False
    return got[1] == want[1] if got[0] == "raised" else agrees(got[1], want[1], nan_alike=True)
