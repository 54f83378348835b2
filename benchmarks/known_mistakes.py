"""Benchmark: what recognising known mistakes, and naming mutants, add to grading, side by side in one process.

    python benchmarks/known_mistakes.py [--rounds 5] [--submissions 200]

Grades the known submissions of both shipped assignments (most of them wrong: the case where
recognition runs), cycled to ``--submissions`` with a secret each (so each draws its own inputs),
with the in-process runner, so that the sandbox's start and its calls, the same either way, do not
drown the difference. Each round grades them all three ways in turn: without recognition (no
answers recorded: ``grading.AnswerRecorder`` gives the hidden tests the student as it is, and
``grading.with_known_mistakes`` returns the results as they are), with the known mistakes only
(``grading.named_mutant`` names nothing), and with both. Prints the medians per round as Markdown
for docs/explanation/performance.md. Targets: recognition adds under 10% to grading, and naming
mutants under 10% to grading without it. (`side_by_side.py` measures the same through the command
and the sandbox.)
"""

from __future__ import annotations

import argparse
import itertools
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


def grade_all(jobs, round_: int) -> float:
    # CPU time of this process (everything runs in it): on a machine shared with other work, the
    # wall clock measures the neighbours as much as the grading.
    start = time.process_time()
    for index, (assignment, reference, submission) in enumerate(jobs):
        secret = f"round-{round_}-submission-{index}"
        grading.grade_submission(assignment, submission, InProcessRunner(), reference, secret=secret)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--submissions", type=int, default=200)
    args = parser.parse_args()
    cases = []
    for name in NAMES:
        assignment = load_assignment(ROOT / "assignments" / name)
        reference = load_reference(assignment, "numpy")
        cases += [
            (assignment, reference, s) for s in find_submissions([ROOT / "assignments" / name / "known"]).submissions
        ]
    jobs = list(itertools.islice(itertools.cycle(cases), args.submissions))
    recognising, recording, naming = grading.with_known_mistakes, grading.AnswerRecorder, grading.named_mutant
    inside = [0.0]  # CPU time spent naming mutants, in the rounds with them: a figure the machine's load moves less

    def timed_naming(*args):
        start = time.process_time()
        try:
            return naming(*args)
        finally:
            inside[0] += time.process_time() - start

    labels = ("without", "known mistakes", "known mistakes and mutants")
    figures: dict[str, list[float]] = {label: [] for label in labels}
    grade_all(cases, -1)  # the suites collected, the known mistakes loaded, the mutants made: once per process
    for round_ in range(args.rounds):
        for label in labels:
            on = label != "without"
            grading.with_known_mistakes = recognising if on else (lambda _a, results, *_r: results)  # type: ignore[assignment]
            grading.AnswerRecorder = recording if on else (lambda student, _suite: student)  # type: ignore[assignment,misc]
            grading.named_mutant = timed_naming if label == labels[2] else (lambda *_: None)  # type: ignore[assignment]
            figures[label].append(grade_all(jobs, round_))
    grading.with_known_mistakes, grading.AnswerRecorder, grading.named_mutant = recognising, recording, naming  # type: ignore[misc]
    without, known, mutants = (statistics.median(figures[label]) for label in labels)
    count = len(jobs)
    print(
        f"{count} submissions (the known ones of both assignments, cycled), in-process, {args.rounds} rounds, side by side.\n"
    )
    print("| grading | median CPU per round (s) | per submission (ms) |")
    print("| --- | --- | --- |")
    for label, figure in zip(
        ("without recognising mistakes", "with known mistakes", "with known mistakes and mutants"),
        (without, known, mutants),
        strict=True,
    ):
        print(f"| {label} | {figure:.2f} | {1000 * figure / count:.1f} |")
    print(
        "\nEach round (without, known, with mutants): "
        + ", ".join("/".join(f"{x:.2f}" for x in row) for row in zip(*figures.values(), strict=True))
    )
    for what, base, with_ in (("Recognition", without, known), ("Naming mutants", known, mutants)):
        verdict = "met" if with_ < 1.1 * base else "missed"
        print(f"\n{what} adds {100 * (with_ / base - 1):.1f}% (target under 10%: **{verdict}**).")
    naming_each = inside[0] / args.rounds / count
    print(
        f"\nNaming mutants itself took {1000 * naming_each:.2f} ms of CPU per submission: "
        f"{100 * naming_each * count / known:.1f}% of grading with the known mistakes alone."
    )


if __name__ == "__main__":
    main()
