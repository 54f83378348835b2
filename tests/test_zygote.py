"""The zygote: each submission gets a sandbox of its own forked from one pre-imported Python, and
nothing one submission leaves there is visible to the next one graded by the same process.

Every attack of tests/hostile/ runs through the zygote too (it is the default); this file checks
what only a shared parent could get wrong. Both submissions below are the same program: each looks
for what another could have left, then leaves all of it, so whichever is graded second would see
the first's leftovers."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from autograder.sandbox.forking import SANDBOX_PROCESSES
from autograder.sandbox.limits import Limits
from autograder.sandbox.runners import BubblewrapRunner
from autograder.sandbox.session import Cell, StudentSession

from .conftest import ROOT, needs_sandbox

pytestmark = needs_sandbox

LOOKS_THEN_LEAVES = r"""
import builtins, ctypes, os, random, sys, types
print("preloaded:", "matplotlib.pyplot" in sys.modules)  # imported by the zygote, not by this submission
import numpy as np

found = []
if os.path.exists("/tmp/left-behind") or os.path.exists("/dev/shm/left-behind"):
    found.append("a file")
if hasattr(builtins, "left_behind"):
    found.append("a global")
if "left_behind" in sys.modules:
    found.append("a module")
if np.exp(0.0) != 1.0:
    found.append("a monkeypatched numpy")
if os.environ.get("LEFT_BEHIND"):
    found.append("an environment variable")
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"left-behind-daemon" in handle.read():
                    found.append("a process")
        except OSError:
            pass
print("found:", found)
print("python draws:", random.random())
print("numpy draws:", np.random.random())
print("processes seen:", sorted(int(pid) for pid in os.listdir("/proc") if pid.isdigit())[:3])

if platform_machine == "x86_64":  # clone(CLONE_NEWUSER | SIGCHLD): a namespace of its own, refused
    made = ctypes.CDLL(None, use_errno=True).syscall(56, 0x10000000 | 17, 0, 0, 0, 0)
    if made == 0:
        os._exit(0)
    print("clone with a new user namespace:", "refused" if made < 0 else "LEAK")

for place in ("/tmp/left-behind", "/dev/shm/left-behind"):
    with open(place, "w") as handle:
        handle.write("left")
builtins.left_behind = True
sys.modules["left_behind"] = types.ModuleType("left_behind")
np.exp = lambda x: x
os.environ["LEFT_BEHIND"] = "1"
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "left-behind-daemon"])


