"""permutation_gap(X, W_q, W_k, W_v, perm, use_pe): max |out(X[perm]) - out(X)[perm]|.

Every test also checks a case whose expected gap is far from zero, so a constant answer (0.0 is
right whenever no encoding is used) passes none of them.
"""

import numpy as np
import pytest

from autograder.testing import expect_close, expect_number

pytestmark = pytest.mark.question("permutation")


def _gap(student, *args) -> np.ndarray:
    return expect_number(student.permutation_gap(*args), "permutation_gap")


def _shuffled(rng, n: int) -> np.ndarray:
    """A random order of n words that is never the order they came in (a draw of the identity
    would make any check of the gap pass or fail by luck)."""
    perm = rng.permutation(n)
    return np.roll(perm, 1) if np.array_equal(perm, np.arange(n)) else perm


def _expect_encoded_gap(student, reference, X, W, perm):
    gap = _gap(student, X, *W, perm, True)
    expected = reference.permutation_gap(X, *W, perm, True)
    expect_close(
        gap,
        expected,
        "with a positional encoding added after permuting, the gap (is the encoding added after "
        "permuting, so that a position belongs to its slot?)",
    )


@pytest.mark.parametrize("n, d_model", [(6, 8), (5, 7)])
def test_without_encoding_order_is_invisible(student, reference, rng, n, d_model):
    """Without a positional encoding the gap is (numerically) zero; with one it is not."""
    X = rng.normal(size=(n, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3)]
    perm = _shuffled(rng, n)
    expect_close(_gap(student, X, *W, perm, False), 0.0, "without a positional encoding, the gap")
    _expect_encoded_gap(student, reference, X, W, perm)


@pytest.mark.parametrize("n, d_model", [(6, 8), (5, 7), (8, 16)])
def test_with_encoding_matches_reference(student, reference, rng, n, d_model):
    """With a positional encoding added after permuting, the gap is the expected one."""
    X = rng.normal(size=(n, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3)]
    _expect_encoded_gap(student, reference, X, W, _shuffled(rng, n))


def test_identity_permutation_has_no_gap(student, reference, rng):
    """Leaving the order as it is changes nothing, with an encoding or without; another order does change it."""
    X = rng.normal(size=(5, 6))
    W = [rng.normal(size=(6, 6)) / np.sqrt(6) for _ in range(3)]
    for use_pe in (False, True):
        expect_close(
            _gap(student, X, *W, np.arange(5), use_pe), 0.0, f"the gap for the identity permutation (use_pe={use_pe})"
        )
    _expect_encoded_gap(student, reference, X, W, _shuffled(rng, 5))
