"""Benchmark: how long the commands take to start, and one notebook graded start to finish.

    python benchmarks/startup.py [--runs 5]

Runs each command --runs times in a fresh process and prints the median wall-clock time as Markdown
for docs/benchmarks.md. Targets on the 2-core machine: `course --help`, `course --version`,
`autograder --help` within 0.3 s; `autograder release` under 3 s; one notebook graded with
`autograder grade` (the command's start included, torch installed) under 1.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ROOT / "assignments" / "sequences-and-attention" / "known"


def seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            argv = [part.replace("{out}", out) for part in command]
            start = time.perf_counter()
            subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    commands = {
        "course --help": [str(bin_dir / "course"), "--help"],
        "course --version": [str(bin_dir / "course"), "--version"],
        "autograder --help": [str(bin_dir / "autograder"), "--help"],
        "course validate lesson_data": [str(bin_dir / "course"), "validate", "lesson_data"],
        "autograder release sequences-and-attention": [
            str(bin_dir / "autograder"),
            "release",
            "sequences-and-attention",
            "--out",
            "{out}",
        ],
        "autograder grade, one notebook (--reference auto)": [
            str(bin_dir / "autograder"),
            "grade",
            "sequences-and-attention",
            str(KNOWN / "correct_fresh_notebook.ipynb"),
            "--out",
            "{out}",
        ],
    }
    print("| command | median (s) |")
    print("| --- | --- |")
    for name, command in commands.items():
        print(f"| `{name}` | {seconds(command, args.runs):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
