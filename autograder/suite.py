"""An assignment's hidden pytest suite: collected once per grading process, run for each submission.

pytest's configuration and collection cost about as much as running a suite of 35 quick checks, so
a process that grades many submissions (a batch's grading process, the service's worker) collects
each assignment's suite once and runs its collected tests again for every submission. pytest has no
public API for running a collected session again: the private entry points used here are the ones
``pytest.main`` itself calls (``_prepareconfig``, ``Session.from_config``, ``wrap_session``'s steps,
and ``runtestprotocol``, without the reporting hooks that only print), confined to this module;
pyproject.toml keeps pytest below its next major version, and every grading test runs through here.

A suite's test modules are taken out of ``sys.modules`` once collected (its tests keep them): pytest
names a module by its file name, so two assignments with a ``test_functions.py`` each would
otherwise share the first one's tests. A suite whose files change is collected again.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import numpy.random  # loaded with the suite, while the sandbox starts, not by the first rng
import pytest
from _pytest.config import ConftestImportFailure, _prepareconfig
from _pytest.main import Session
from _pytest.runner import runtestprotocol

from untrusted.text import bounded

from .assignment import MANIFEST, Assignment
from .authoring.origin import master_place
from .errors import AssignmentError, StudentFault
from .reports.model import TestFault, TestOutcome, check_name
from .secret import input_seed
from .testing import Mismatch

GENERIC_FAILURE = "The result was not what the question asks for."
MAX_FAULT_CHARS = 500  # a hidden test's own error, as the staff read it
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
    )
    for arg in ("-p", f"no:{name}")
]


class _Run:
    """What one submission's run of the suite needs and gathers."""

    def __init__(
        self,
        student: Any,
        reference: ModuleType,
        seed_material: tuple[str, str],
        values: Mapping[str, Any] | None = None,
    ):
        self.student = student
        self.reference = reference
        self.seed_material = seed_material
        self.values = dict(values or {})
        self.outcomes: list[TestOutcome] = []
        self.nodeid = ""  # the test running now


class SuitePlugin:
    """Gives the hidden tests their fixtures, records each test's outcome, and the collection's errors."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder  # the suite's own files: an error raised in them is the test's own
        self.run: _Run | None = None
        self.collection_errors: list[pytest.CollectReport] = []
        self.labels: dict[pytest.Item, dict[str, str]] = {}  # each test's question, name and description

    def _current(self) -> _Run:
        if self.run is None:  # only a test run outside HiddenSuite.run could get here
            raise RuntimeError("a hidden test ran outside a submission's run")
        return self.run

    @pytest.fixture
    def student(self):
        """The submission's functions by name (``student.softmax(x)``): each call runs in the sandbox
        and returns plain data, or fails the test as the student's error or timeout."""
        return self._current().student

    @pytest.fixture
    def reference(self):
        """The reference module this grading compares against (``--reference``; its ``NAME`` is what
        reports say): the functions the notebook asks for, as the instructor wrote them."""
        return self._current().reference

    @pytest.fixture
    def parameters(self):
        """The values drawn for the student being graded (the assignment's [parameters], by name:
        ``parameters.seq_len``), from their id and never from their notebook (own_values.py); the
        template's values when the grading is of no student (verify's known versions, mutants)."""
        return SimpleNamespace(**self._current().values)

    @pytest.fixture
    def rng(self):
        """Random inputs of the test's own for this submission: drawn from the grader's secret, the
        submission's hash and the test, so they are the same on a regrade of the same file (whatever
        order the tests run in) and different for any other file."""
        # The test is the one HiddenSuite.run runs now (a function-scoped fixture serves only it):
        # asking pytest for ``request`` instead builds a fixture definition each time (a tenth of
        # the suite's own cost).
        run = self._current()
        secret, sha256 = run.seed_material
        return np.random.default_rng(input_seed(secret, sha256, run.nodeid))

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "question(id): the assignment question a hidden test grades")

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        excinfo = call.excinfo
        skipped = excinfo is not None and isinstance(excinfo.value, pytest.skip.Exception)
        if call.when == "call" or (call.when == "setup" and excinfo is not None and not skipped):
            self._current().outcomes.append(_outcome(self.labels[item], excinfo, self.folder))
        if excinfo is None:
            outcome, longrepr = "passed", None
        elif skipped or not isinstance(excinfo.value, Exception) or isinstance(excinfo.value, BaseExceptionGroup):
            return None  # pytest's own report: it tells a skip (or a group of them) from a failure
        else:
            outcome, longrepr = "failed", "failed"
        # The report pytest would make, less what no one reads here: a failure's formatted traceback
        # (a quarter of the grading of a submission that fails every check) and the item's keywords
        # (its markers and its parents', walked for every report). The outcome above is what the
        # grader reads, and nothing prints a hidden test's report (log=False in HiddenSuite.run).
        return pytest.TestReport(
            item.nodeid,
            item.location,
            {},
            outcome,
            longrepr,
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
        )


