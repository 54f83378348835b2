"""Benchmark: what the trust boundary's checks cost per submission, and the grader's peak memory.

    python benchmarks/trust_boundary.py [--runs 3] [--baseline REV]

Grades the known submissions of sequences-and-attention in one process (imports warm), `--runs`
times each, with this checkout and, side by side in the same run, with the checkout at `--baseline`
(a git revision, default 4ed4c79: the grader before the trust-boundary work), each in a fresh
process. Then grades each hostile submission of tests/hostile/ alone in a fresh process and reports
the grading process's peak resident memory: the bound the README documents.
Prints Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"

MEASURE = r"""
import json, resource, sys, time
from pathlib import Path
from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.grading import grade_submission
from autograder.sandbox.runners import make_runner
from autograder.submissions import find_submissions

assignment = load_assignment(Path(sys.argv[1]))
runner, reference = make_runner(), load_reference(assignment, "numpy")
found = find_submissions([Path(p) for p in sys.argv[3:]])
submissions = getattr(found, "submissions", found)
grade_submission(assignment, submissions[0], runner, reference)  # warm
times = []
for _ in range(int(sys.argv[2])):
    for submission in submissions:
        start = time.perf_counter()
        grade_submission(assignment, submission, runner, reference)
        times.append(time.perf_counter() - start)
print(json.dumps({"times": times, "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def measure(checkout: Path, runs: int, paths: list[Path]) -> dict:
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            str(checkout / "assignments" / "sequences-and-attention"),
            str(runs),
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        cwd=checkout,
        env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return json.loads(completed.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", default="4ed4c79")
    args = parser.parse_args()

    known = ROOT / "assignments" / "sequences-and-attention" / "known"
    with tempfile.TemporaryDirectory() as work:
        baseline = Path(work) / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(baseline), args.baseline],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            old = measure(baseline, args.runs, [baseline / "assignments" / "sequences-and-attention" / "known"])
            new = measure(ROOT, args.runs, [known])
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT, capture_output=True)
        hostile = {}
        for path in sorted(HOSTILE.glob("*.py")):
            folder = Path(work) / path.stem
            folder.mkdir()
            shutil.copy(path, folder / path.name)
            hostile[path.stem] = measure(ROOT, 1, [folder])["peak_kib"] / 1024

    old_median, new_median = statistics.median(old["times"]), statistics.median(new["times"])
    print("| grader | median per submission (s) | peak RSS of the grading process (MiB) |")
    print("| --- | --- | --- |")
    print(f"| before (`{args.baseline}`) | {old_median:.3f} | {old['peak_kib'] / 1024:.0f} |")
    print(f"| now | {new_median:.3f} | {new['peak_kib'] / 1024:.0f} |")
    print(
        f"\nCost of the checks: {new_median - old_median:+.3f} s per submission "
        f"({100 * (new_median / old_median - 1):+.0f} %).\n"
    )
    print("| hostile submission, graded alone | peak RSS of the grading process (MiB) |")
    print("| --- | --- |")
    for name, mib in hostile.items():
        print(f"| {name} | {mib:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