def softmax(x, axis=-1):
    e = np.e ** (x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("zygote")
    submissions, out = root / "submissions", root / "out"
    submissions.mkdir()
    source = LOOKS_THEN_LEAVES.replace("platform_machine", repr(platform.machine()))
    for name in ("first", "second"):
        (submissions / f"{name}.py").write_text(source)
    environment = {key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_ZYGOTE"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(submissions),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--reference",
            "numpy",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=environment,
    )
    reports = {name: json.loads((out / f"{name}.json").read_text()) for name in ("first", "second")}
    return completed, reports


def _printed(report: dict, label: str) -> str:
    return next(line for line in report["output"].splitlines() if line.startswith(label)).split(":", 1)[1].strip()


def test_both_submissions_are_forked_from_the_preloaded_zygote(graded):
    completed, reports = graded
    assert "zygote" not in completed.stderr  # no fallback was announced
    for report in reports.values():
        assert _printed(report, "preloaded:") == "True"
        assert _printed(report, "processes seen:") == "[1, 2]"  # its own PID namespace: init, itself


def test_nothing_one_submission_leaves_is_seen_by_the_next(graded):
    _, reports = graded
    for report in reports.values():
        assert _printed(report, "found:") == "[]"
        assert next(q for q in report["questions"] if q["id"] == "softmax")["status"] == "passed"


def test_every_submission_draws_its_own_random_numbers(graded):
    _, reports = graded
    for generator in ("python draws:", "numpy draws:"):
        assert _printed(reports["first"], generator) != _printed(reports["second"], generator)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the clone system call's number is x86_64's")
def test_a_submission_cannot_make_namespaces_with_clone(graded):
    _, reports = graded
    for report in reports.values():
        assert _printed(report, "clone with a new user namespace:") == "refused"


def test_the_doctor_says_how_submissions_are_sandboxed():
    environment = {**os.environ, "GRADEWRIGHT_ZYGOTE": "off"}
    doctor = subprocess.run(
        [sys.executable, "-m", "autograder", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=environment,
    )
    assert "each submission: a sandbox started for each submission (no zygote: GRADEWRIGHT_ZYGOTE=off)" in doctor.stdout
    default = subprocess.run(
        [sys.executable, "-m", "autograder", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_ZYGOTE"},
    )
    assert "each submission: a pre-imported zygote forks each submission a sandbox of its own" in default.stdout


def test_a_zygote_launched_ahead_is_the_one_that_serves():
    """`prestart` launches the zygote without waiting for its imports (the command line does it
    before opening the gradebook); the first submission waits for it, and no second one is made."""
    runner = BubblewrapRunner()
    try:
        runner.prestart(Limits())
        launched = runner.zygote
        assert launched is not None and launched.pending  # returned before the zygote was ready
        runner.prestart(Limits())
        assert runner.zygote is launched
        assert runner.mode() == "a pre-imported zygote forks each submission a sandbox of its own"
        assert runner.zygote is launched and not launched.pending and launched.alive()
    finally:
        runner.close()
    assert not launched.alive()


def test_the_first_sandbox_is_asked_for_with_the_zygote_and_a_spare_only_serves_its_own_limits():
    """The zygote launched ahead is asked at once for a first sandbox with the batch's limits, and
    after each submission's, for the next one's. A submission with other limits does not get the
    spare (made for the others): it is ended, and a sandbox forked with the submission's own."""
    runner = BubblewrapRunner()
    strict = Limits(processes=3)
    try:
        runner.prestart(Limits())
        launched = runner.zygote
        assert launched is not None and launched.spare is not None  # asked before the zygote was ready
        first_spare = launched.spare
        with StudentSession(runner, [Cell(index=1, source=SHOWS_ITS_PROCESS_LIMIT)], Limits()) as session:
            assert session.load().output.strip() == str(Limits().processes + SANDBOX_PROCESSES)
        assert launched.spare is not None and launched.spare is not first_spare  # the next one, asked for
        with StudentSession(runner, [Cell(index=1, source=SHOWS_ITS_PROCESS_LIMIT)], strict) as session:
            assert session.load().output.strip() == str(strict.processes + SANDBOX_PROCESSES)
    finally:
        runner.close()
    assert not launched.alive()


def test_a_zygote_that_cannot_be_launched_ahead_leaves_a_sandbox_per_submission():
    runner = BubblewrapRunner()
    runner.bwrap = "/nonexistent/bwrap"
    runner.prestart(Limits())
    assert runner.zygote is None
    assert runner.mode().startswith("a sandbox started for each submission (no zygote: it could not start: bubblewrap")


@pytest.mark.parametrize(("jobs", "submissions", "launched"), [(1, 30, True), (2, 1, True), (2, 30, False)])
def test_a_batch_starts_a_zygote_in_its_own_process_only_when_it_grades_there(monkeypatch, jobs, submissions, launched):
    """A batch that a pool grades leaves its parent without a zygote: each pool process has its own,
    and the parent's would only take a core from them while it starts, and memory after."""
    from autograder import batch
    from autograder.assignment import load_assignment

    runner = BubblewrapRunner()
    monkeypatch.setattr(batch, "_runner", lambda unsafe, packages: runner)
    assignment = load_assignment(ROOT / "assignments" / "sequences-and-attention")
    try:
        batch.prepare_sandbox(assignment, batch.GradeOptions(jobs=jobs), submissions)
        assert (runner.zygote is not None) is launched
    finally:
        runner.close()


SHOWS_ITS_PROCESS_LIMIT = "import resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0])\n"

COUNTS_ITS_PROCESSES = r"""
import os, time
children = 0
try:
    while children < 100:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError:
    pass
print("children:", children)


def softmax(x, axis=-1):
    import numpy as np

    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def test_the_next_submissions_sandbox_forked_ahead_takes_nothing_from_this_ones_limits(tmp_path):
    """While a submission runs, the zygote forks the next one's sandbox (a spare, made ready ahead);
    its processes are in a user namespace of their own, so the kernel does not count them against
    the submission's process limit: every submission can start as many processes as the first."""
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    for name in ("first", "second", "third"):
        (submissions / f"{name}.py").write_text(COUNTS_ITS_PROCESSES)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(submissions),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--reference",
            "numpy",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    counts = [
        int(_printed(json.loads((out / f"{name}.json").read_text()), "children:"))
        for name in ("first", "second", "third")
    ]
    # Limits().processes is 8: the worker and at least seven more, and no more than a few beyond.
    assert counts[0] == counts[1] == counts[2]
    assert 7 <= counts[0] <= 10