def _labels(item) -> dict[str, str]:
    """What a test's outcome says of the test itself: the same for every submission."""
    # A test's docstring starts with its check's text, the sentence the student reads; what follows
    # a blank line is for the instructor (tests/test_hidden_suites.py holds every suite to it).
    paragraph = (item.function.__doc__ or item.name).strip().split("\n\n")[0]
    description = sentence(" ".join(paragraph.split()))
    marker = item.get_closest_marker("question")
    question = marker.args[0] if marker and marker.args else "unmarked"
    return {"question": question, "name": item.name, "description": description}


def _outcome(common: dict[str, str], excinfo, folder: Path | None = None) -> TestOutcome:
    question, name, description = common["question"], common["name"], common["description"]
    if excinfo is None:
        return TestOutcome(status="passed", question=question, name=name, description=description)
    error = excinfo.value
    if isinstance(error, StudentFault):
        status, message = error.status, sentence(str(error))
        return TestOutcome(status=status, message=message, question=question, name=name, description=description)
    if isinstance(error, Mismatch):
        message = sentence(str(error))
        return TestOutcome(status="failed", message=message, question=question, name=name, description=description)
    # Raised in the suite's own code: the test's fault, unless what the student returned made it
    # fail (grading.py runs the test again with the reference standing in for the student to tell).
    # A failed assert is a check that failed (the verdicts verify holds it to), never the code's error.
    own = folder is not None and not isinstance(error, AssertionError)
    fault = _own_fault(common, excinfo, folder) if own and folder is not None else None
    return TestOutcome(
        status="failed", message=GENERIC_FAILURE, fault=fault, question=question, name=name, description=description
    )


def _own_fault(common: dict[str, str], excinfo, folder: Path) -> TestFault | None:
    """The test's own error, when the innermost frame of its traceback is in the suite's files (the
    test's module, its conftest, its helpers), with those frames, each named where the instructor
    wrote it (the master notebook's cell and line, when assign wrote the file); else None."""
    frames = []
    for entry in excinfo.traceback:
        path = Path(str(entry.path))
        if path.is_absolute() and path.resolve().is_relative_to(folder):
            line = entry.lineno + 1
            where = master_place(path, line) or f"{path}, line {line}"
            try:
                code = str(entry.statement).strip().splitlines()[0]
            except Exception:  # noqa: BLE001 - the code is only shown; its place is enough
                code = ""
            frames.append((where, entry.name, code, entry is excinfo.traceback[-1]))
    if not frames or not frames[-1][3]:
        return None
    error = bounded(f"{type(excinfo.value).__name__}: {excinfo.value}".rstrip(": "), MAX_FAULT_CHARS)
    lines = [f"  {where}, in {name}" + (f"\n    {code}" if code else "") for where, name, code, _ in frames]
    return TestFault(
        question=common["question"],
        test=common["name"],
        error=error,
        where=frames[-1][0],
        traceback="\n".join([*lines, error]),
    )


