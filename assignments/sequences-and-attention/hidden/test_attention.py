"""scaled_dot_product_attention(Q, K, V, mask=None) -> (output, weights)."""

import numpy as np
import pytest

from autograder.testing import expect, expect_array, expect_close, expect_tuple

pytestmark = pytest.mark.question("attention")


def _check(student, reference, Q, K, V, mask=None, what="attention"):
    kwargs = {} if mask is None else {"mask": mask}
    result = expect_tuple(student.scaled_dot_product_attention(Q, K, V, **kwargs), "scaled_dot_product_attention", 2)
    expected_out, expected_w = reference.attention(Q, K, V, mask)
    expect_close(result[1], expected_w, f"the weights of {what}")
    expect_close(result[0], expected_out, f"the output of {what}")


def test_square(student, reference, rng):
    """Attention works with as many queries as keys (n = m) and values as wide as keys (d_k = d_v)."""
    Q, K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    _check(student, reference, Q, K, V, what="5 queries against 5 keys")


def test_more_keys_than_queries_and_other_value_width(student, reference, rng):
    """Attention works with more keys than queries (n != m) and values of another width (d_k != d_v)."""
    Q, K, V = rng.normal(size=(3, 6)), rng.normal(size=(7, 6)), rng.normal(size=(7, 2))
    _check(student, reference, Q, K, V, what="3 queries against 7 keys with d_k=6, d_v=2")


def test_scaling_uses_sqrt_of_key_width(student, reference, rng):
    """Queries and keys of width 64, where dividing the scores by sqrt(d_k) changes the weights most, give the expected weights."""
    Q, K, V = rng.normal(size=(4, 64)), rng.normal(size=(6, 64)), rng.normal(size=(6, 3))
    _check(student, reference, Q, K, V, what="queries and keys of width 64")


def test_batched(student, reference, rng):
    """Leading batch dimensions (2, 3) are carried through."""
    Q, K, V = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 6, 5)), rng.normal(size=(2, 3, 6, 7))
    _check(student, reference, Q, K, V, what="a (2, 3) batch")


def test_large_magnitudes(student, reference, rng):
    """Scores in the thousands (one query meets its own key with a score of 2,500) give the expected weights, all
    finite.

    Whole-number queries and keys of width 1 make every score exact in float32 too (a correct float32
    answer is judged on its softmax, not on the rounding of scores in the thousands) and leave the scale
    out of it: this test checks stability alone.
    """
    Q, K = rng.integers(-60, 61, size=(4, 1)).astype(float), rng.integers(-60, 61, size=(5, 1)).astype(float)
    Q[0, 0] = K[2, 0] = 50.0
    V = rng.normal(size=(5, 3))
    _check(student, reference, Q, K, V, what="whole-number queries and keys up to 60 (scores in the thousands)")


def test_causal_mask(student, reference, rng):
    """With a causal (n, m) mask, each query sees only the keys up to its own position."""
    Q, K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    mask = np.tril(np.ones((5, 5), dtype=bool))
    _check(student, reference, Q, K, V, mask, what="a causal mask")


def test_mask_broadcast_over_batch(student, reference, rng):
    """A (1, m) padding mask is broadcast over a batch of queries."""
    Q, K, V = rng.normal(size=(3, 4, 6)), rng.normal(size=(3, 5, 6)), rng.normal(size=(3, 5, 2))
    mask = np.array([[True, True, False, True, False]])
    _check(student, reference, Q, K, V, mask, what="a padding mask broadcast over a batch")


def test_masked_weights_are_zero(student, reference, rng):
    """Weights where the mask is False are exactly zero, and the others are the expected ones."""
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    mask = rng.random((4, 6)) < 0.5
    mask[:, 0] = True
    result = expect_tuple(student.scaled_dot_product_attention(Q, K, V, mask=mask), "scaled_dot_product_attention", 2)
    weights = expect_array(result[1], "the weights", (4, 6))
    expect(bool(np.all(weights[~mask] == 0)), "The weights of masked-out keys are not zero.")
    expected_out, expected_w = reference.attention(Q, K, V, mask)
    expect_close(weights, expected_w, "the weights under a random mask")
    expect_close(result[0], expected_out, "the output under a random mask")
