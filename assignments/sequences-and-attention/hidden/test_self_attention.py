"""self_attention(X, W_q, W_k, W_v) -> (output, weights)."""

import pytest

from autograder.testing import expect_close, expect_tuple

pytestmark = pytest.mark.question("self_attention")


def _check(student, reference, rng, n, d_model, d_k, d_v):
    X = rng.normal(size=(n, d_model))
    W_q, W_k, W_v = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    out, weights = expect_tuple(student.self_attention(X, W_q, W_k, W_v), "self_attention", 2)
    expected_out, expected_w = reference.self_attention(X, W_q, W_k, W_v)
    what = f"self_attention of {n} tokens (d_model={d_model}, d_k={d_k}, d_v={d_v})"
    expect_close(weights, expected_w, f"the weights of {what}")
    expect_close(out, expected_out, f"the output of {what}")


@pytest.mark.parametrize("n, d_model, d_k, d_v", [(5, 8, 4, 4), (6, 7, 3, 5)])
def test_matches_reference(student, reference, n, d_model, d_k, d_v, rng):
    """Self-attention of random tokens with random projections matches the reference."""
    _check(student, reference, rng, n, d_model, d_k, d_v)


def test_one_token_and_three(student, reference, rng):
    """A single token attends only to itself; three tokens do not.

    One token alone would let any answer whose weights sum to one pass.
    """
    _check(student, reference, rng, 1, 4, 2, 2)
    _check(student, reference, rng, 3, 5, 2, 3)


def test_large_magnitudes(student, reference, rng):
    """Tokens of large magnitude, with scores in the thousands, give the expected weights and output, all finite.

    Whole-number tokens and query and key projections (d_k = 4, a scale of exactly 2) make every score
    exact in float32 too, and values of ordinary size keep the output's rounding small: a correct
    float32 answer is judged on its attention, not on the rounding of scores in the thousands.
    """
    X = rng.integers(-20, 21, size=(8, 8)).astype(float)
    W_q, W_k = (rng.integers(-3, 4, size=(8, 4)).astype(float) for _ in range(2))
    W_v = rng.normal(size=(8, 4)) / 30  # values of order one from tokens of order ten
    out, weights = expect_tuple(student.self_attention(X, W_q, W_k, W_v), "self_attention", 2)
    expected_out, expected_w = reference.self_attention(X, W_q, W_k, W_v)
    expect_close(weights, expected_w, "the weights of self_attention of 8 tokens of large magnitude")
    expect_close(out, expected_out, "the output of self_attention of 8 tokens of large magnitude")