def sentence(text: str) -> str:
    """``text`` ending as a sentence does (a check's text, a check's message)."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?")) else f"{text}."


def _collection_error(folder: Path, report: pytest.CollectReport) -> str:
    """One line: the file, the line when pytest's report gives it, and the error's last line."""
    text = str(report.longrepr)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    cause = lines[-1].removeprefix("E").strip() if lines else "it cannot be imported"
    where = folder / report.nodeid if report.nodeid else folder
    # A traceback's "test_x.py:3: in <module>", or a SyntaxError's 'File ".../test_x.py", line 3'.
    found = re.findall(rf'{re.escape(where.name)}(?::(\d+): in |", line (\d+))', text)
    line = next((a or b for a, b in reversed(found)), None)
    place = master_place(where, int(line)) if line else None  # the master's cell, when assign wrote the file
    named = place or f"{where}{f', line {line}' if line else ''}"
    return f"{named}: a hidden test cannot be collected: {cause}"


def _fingerprint(folder: Path) -> tuple:
    """The suite's files as they are now: a change to any of them means collecting again."""
    found = []
    for path in sorted(folder.rglob("*")):
        if "__pycache__" not in path.parts and path.is_file():
            status = path.stat()
            found.append((str(path.relative_to(folder)), status.st_mtime_ns, status.st_size))
    return tuple(found)


