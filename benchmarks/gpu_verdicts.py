"""Check on a machine with a GPU: every known submission gets the same verdicts with the torch
reference on CUDA as with the numpy reference, and those verdicts are the ones in verdicts.toml.

    python benchmarks/gpu_verdicts.py [--secrets 3]

Grades trusted code only (the known submissions) with the in-process runner of the tests, so it needs
neither bubblewrap nor a sandbox: what it checks is the hidden suites and the references. Prints one
line per disagreement, then a summary; exits 1 on any disagreement. CI has no GPU; the torch
reference's CPU path is checked by tests/test_references.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import load_reference  # noqa: E402
from autograder.grading import grade_submission  # noqa: E402
from autograder.submissions import find_submissions  # noqa: E402
from autograder.verify import known_verdicts  # noqa: E402
from tests.fake_runner import InProcessRunner  # noqa: E402


def _references_agree() -> int:
    """The two references on the same float64 inputs: within 1e-10, as on the CPU."""
    import numpy as np

    assignment = load_assignment(ROOT / "assignments" / "sequences-and-attention")
    numpy_ref, torch_ref = load_reference(assignment, "numpy"), load_reference(assignment, "torch")
    rng = np.random.default_rng(0)
    n = rng.normal
    cases = {
        "softmax": (n(size=(4, 6)) * 50,),
        "attention": (n(size=(2, 3, 4, 8)), n(size=(2, 3, 6, 8)), n(size=(2, 3, 6, 5))),
        "self_attention": (n(size=(6, 8)) * 11, n(size=(8, 4)), n(size=(8, 4)), n(size=(8, 3))),
        "multi_head_attention": (n(size=(5, 12)), *(n(size=(12, 12)) for _ in range(4)), 3),
        "positional_encoding": (50, 64),
    }
    worst = 0.0
    for function, arguments in cases.items():
        ours, theirs = getattr(numpy_ref, function)(*arguments), getattr(torch_ref, function)(*arguments)
        ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
        worst = max(
            worst, *(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(ours, theirs, strict=True))
        )
    print(f"references: largest float64 difference between numpy and torch on {torch_ref.DEVICE}: {worst:.2g}")
    return 0 if worst <= 1e-10 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secrets", type=int, default=3)
    args = parser.parse_args()
    import torch

    print(f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}", flush=True)
    disagreements, graded, start = _references_agree(), 0, time.perf_counter()
    for name in ("sequences-and-attention", "attention-not-explanation"):
        assignment = load_assignment(ROOT / "assignments" / name)
        references = {kind: load_reference(assignment, kind) for kind in ("numpy", "torch")}
        print(f"{name}: torch reference on {references['torch'].DEVICE}", flush=True)
        expected = known_verdicts(assignment)
        for submission in find_submissions([assignment.folder / "known"]).submissions:
            want = expected[submission.path.name]
            for secret in range(args.secrets):
                for kind, reference in references.items():
                    report = grade_submission(
                        assignment, submission, InProcessRunner(), reference, secret=f"gpu-check-{secret}"
                    )
                    graded += 1
                    got = {q.id: q.status for q in report.questions}
                    if got != want:
                        disagreements += 1
                        print(f"DISAGREE {name}/{submission.path.name} {kind} secret {secret}: {got} != {want}")
    print(f"{graded} gradings, {disagreements} disagreements, {time.perf_counter() - start:.1f} s")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
