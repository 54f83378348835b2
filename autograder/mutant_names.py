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
once per process and solution, and what one answers to a call with plain arguments is remembered
for the process (a hidden test with fixed arguments asks every submission's mutants the same). A
change can make a loop that never ends: in the process's main thread each mutant has
``MUTANT_SECONDS`` (an interval timer), and one that runs out of it is not asked again in that
process; elsewhere (a Dask worker's thread) the mutants of a function with a ``while`` loop are not
asked.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import signal
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from .assignment import Assignment
from .errors import AssignmentError
from .mistakes import AnswerRecorder, Call, answered_alike
from .mutants import Mutant, question_mutants, solution_program
from .reports.model import TestOutcome

MUTANT_SECONDS = 0.2  # one mutant's answers to a question's calls, at most (then never asked again)
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
    failing_calls = [recorder.calls.get((question_id, test.name), []) for test in own if test.status != "passed"]
    if len(failing_calls) < question.mutants.min_checks or not all(failing_calls):
        return None
    try:
        program = solution_program(assignment)
        mutants = _loaded(program, assignment, question_id)
    except AssignmentError:
        return None  # a solution that cannot be read: `autograder verify` says why
    failing = [_Probe.of(call) for calls in failing_calls for call in calls]
    main = threading.current_thread() is threading.main_thread()
    with _quiet(), _alarm() if main else contextlib.nullcontext():
        if _matches(_module(program), failing, main):
            return None  # the solution's own values: the checks fail on something else (a list, a dtype)
        fitting = [
            (m, module) for m, module, loops in mutants if (main or not loops) and _matches(module, failing, main)
        ]
        # A change the student made answers as they did on the passing checks too.
        passing = [
            _Probe.of(call)
            for test in (own if fitting else [])
            if test.status == "passed"
            for call in recorder.calls.get((question_id, test.name), [])
        ]
        sentences = {mutant.sentence for mutant, module in fitting if _matches(module, passing, main)}
    # Two different changes fit: a wrong name is worse than none.
    return sentences.pop() if len(sentences) == 1 else None


@dataclass
class _Probe:
    """One recorded call, made ready to ask of many mutants: its key for the answers remembered,
    and its arguments copied once, their arrays read-only, for every mutant to share (None where
    they hold something a function could change in place: a list, a dict)."""

    call: Call
    key: Any
    shared: tuple[tuple, dict] | None

    @classmethod
    def of(cls, call: Call) -> _Probe:
        shared = None
        if _freezable(call.args) and _freezable(call.kwargs):
            args, kwargs = copy.deepcopy(call.args), copy.deepcopy(call.kwargs)
            for value in (*args, *kwargs.values()):
                _freeze(value)
            shared = (args, kwargs)
        return cls(call, _key((call.name, call.args, call.kwargs)), shared)


def _freezable(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_freezable(item) for item in value.values())
    if isinstance(value, tuple):
        return all(_freezable(item) for item in value)
    return value is None or isinstance(value, np.ndarray | bool | int | float | str | np.number)


def _freeze(value: Any) -> None:
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, tuple):
        for item in value:
            _freeze(item)


def _answer(module: ModuleType, probe: _Probe) -> tuple[str, Any]:
    """What ``module`` answers to the probe's call: ("value", it) or ("raised", the exception's
    name); remembered for the process (a hidden test that calls with fixed arguments, as
    saturation's do, asks the same of every submission's mutants)."""
    known = _answers.get((id(module), probe.key)) if probe.key is not None else None
    if known is not None:
        return known
    call, function = probe.call, getattr(module, probe.call.name)
    answer: tuple[str, Any]
    try:
        if probe.shared is not None:
            answer = ("value", function(*probe.shared[0], **probe.shared[1]))
        else:
            answer = ("value", function(*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs)))
    except ValueError as exc:
        if probe.shared is None or "read-only" not in str(exc):
            answer = ("raised", type(exc).__name__)
        else:  # it changes its arguments in place: a copy of its own, from now on
            probe.shared = None
            return _answer(module, probe)
    except Exception as exc:
        answer = ("raised", type(exc).__name__)
    if probe.key is not None:
        if len(_answers) >= REMEMBERED_ANSWERS:
            _answers.clear()
        _answers[(id(module), probe.key)] = answer
    return answer


_answers: dict[tuple[int, Any], tuple[str, Any]] = {}


def _key(value: Any) -> Any:
    """A call's arguments as a dictionary key, when they are plain values (numbers, strings, tuples
    and lists of them): a check with fixed arguments asks every submission's mutants the same. None
    for anything else (an array is drawn per submission: remembering it would only fill memory)."""
    if value is None or isinstance(value, bool | int | float | str):
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple | list):
        items = [_key(item) for item in value]
        return None if any(item is None for item in items) else (type(value).__name__, tuple(items))
    if isinstance(value, dict):
        pairs = [(str(name), _key(item)) for name, item in sorted(value.items())]
        return None if any(item is None for _, item in pairs) else ("dict", tuple(pairs))
    return None


def _matches(module: ModuleType, probes: list[_Probe], timed: bool) -> bool:
    """Whether ``module`` answers every probe as the student did (the rule that recognises a known
    mistake: ``mistakes.answered_alike``), within ``MUTANT_SECONDS`` when ``timed``."""
    if id(module) in _hung:
        return False
    if timed:
        signal.setitimer(signal.ITIMER_REAL, MUTANT_SECONDS)
    try:
        return all(answered_alike(probe.call, *_split(_answer(module, probe))) for probe in probes)
    except _OutOfTime:
        _hung.add(id(module))  # never asked again in this process: it would spend its time on every submission
        return False
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)


_hung: set[int] = set()  # the mutants (their modules' ids) that ran out of time once


def _split(answer: tuple[str, Any]) -> tuple[str | None, Any]:
    kind, value = answer
    return (value, None) if kind == "raised" else (None, value)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """What the mutants print and warn about (their overflows are the change, not news) goes nowhere."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _alarm() -> Iterator[None]:
    """SIGALRM stops a mutant past its time (``_matches`` sets the timer), for as long as this holds."""

    def stop(signum: int, frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, stop)
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