class HiddenSuite:
    """One assignment's hidden suite, collected; ``run`` runs it for one submission."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.fingerprint = _fingerprint(folder)
        self.plugin = SuitePlugin(folder)
        # Plugins installed beside the grader (pytest-benchmark, pytest-timeout...) are not loaded: a
        # hidden suite needs none, and loading them cost a fifth of each grading.
        arguments = [
            str(folder),
            "-c",
            os.devnull,
            "--rootdir",
            str(folder),
            # Only the suite's own conftest.py files: never one of a folder above it (a course
            # repository's, or this project's tests/conftest.py around its fixtures).
            "--confcutdir",
            str(folder),
            "--import-mode=importlib",
            "-q",
            "-s",
            "--assert=plain",
            "--tb=no",
            "--disable-plugin-autoload",
            *UNUSED_PLUGINS,
        ]
        before = set(sys.modules)
        with _quiet():
            try:
                self.config = _prepareconfig(arguments, [self.plugin])  # imports the suite's conftest.py
                self.config._do_configure()
                self.session = Session.from_config(self.config)
                self.config.hook.pytest_sessionstart(session=self.session)
                self.config.hook.pytest_collection(session=self.session)
            except ConftestImportFailure as failure:
                if hasattr(self, "session"):  # a conftest.py of a subfolder, met while collecting
                    self.close()
                cause = f"{type(failure.cause).__name__}: {failure.cause}"
                raise AssignmentError(
                    f"{failure.path}: the hidden tests' conftest cannot be imported: {cause}"
                ) from None
            finally:
                self._forget_modules(before)
        if self.plugin.collection_errors:
            self.close()
            raise AssignmentError(_collection_error(folder, self.plugin.collection_errors[0]))
        self.items: list[pytest.Item] = list(self.session.items)
        self.plugin.labels = {item: _labels(item) for item in self.items}
        self._items_by_nodeid = {item.nodeid: item for item in self.items}

    def _forget_modules(self, before: set[str]) -> None:
        for name in set(sys.modules) - before:
            module = sys.modules[name]
            file = getattr(module, "__file__", None)
            if file and Path(file).resolve().is_relative_to(self.folder):  # resolved by hidden_suite
                del sys.modules[name]

    def run(
        self,
        student: Any,
        reference: ModuleType,
        seed_material: tuple[str, str],
        only: str | None = None,
        tests: Collection[str] | None = None,
        values: Mapping[str, Any] | None = None,
        leave_out: Collection[tuple[str, str]] = (),
        checks: Collection[tuple[str, str]] | None = None,
    ) -> list[TestOutcome]:
        """Every test (with ``only``, that question's; with ``tests``, those of these names; with
        ``checks``, those of these checks; never the checks ``leave_out`` names: each check a question
        and a test function's name, reports.model.check_name) for one submission; each outcome in order."""
        labels = self.plugin.labels

        def check(item) -> tuple[str, str]:
            return (labels[item]["question"], check_name(labels[item]["name"]))

        items = [
            item
            for item in self.items
            if (only is None or labels[item]["question"] == only)
            and (tests is None or labels[item]["name"] in tests)
            and (checks is None or check(item) in checks)
            and check(item) not in leave_out
        ]
        run = self.plugin.run = _Run(student, reference, seed_material, values)
        directory = os.getcwd()
        try:
            with _quiet():
                for index, item in enumerate(items):
                    # The last test's teardown (nextitem None) tears down every fixture of the run.
                    # log=False: the outcome is taken from pytest_runtest_makereport; the reporting
                    # hooks would only feed pytest's terminal reporter, which prints nothing here
                    # and would keep every report (a long-running worker would grow).
                    nextitem = items[index + 1] if index + 1 < len(items) else None
                    run.nodeid = item.nodeid
                    runtestprotocol(item, log=False, nextitem=nextitem)
        except BaseException:
            # Stopped midway (Ctrl-C, SIGTERM): its fixtures were not torn down, so this suite is
            # not run again; the next grading collects a fresh one.
            _suites.pop(self.folder, None)
            self.close()
            raise
        finally:
            self.plugin.run = None
            os.chdir(directory)  # a hidden test that changed directory changed it for us
        return run.outcomes

    def current_test(self) -> tuple[str, str]:
        """The question and name of the test running now (``("", "")`` between runs)."""
        run = self.plugin.run
        item = self._items_by_nodeid.get(run.nodeid) if run else None
        if item is None:
            return ("", "")
        label = self.plugin.labels[item]
        return (label["question"], label["name"])

    def close(self) -> None:
        with _quiet(), contextlib.suppress(Exception):
            self.config.hook.pytest_sessionfinish(session=self.session, exitstatus=0)
        with _quiet(), contextlib.suppress(Exception):
            self.config._ensure_unconfigure()


@contextlib.contextmanager
def _quiet():
    """pytest's progress and whatever a hidden test prints are for no one."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


_suites: dict[Path, HiddenSuite] = {}


def hidden_suite(assignment: Assignment) -> HiddenSuite:
    """The assignment's suite, collected once per process (again when its files change). Raises
    AssignmentError, naming the file and the cause, when a test file cannot be collected."""
    folder = assignment.hidden_path.resolve()
    suite = _suites.get(folder)
    if suite is not None and suite.fingerprint == _fingerprint(folder):
        check_questions(assignment, suite)
        return suite
    if suite is not None:
        del _suites[folder]
        suite.close()
    suite = _suites[folder] = HiddenSuite(folder)
    check_questions(assignment, suite)
    return suite


def check_questions(assignment: Assignment, suite: HiddenSuite) -> None:
    """Every hidden test is marked with a question of the manifest, or AssignmentError names the first
    that is not (its file and line): otherwise every student would read "no test graded this
    question" for the question it meant, and its points would be lost to all. And every check a
    question's ``checks`` names (its visibility, or practice) is one of that question's tests."""
    ids = {question.id for question in assignment.questions}
    for item in suite.items:
        question = suite.plugin.labels[item]["question"]
        if question not in ids:
            file, line, _ = item.location
            what = "is marked with no question" if question == "unmarked" else f"is marked with question {question!r}"
            place = master_place(suite.folder / file, (line or 0) + 1)  # the master's cell, when assign wrote it
            raise AssignmentError(
                f"{place or f'{suite.folder / file}:{(line or 0) + 1}'}: {item.name} {what}, which {MANIFEST} lacks "
                f"(its questions: {', '.join(sorted(ids))})"
            )
    named = {(label["question"], check_name(label["name"])) for label in suite.plugin.labels.values()}
    for own in assignment.questions:
        for test in own.checks:
            if (own.id, test) not in named:
                theirs = sorted(name for owner, name in named if owner == own.id)
                raise AssignmentError(
                    f"{assignment.folder / MANIFEST}: questions.{own.id}.checks: {test} is no hidden test of "
                    f"question {own.id!r} (its tests: {', '.join(theirs) or 'none'})"
                )
