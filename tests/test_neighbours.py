"""Resources are fair between neighbours: a submission that keeps every core busy (each of its
processes in a session of its own, to defeat the kernel's per-session fairness) cannot make an
honest, slow submission graded beside it time out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, needs_sandbox

pytestmark = needs_sandbox
NEIGHBOURS = Path(__file__).parent / "hostile" / "neighbours"


@pytest.mark.slow
def test_an_honest_submission_keeps_its_score_beside_a_cpu_hog(tmp_path):
    submissions, out, watched = tmp_path / "submissions", tmp_path / "out", tmp_path / "watched.json"
    shutil.copytree(NEIGHBOURS, submissions)
    # Each of slow_honest's calls needs 0.2 s of CPU: alone it passes a 0.4 s limit with room to
    # spare; beside the hog, and on a machine busy with other work too, its wall-clock time is many
    # times that. A call's limit is its worker's own time (not the time it waits for a CPU), so it
    # keeps its score however busy the machine, within the submission's own deadline.
    completed = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "run_and_watch.py"),
            str(watched),
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(submissions),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--timeout",
            "0.4",
            "--reference",
            "numpy",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    honest = json.loads((out / "slow_honest.json").read_text())
    assert honest["score"] == honest["max_score"] == 10, [q["feedback"] for q in honest["questions"]]
    assert json.loads(watched.read_text())["leftovers"] == []  # the hog's processes died with its sandbox
