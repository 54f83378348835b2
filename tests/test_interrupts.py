"""SIGTERM and SIGINT to `autograder grade` (what `timeout`, `kill` and Ctrl-C send) end every
process the command started, sandboxes and pool workers included, before it exits; what was
graded before stays recorded."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, needs_sandbox
from .gradebook_view import recorded

pytestmark = needs_sandbox
HONEST = Path(__file__).parent / "hostile" / "honest.py"
HANGS = "import time\ntime.sleep(600)  # never finishes loading\n"


def descendants(pid: int) -> dict[int, bytes]:
    """Every process below ``pid`` (our own child), with its start time, from /proc."""
    parents: dict[int, int] = {}
    started: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            started[int(entry.name)] = fields[19]
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found[child] = started[child]
                frontier.append(child)
    return found


def still_running(pid: int, started: bytes) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == started and fields[0] != b"Z"


@pytest.mark.slow
@pytest.mark.parametrize("signum, jobs", [(signal.SIGTERM, 2), (signal.SIGINT, 2), (signal.SIGTERM, 1)])
def test_a_signal_ends_every_process_and_keeps_what_was_graded(tmp_path, signum, jobs):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    (submissions / "a_honest.py").write_text(HONEST.read_text())
    (submissions / "b_hangs.py").write_text(HANGS)
    grader = subprocess.Popen(
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
            str(jobs),
            "--reference",
            "numpy",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            processes = descendants(grader.pid)
            sandboxes = [pid for pid in processes if b"bwrap" in _cmdline(pid)]
            if (out / "a_honest.json").exists() and sandboxes:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the hanging submission's sandbox never started")
        time.sleep(0.5)
        processes = descendants(grader.pid)
        grader.send_signal(signum)
        _, stderr = grader.communicate(timeout=30)
        assert grader.returncode == 128 + signum
        assert b"interrupted; everything graded so far is in the gradebook" in stderr
        assert b"Traceback" not in stderr
        left = [pid for pid, started in processes.items() if still_running(pid, started)]
        assert left == [], [_cmdline(pid) for pid in left]
        assert recorded(out / "gradebook.db") == {"a_honest": [(10, 6)]}
        assert "a_honest" in (out / "grades.csv").read_text()
    finally:
        if grader.poll() is None:
            grader.kill()
            grader.wait()


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
