"""multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads) -> (output, weights)."""

import numpy as np
import pytest

from autograder.testing import expect_close, expect_tuple

pytestmark = pytest.mark.question("multi_head")


def _weights(rng, d_model, d_out=None):
    return [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3)] + [
        rng.normal(size=(d_model, d_out or d_model)) / np.sqrt(d_model)
    ]


@pytest.mark.parametrize("n, d_model, n_heads", [(5, 8, 2), (4, 12, 3), (6, 8, 4)])
def test_matches_reference(student, reference, n, d_model, n_heads, rng):
    """Random tokens give the expected weights, of shape (n_heads, n, n), and output (heads on consecutive blocks of
    columns, their outputs concatenated, times W_o).
    """
    X = rng.normal(size=(n, d_model))
    W_q, W_k, W_v, W_o = _weights(rng, d_model)
    out, weights = expect_tuple(student.multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads), "multi_head_attention", 2)
    expected_out, expected_w = reference.multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads)
    what = f"{n_heads} heads over {n} tokens of width {d_model}"
    expect_close(weights, expected_w, f"the weights of {what}")
    expect_close(out, expected_out, f"the output of {what}")


def test_one_head_is_self_attention(student, reference, rng):
    """With one head, the output is self-attention's output times W_o."""
    X = rng.normal(size=(5, 6))
    W_q, W_k, W_v, W_o = _weights(rng, 6)
    out, weights = expect_tuple(student.multi_head_attention(X, W_q, W_k, W_v, W_o, 1), "multi_head_attention", 2)
    single_out, single_w = reference.self_attention(X, W_q, W_k, W_v)
    expect_close(weights, single_w[None], "the weights of one head")
    expect_close(out, single_out @ W_o, "the output of one head")


def test_output_projection_may_change_width(student, reference, rng):
    """A W_o of shape (d_model, d_out) gives an output of width d_out."""
    X = rng.normal(size=(4, 8))
    W_q, W_k, W_v, W_o = _weights(rng, 8, d_out=3)
    out, _ = expect_tuple(student.multi_head_attention(X, W_q, W_k, W_v, W_o, 2), "multi_head_attention", 2)
    expected_out, _ = reference.multi_head_attention(X, W_q, W_k, W_v, W_o, 2)
    expect_close(out, expected_out, "the output with a (8, 3) output projection")


def test_large_magnitudes(student, reference, rng):
    """Tokens of large magnitude, with each head's scores in the thousands, give the expected weights and output,
    all finite.

    Whole-number tokens and query and key projections make every score exact in float32 too, and values
    of ordinary size keep the output's rounding small: a correct float32 answer is judged on its
    attention, not on the rounding of scores in the thousands.
    """
    X = rng.integers(-20, 21, size=(8, 8)).astype(float)
    W_q, W_k = (rng.integers(-3, 4, size=(8, 8)).astype(float) for _ in range(2))
    _, _, W_v, W_o = _weights(rng, 8)
    W_v = W_v / 12  # values of order one from tokens of order ten
    out, weights = expect_tuple(student.multi_head_attention(X, W_q, W_k, W_v, W_o, 2), "multi_head_attention", 2)
    expected_out, expected_w = reference.multi_head_attention(X, W_q, W_k, W_v, W_o, 2)
    expect_close(weights, expected_w, "the weights of 2 heads over 8 tokens of large magnitude")
    expect_close(out, expected_out, "the output of 2 heads over 8 tokens of large magnitude")
