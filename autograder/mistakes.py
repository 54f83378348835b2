"""Known mistakes, recognised by their answers.

An assignment's ``known/`` wrong submissions are real mistakes. In ``known/verdicts.toml`` a known
submission's table may hold, beside its verdicts, ``mistake = "sentence"``: the sentence that names
its mistake and says what to change. When a student's question fails, the grader asks each known
mistake that gets that question wrong what it answers to the very calls the question's failing
checks made of the student's code, and compares: when the student's answers agree with one
mistake's on every failing check (by the one tolerance rule, ``testing.agrees``; raising the same
exception counts as agreeing) the feedback begins with that mistake's sentence. The failing checks
already differ from the reference's answers, so a mistake that a student's answers match is one the
reference does not make on those inputs.

What the student's code answered is recorded as the hidden suite runs (``AnswerRecorder``, in the
grader: the sandbox is asked nothing more), and the known mistakes are instructor's code, trusted,
loaded once per grading process and run here on the inputs of that submission's failing checks
only. The inputs are drawn per secret and submission (secret.py), so what a mistake answers cannot
be kept from one student to the next; it is computed for the failing checks alone, a fraction of a
millisecond each (benchmarks/grading.py measures grading with and without recognition side by
side).
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import re
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .assignment import Assignment
from .errors import AssignmentError, StudentFault
from .known import PASSING, known_sentences, known_verdicts
from .reports.model import TestOutcome
from .testing import agrees

if TYPE_CHECKING:
    from .suite import HiddenSuite

logger = logging.getLogger(__name__)


@dataclass
class Call:
    """One call the hidden suite made of the student's code, and what came back."""

    name: str
    args: tuple
    kwargs: dict
    value: Any = None
    raised: str | None = None  # the fault's message, when the call did not return a value


@dataclass
class AnswerRecorder:
    """Stands for the student in the hidden tests: passes each call on to ``student`` (the sandbox's
    proxy) and keeps the arguments and the answer under the test that made it."""

    student: Any
    suite: HiddenSuite
    calls: dict[tuple[str, str], list[Call]] = field(default_factory=dict)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        function = getattr(self.student, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            # A copy of the inputs: the test may change its arrays after the call.
            record = Call(name, copy.deepcopy(args), copy.deepcopy(kwargs))
            self.calls.setdefault(self.suite.current_test(), []).append(record)
            try:
                record.value = function(*args, **kwargs)
            except StudentFault as fault:
                record.raised = str(fault)
                raise
            return record.value

        return call


@dataclass(frozen=True)
class KnownMistake:
    file: str  # the known submission's file name
    sentence: str
    wrong: frozenset[str]  # the questions it gets wrong (by its verdicts)
    module: ModuleType  # its code, loaded in the grader


def load_known_code(path: Path) -> ModuleType:
    """A known submission's code, run here (trusted: the instructor's own file), cell by cell for a
    notebook as the worker runs one (a cell that raises is left behind)."""
    from .submissions import extract

    module = ModuleType(f"known_mistake_{path.stem}")
    module.__file__ = str(path)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in extract(path).cells:
            try:
                exec(compile(cell.source, str(path), "exec"), module.__dict__)
            except Exception:  # the known file's own broken cell: what defines the rest still counts
                continue
    return module


_loaded: dict[Path, tuple[tuple, list[KnownMistake]]] = {}


def known_mistakes(assignment: Assignment) -> list[KnownMistake]:
    """The assignment's known mistakes (``mistake = "..."`` in known/verdicts.toml), loaded once
    per process and again when known/ changes; none when the assignment has no known/ folder."""
    known = assignment.folder / "known"
    if not (known / "verdicts.toml").is_file():
        return []
    stamp = tuple(
        (path.name, path.stat().st_mtime_ns, path.stat().st_size) for path in sorted(known.iterdir()) if path.is_file()
    )
    cached = _loaded.get(known.resolve())
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        verdicts = known_verdicts(assignment)
        sentences = known_sentences(assignment)
    except AssignmentError as error:
        # The instructor's list of known submissions, not a student's work: grading goes on without
        # naming mistakes, and `autograder verify` shows the same error to fix.
        logger.warning("known mistakes not used: %s", error)
        _loaded[known.resolve()] = (stamp, [])
        return []
    mistakes = [
        KnownMistake(
            file=file,
            sentence=sentence,
            wrong=frozenset(q for q, verdict in verdicts[file].items() if verdict not in PASSING),
            module=load_known_code(known / file),
        )
        for file, sentence in sentences.items()
    ]
    _loaded[known.resolve()] = (stamp, mistakes)
    return mistakes


def answers_alike(mistake: ModuleType, calls: Sequence[Call]) -> bool:
    """Whether ``mistake`` answers every one of ``calls`` as the student did."""
    if not calls:
        return False
    for call in calls:
        function = getattr(mistake, call.name, None)
        if not callable(function):  # alike only when the student's is missing too
            if call.raised is None or not call.raised.startswith(f"{call.name} is not defined"):
                return False
            continue
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")  # its overflows are the mistake, not news
                value = function(*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs))
        except Exception as exc:
            if not answered_alike(call, type(exc).__name__, None):
                return False
            continue
        if not answered_alike(call, None, value):
            return False
    return True


def answered_alike(call: Call, raised: str | None, value: Any) -> bool:
    """Whether an answer to ``call`` (``raised``: the name of the exception it raised, else
    ``value``) is the student's: the same exception, or a value by the one tolerance rule."""
    if raised is not None:
        # The session words a raise "softmax raised NotImplementedError at line 4 of your code".
        return call.raised is not None and re.search(rf"\braised {raised}\b", call.raised) is not None
    return call.raised is None and agrees(call.value, value, nan_alike=True)


def recognise(
    mistakes: Sequence[KnownMistake], question: str, tests: Sequence[TestOutcome], recorder: AnswerRecorder
) -> list[KnownMistake]:
    """The known mistakes of ``question`` whose answers agree with the student's on every failing
    check of it (none when a failing check made no call that can be compared)."""
    failing = [test for test in tests if test.question == question and test.status != "passed"]
    if not failing:
        return []
    calls = [recorder.calls.get((question, test.name), []) for test in failing]
    if not all(calls):
        return []
    return [
        mistake
        for mistake in mistakes
        if question in mistake.wrong and all(answers_alike(mistake.module, test_calls) for test_calls in calls)
    ]


def named_mistake(found: Sequence[KnownMistake], failing: Collection[str]) -> str | None:
    """The sentence to lead with, of the mistakes ``found`` (``recognise``): the one they all have
    (two files may show one mistake), else the one of those that get wrong exactly the questions
    this submission fails (``failing``: a file with two mistakes against a file with one of
    them); none when the grader still cannot tell which mistake it is."""
    for candidates in (found, [mistake for mistake in found if mistake.wrong == set(failing)]):
        sentences = {mistake.sentence for mistake in candidates}
        if len(sentences) == 1:
            return sentences.pop()
    return None
