"""Naming a mutant in the feedback: the solution's small change that a student's answers match.

When a question fails, its mutants (mutants.py) are asked what they answer to the very calls the
question's checks made of the student's code (recorded as the hidden suite ran, as for the known
mistakes: mistakes.py), and compared by the one rule that recognises a known mistake
(``mistakes.answered_alike``: ``testing.agrees``, a NaN alike a NaN, the same exception alike). The
feedback's first line names the change, "Your positional_encoding matches one that calls np.cos
where np.sin belongs.", below an instructor's own known mistake when both match. A mutant matches
when it answers as the student did on every call of every failing check, and of every passing one
(a change the student made would fail those too). A name is given only when

- every failing check made calls that can be compared, and there are at least the question's
  ``mutants.min_checks`` of them (2 unless the question says otherwise): one check is too little to
  tell one mistake from another;
- the solution itself does not answer as the student did (then the checks fail on something else:
  a list where an array belongs, a dtype);
- the mutants that match all say one thing: two that say different things (two operators, or one
  operator at two places) name nothing, since a wrong name is worse than none.

Mutants are the instructor's code changed, so they run here, in the grader, like the known
mistakes, on the hidden tests' own inputs, only for a failing question; they are made and compiled
once per process and solution, and what one answers to a call is remembered for the process (a
hidden test with fixed arguments asks every submission's mutants the same). A change can make a loop
that never ends: in the process's main thread each mutant has ``MUTANT_SECONDS`` (an interval
timer), elsewhere (a Dask worker's thread) the mutants of a function with a ``while`` loop are not
asked.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import hashlib
import io
import signal
import threading
import warnings
from collections.abc import Iterator, Sequence
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from .assignment import Assignment
from .errors import AssignmentError
from .mistakes import AnswerRecorder, Call, answered_alike
from .mutants import Mutant, question_mutants, solution_program
from .reports.model import TestOutcome

MUTANT_SECONDS = 0.5  # one mutant's answers to a question's failing calls, at most
REMEMBERED_ANSWERS = 20_000  # mutants' answers kept per process (all forgotten when full)


class _OutOfTime(BaseException):
    """A mutant's answers took too long (a BaseException: no ``except Exception`` stops it)."""


def named_mutant(
    assignment: Assignment, question_id: str, tests: Sequence[TestOutcome], recorder: AnswerRecorder
) -> str | None:
    """The sentence of the one change the student's answers on ``question_id``'s checks match, or
    None (no match, too few failing checks, or matches that are different mistakes)."""
    question = assignment.question(question_id)
    own = [test for test in tests if test.question == question_id]
    failing = [recorder.calls.get((question_id, test.name), []) for test in own if test.status != "passed"]
    passing = [recorder.calls.get((question_id, test.name), []) for test in own if test.status == "passed"]
    if len(failing) < question.mutants.min_checks or not all(failing):
        return None
    try:
        program = solution_program(assignment)
        mutants = _loaded(program, assignment, question_id)
    except AssignmentError:
        return None  # a solution that cannot be read: `autograder verify` says why
    main = threading.current_thread() is threading.main_thread()
    if _matches(_module(program), failing, main):
        return None  # the solution's own values: the checks fail on something else (a list, a dtype)
    # A change the student made answers as they did on the failing checks, and on the passing ones too.
    matched = [
        (mutant, module)
        for mutant, module, loops in mutants
        if (main or not loops) and _matches(module, failing, main) and _matches(module, [c for c in passing if c], main)
    ]
    sentences = {mutant.sentence for mutant, _ in matched}
    return (
        sentences.pop() if len(sentences) == 1 else None
    )  # two different changes fit: a wrong name is worse than none


def _answer(module: ModuleType, call: Call) -> tuple[str, Any]:
    """What ``module`` answers to ``call``: ("value", it) or ("raised", the exception's name);
    remembered for the process (a hidden test that calls with fixed arguments, as saturation's do,
    asks the same of every submission's mutants)."""
    key = _key((call.name, call.args, call.kwargs))
    known = _answers.get((id(module), key)) if key is not None else None
    if known is not None:
        return known
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")  # its overflows are the change, not news
            answer: tuple[str, Any] = (
                "value",
                getattr(module, call.name)(*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs)),
            )
    except Exception as exc:
        answer = ("raised", type(exc).__name__)
    if key is not None:
        if len(_answers) >= REMEMBERED_ANSWERS:
            _answers.clear()
        _answers[(id(module), key)] = answer
    return answer


_answers: dict[tuple[int, Any], tuple[str, Any]] = {}


def _key(value: Any) -> Any:
    """A call's arguments as a dictionary key (an array by its dtype, shape and bytes' digest);
    None for an argument of another kind."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, hashlib.blake2b(value.tobytes(), digest_size=16).digest())
    if value is None or isinstance(value, bool | int | float | str | np.number):
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple | list):
        items = [_key(item) for item in value]
        return None if any(item is None for item in items) else (type(value).__name__, tuple(items))
    if isinstance(value, dict):
        pairs = [(str(name), _key(item)) for name, item in sorted(value.items())]
        return None if any(item is None for _, item in pairs) else ("dict", tuple(pairs))
    return None


def _matches(module: ModuleType, calls: list[list[Call]], timed: bool) -> bool:
    """Whether ``module`` answers every call of every check as the student did (the rule that
    recognises a known mistake: ``mistakes.answered_alike``)."""
    if not calls:
        return True
    with _time_limit(MUTANT_SECONDS) if timed else contextlib.nullcontext():
        try:
            return all(answered_alike(call, *_split(_answer(module, call))) for check in calls for call in check)
        except _OutOfTime:
            return False


def _split(answer: tuple[str, Any]) -> tuple[str | None, Any]:
    kind, value = answer
    return (value, None) if kind == "raised" else (None, value)


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _loaded(program: str, assignment: Assignment, question_id: str) -> list[tuple[Mutant, ModuleType, bool]]:
    question = assignment.question(question_id)
    key = (tuple(question.functions), tuple(question.mutants.off))
    return _compiled(program, question_id, key, tuple(question_mutants(assignment, question, program)))


@cache
def _compiled(
    program: str, question_id: str, key: tuple, mutants: tuple[Mutant, ...]
) -> list[tuple[Mutant, ModuleType, bool]]:
    """Each mutant as a module: the solution's definitions, its changed functions over them; and
    whether it holds a ``while`` loop."""
    base = _solution(program)
    loaded = []
    for mutant in mutants:
        module = ModuleType(f"mutant_{mutant.id}")
        module.__dict__.update(base)
        source = "\n\n".join(text for _, text in mutant.sources)
        try:
            exec(compile(source, f"<mutant {mutant.id}>", "exec"), module.__dict__)
        except Exception:  # a change that cannot even define its function: it names nothing
            continue
        loaded.append((mutant, module, any(isinstance(node, ast.While) for node in ast.walk(ast.parse(source)))))
    return loaded


@cache
@cache
def _module(program: str) -> ModuleType:
    module = ModuleType("solution")
    module.__dict__.update(_solution(program))
    return module


@cache
def _solution(program: str) -> dict:
    namespace: dict = {"__name__": "solution"}
    try:
        exec(compile(program, "<solution>", "exec"), namespace)
    except Exception:  # the solution's own fault: verify shows it; no mutant is named meanwhile
        return {"__name__": "solution"}
    return namespace
