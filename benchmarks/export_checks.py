"""Benchmark: export 1,000 generated check questions in every format.

    python benchmarks/export_checks.py [--checks 1000] [--runs 5]

Each format must take under 2 s (the median of the runs) for 1,000 checks, loading included. The
checks hold inline code, LaTeX math and GIFT's special characters, like the real ones. Prints a
Markdown table for docs/benchmarks.md; exits 1 if a format misses the target.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from course.exports import EXPORTERS, export_checks

TARGET_SECONDS = 2.0
SUFFIX = {"qti12": ".zip", "qti21": ".zip", "moodle": ".xml", "gift": ".gift", "olx": ".tar.gz", "json": ".json"}


def generated_lesson(count: int) -> dict:
    checks = []
    for n in range(count):
        checks.append(
            {
                "question": f"Check {n}: with \\(d_k = {n + 2}\\), what does `softmax(Q @ K.T / np.sqrt(d_k))` return for key {{{n}}}?",
                "options": [
                    {"text": f"Weights that sum to 1 along each row (case {n})", "correct": True},
                    {
                        "text": f"Scores \\(q \\cdot k_{{{n}}}\\) unchanged",
                        "correct": False,
                        "tempting": "The softmax turns scores into weights: a ~ b = c # d.",
                    },
                    {
                        "text": f"A matrix of shape `({n}, {n})` of zeros",
                        "correct": False,
                        "tempting": "Softmax outputs are **positive**: \\(e^x > 0\\).",
                    },
                    {
                        "text": f"The values `V[{n}]` themselves",
                        "correct": False,
                        "tempting": "Values are averaged *after* the weights are computed: see a::b.",
                    },
                ],
            }
        )
    return {
        "lesson": {
            "slug": "generated-checks",
            "title": "Generated checks",
            "keyIdea": "Attention is a weighted average: \\(\\mathrm{softmax}(QK^\\top/\\sqrt{d_k})V\\).",
        },
        "body": {"format": "markdown", "text": "## Generated\n\nChecks for the export benchmark."},
        "checks": checks,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "generated.lesson.json"
        source.write_text(json.dumps(generated_lesson(args.checks)), encoding="utf-8")
        export_checks([source], "json", Path(folder) / "warm.json")  # imports and caches warmed up
        rows, missed = [], []
        for fmt in EXPORTERS:
            times = []
            for run in range(args.runs):
                start = time.perf_counter()
                result = export_checks([source], fmt, Path(folder) / f"out-{run}{SUFFIX[fmt]}")
                times.append(time.perf_counter() - start)
            assert result.checks == args.checks
            median = statistics.median(times)
            rows.append((fmt, median, max(times)))
            if median >= TARGET_SECONDS:
                missed.append(fmt)
    print(
        f"Export of {args.checks} checks, median of {args.runs} runs, loading included; "
        f"{date.today()}, Python {platform.python_version()}, {platform.machine()}, {platform.processor() or 'cpu'}\n"
    )
    print("| format | median (s) | slowest (s) | target |")
    print("| --- | --- | --- | --- |")
    for fmt, median, slowest in rows:
        print(
            f"| {fmt} | {median:.3f} | {slowest:.3f} | {'met' if median < TARGET_SECONDS else 'MISSED'} (< {TARGET_SECONDS:g} s) |"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
