"""Benchmark: what recognising known mistakes adds to grading, side by side in one process.

    python benchmarks/known_mistakes.py [--rounds 5]

Grades every known submission of both shipped assignments (most of them wrong: the case where
recognition runs) with the in-process runner, so that the sandbox's start and its calls, the same
either way, do not drown the difference; each round grades them all with recognition and without it
(no answers recorded: ``grading.AnswerRecorder`` gives the hidden tests the student as it is, and
``grading.with_known_mistakes`` returns the results as they are), in turn. Prints the medians per round as Markdown for docs/benchmarks.md. Target: recognition adds
under 10% to grading. (`side_by_side.py` measures the same through the command and the sandbox.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import grading  # noqa: E402
from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import load_reference  # noqa: E402
from autograder.submissions import find_submissions  # noqa: E402
from tests.fake_runner import InProcessRunner  # noqa: E402

NAMES = ("sequences-and-attention", "attention-not-explanation")


def grade_all(cases, secret: str) -> float:
    # CPU time of this process (everything runs in it): on a machine shared with other work, the
    # wall clock measures the neighbours as much as the grading.
    start = time.process_time()
    for assignment, reference, submissions in cases:
        for submission in submissions:
            grading.grade_submission(assignment, submission, InProcessRunner(), reference, secret=secret)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cases = []
    for name in NAMES:
        assignment = load_assignment(ROOT / "assignments" / name)
        submissions = find_submissions([ROOT / "assignments" / name / "known"]).submissions
        cases.append((assignment, load_reference(assignment, "numpy"), submissions))
    count = sum(len(submissions) for _, _, submissions in cases)
    recognising, recording = grading.with_known_mistakes, grading.AnswerRecorder
    figures: dict[str, list[float]] = {"without": [], "with": []}
    grade_all(cases, "warm-up")  # the suites collected and the known mistakes loaded, once per process
    for round_ in range(args.rounds):
        for label in ("without", "with"):
            on = label == "with"
            grading.with_known_mistakes = recognising if on else (lambda _a, results, *_r: results)  # type: ignore[assignment]
            grading.AnswerRecorder = recording if on else (lambda student, _suite: student)  # type: ignore[assignment,misc]
            figures[label].append(grade_all(cases, f"round-{round_}"))
    grading.with_known_mistakes, grading.AnswerRecorder = recognising, recording  # type: ignore[misc]
    without, with_ = statistics.median(figures["without"]), statistics.median(figures["with"])
    print(f"{count} known submissions of both assignments, in-process, {args.rounds} rounds, side by side.\n")
    print("| grading | median CPU per round (s) | per submission (ms) |")
    print("| --- | --- | --- |")
    print(f"| without recognising mistakes | {without:.2f} | {1000 * without / count:.1f} |")
    print(f"| with | {with_:.2f} | {1000 * with_ / count:.1f} |")
    print(
        "\nEach round (without, with): " + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(*figures.values(), strict=True))
    )
    verdict = "met" if with_ < 1.1 * without else "missed"
    print(f"\nRecognition adds {100 * (with_ / without - 1):.1f}% (target under 10%: **{verdict}**).")


if __name__ == "__main__":
    main()
