"""Benchmark: this checkout against an earlier commit, side by side in one run.

    python benchmarks/side_by_side.py --before REV [--runs 5] [--batch-runs 2]

Machine speed here varies by up to three times from one hour to the next, so a speed change is only
measured against its predecessor in the same run: the earlier commit is checked out in a temporary
worktree, and the two are run in turn (before, after, before, after...) on the same inputs:
- one notebook (the known correct source notebook) through `autograder grade --force`, the
  command's start included, `--reference auto`;
- 200 submissions (copies of the known submissions of sequences-and-attention) with `--jobs 2`.
Prints the medians as Markdown for docs/benchmarks.md. Targets on the 2-core machine: one notebook
under 1.5 s; 200 submissions with --jobs 2 under 30 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ROOT / "assignments" / "sequences-and-attention" / "known"
NOTEBOOK = KNOWN / "correct_fresh_notebook.ipynb"


def grade(tree: Path, submissions: Path, out: Path, *options: str) -> float:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(submissions),
            "--out",
            str(out),
            *options,
        ],
        check=True,
        capture_output=True,
        cwd=tree,
        env=environment,
    )
    return time.perf_counter() - start


def copies(folder: Path, count: int) -> Path:
    known = sorted(p for p in KNOWN.iterdir() if p.suffix in {".py", ".ipynb"})
    folder.mkdir()
    for n in range(count):
        shutil.copy(known[n % len(known)], folder / f"student{n:03d}{known[n % len(known)].suffix}")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch-runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work_text:
        work = Path(work_text)
        before = work / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(before), args.before], check=True, cwd=ROOT)
        try:
            trees = {"before": before, "after": ROOT}
            batch = copies(work / "submissions", 200)
            single: dict[str, list[float]] = {name: [] for name in trees}
            batches: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    single[name].append(grade(tree, NOTEBOOK, work / f"one-{name}", "--force", "--reference", "auto"))
            for run in range(args.batch_runs):
                for name, tree in trees.items():
                    out = work / f"batch-{name}-{run}"
                    batches[name].append(grade(tree, batch, out, "--jobs", "2", "--reference", "numpy"))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], check=False, cwd=ROOT)
    print(f"Side by side with {args.before}, {args.runs} runs of one notebook, {args.batch_runs} of the batch.\n")
    print("| measure | before (s) | now (s) | target |")
    print("| --- | --- | --- | --- |")
    for label, figures, target in (
        ("one notebook, start to finish (median)", single, 1.5),
        ("200 submissions, `--jobs 2` (median)", batches, 30.0),
    ):
        now = statistics.median(figures["after"])
        verdict = "met" if now < target else "missed"
        print(
            f"| {label} | {statistics.median(figures['before']):.2f} | {now:.2f} | under {target:g} s: **{verdict}** |"
        )


if __name__ == "__main__":
    main()
