"""permutation_gap(X, W_q, W_k, W_v, perm, use_pe): max |out(X[perm]) - out(X)[perm]|."""

import numpy as np
import pytest

from autograder.testing import expect

pytestmark = pytest.mark.question("permutation")


def _gap(student, *args) -> float:
    value = student.permutation_gap(*args)
    expect(
        isinstance(value, float | int | np.ndarray) and np.ndim(value) == 0,
        f"permutation_gap should return one number, but it returned a {type(value).__name__}",
    )
    return float(value)


def _shuffled(rng, n: int) -> np.ndarray:
    """A random order of n words that is never the order they came in (a draw of the identity
    would make any check of the gap pass or fail by luck)."""
    perm = rng.permutation(n)
    return np.roll(perm, 1) if np.array_equal(perm, np.arange(n)) else perm


@pytest.mark.parametrize("n, d_model", [(6, 8), (5, 7)])
def test_without_encoding_order_is_invisible(student, rng, n, d_model):
    """without a positional encoding the gap is (numerically) zero"""
    X = rng.normal(size=(n, d_model))
    W = [rng.normal(size=(d_model, d_model)) for _ in range(3)]
    gap = _gap(student, X, *W, _shuffled(rng, n), False)
    expect(gap < 1e-9, f"without a positional encoding the gap should be zero, but it is {gap:.3g}")


@pytest.mark.parametrize("n, d_model", [(6, 8), (5, 7), (8, 16)])
def test_with_encoding_matches_reference(student, reference, rng, n, d_model):
    """with a positional encoding added after permuting, the gap is the expected one"""
    X = rng.normal(size=(n, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3)]
    perm = _shuffled(rng, n)
    gap = _gap(student, X, *W, perm, True)
    expected = reference.permutation_gap(X, *W, perm, True)
    expect(
        abs(gap - expected) <= 1e-6 * max(1.0, expected),
        f"with a positional encoding the gap differs from the expected one (by {abs(gap - expected):.3g}); "
        "is the encoding added after permuting, so that a position belongs to its slot?",
    )
    expect(gap > 1e-6, "with a positional encoding, permuting the words should change the output")


def test_identity_permutation_has_no_gap(student, rng):
    """leaving the order as it is changes nothing, encoding or not"""
    X = rng.normal(size=(5, 6))
    W = [rng.normal(size=(6, 6)) for _ in range(3)]
    for use_pe in (False, True):
        gap = _gap(student, X, *W, np.arange(5), use_pe)
        expect(gap < 1e-9, f"the identity permutation should give a zero gap (use_pe={use_pe}), not {gap:.3g}")
