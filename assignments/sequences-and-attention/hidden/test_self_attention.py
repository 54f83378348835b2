"""self_attention(X, W_q, W_k, W_v) -> (output, weights)."""

import pytest

from autograder.testing import expect_close, expect_tuple

pytestmark = pytest.mark.question("self_attention")


@pytest.mark.parametrize("n, d_model, d_k, d_v", [(5, 8, 4, 4), (6, 7, 3, 5), (1, 4, 2, 2)])
def test_matches_reference(student, reference, n, d_model, d_k, d_v, rng):
    """self-attention of random tokens with random projections"""
    X = rng.normal(size=(n, d_model))
    W_q, W_k, W_v = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    out, weights = expect_tuple(student.self_attention(X, W_q, W_k, W_v), "self_attention", 2)
    expected_out, expected_w = reference.self_attention(X, W_q, W_k, W_v)
    what = f"self_attention of {n} tokens (d_model={d_model}, d_k={d_k}, d_v={d_v})"
    expect_close(weights, expected_w, f"the weights of {what}")
    expect_close(out, expected_out, f"the output of {what}")
