"""The numpy and torch references agree, and grading gives the same verdicts with either.

Documented tolerances (README, "References"): in float64 the two agree to 1e-10 (absolute); torch in
float32 agrees with numpy's float64 to a relative 1e-4 and an absolute 1e-5.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from autograder.assignment import load_assignment
from autograder.batch import GradeOptions, grade_batch, load_reference, resolve_reference
from autograder.submissions import find_submissions
from autograder.verify import known_verdicts

from .conftest import ASSIGNMENTS, needs_sandbox

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(
    not HAS_TORCH and os.environ.get("CI") != "true", reason="torch is not installed (pip install -e '.[gpu]')"
)
pytestmark = needs_torch
FLOAT64_ATOL = 1e-10
FLOAT32_RTOL, FLOAT32_ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def references():
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    return load_reference(assignment, "numpy"), load_reference(assignment, "torch")


def _cases(rng):
    n = rng.normal
    return {
        "softmax": [((n(size=(4, 6)) * 50,), {"axis": 0}), ((n(size=(2, 3, 5)) * 1e3,), {"axis": -1})],
        "attention": [
            ((n(size=(5, 4)), n(size=(7, 4)), n(size=(7, 3))), {}),
            ((n(size=(2, 3, 4, 8)), n(size=(2, 3, 6, 8)), n(size=(2, 3, 6, 5))), {}),
            ((n(size=(5, 4)), n(size=(5, 4)), n(size=(5, 2))), {"mask": np.tril(np.ones((5, 5), dtype=bool))}),
            (
                (n(size=(3, 4, 6)) * 30, n(size=(3, 5, 6)) * 30, n(size=(3, 5, 2))),
                {"mask": np.array([[True, False, True, True, False]])},
            ),
        ],
        "self_attention": [((n(size=(6, 8)), n(size=(8, 4)), n(size=(8, 4)), n(size=(8, 3))), {})],
        "multi_head_attention": [((n(size=(5, 12)), *(n(size=(12, 12)) for _ in range(4)), 3), {})],
        "positional_encoding": [((50, 64), {}), ((7, 5), {})],
        "permutation_gap": [((n(size=(6, 8)), *(n(size=(8, 8)) / 3 for _ in range(3)), rng.permutation(6), True), {})],
    }


def _flat(value):
    if isinstance(value, tuple):
        return [np.asarray(v, dtype=np.float64) for v in value]
    return [np.asarray(value, dtype=np.float64)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_references_agree_within_documented_tolerances(references, dtype):
    import torch

    numpy_reference, torch_reference = references
    rng = np.random.default_rng(2026)
    checked = 0
    for name, cases in _cases(rng).items():
        for args, kwargs in cases:
            expected = _flat(getattr(numpy_reference, name)(*args, **kwargs))
            got = _flat(getattr(torch_reference, name)(*args, **kwargs, dtype=getattr(torch, dtype)))
            for a, b in zip(got, expected, strict=True):
                if dtype == "float64":
                    assert np.max(np.abs(a - b)) <= FLOAT64_ATOL, name
                else:
                    assert np.allclose(a, b, rtol=FLOAT32_RTOL, atol=FLOAT32_ATOL), name
                checked += 1
    assert checked == 17


def test_auto_reference_is_numpy_without_a_gpu_and_torch_with_one():
    import torch

    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    assert resolve_reference("auto", assignment) == ("torch" if torch.cuda.is_available() else "numpy")
    assert resolve_reference("torch", assignment) == "torch"


@needs_sandbox
@pytest.mark.parametrize("name", ["sequences-and-attention", "attention-not-explanation"])
def test_known_submissions_get_the_same_verdicts_with_the_torch_reference(tmp_path, name):
    assignment = load_assignment(ASSIGNMENTS / name)
    verdicts = known_verdicts(assignment)
    result = grade_batch(
        assignment,
        find_submissions([ASSIGNMENTS / name / "known"]).submissions,
        tmp_path,
        GradeOptions(reference="torch", jobs=2),
    )
    assert not result.failed
    assert all(report.reference == "torch" for report in result.reports)
    got = {os.path.basename(report.submission): {q.id: q.status for q in report.questions} for report in result.reports}
    assert got == verdicts
