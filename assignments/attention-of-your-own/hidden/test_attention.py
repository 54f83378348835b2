"""Hidden tests of question attention, written by `autograder assign` from attention-of-your-own.master.ipynb (cell 9): edit the master notebook, not this file."""

import pytest

pytestmark = pytest.mark.question("attention")


# from attention-of-your-own.master.ipynb, cell 9, line 2 (# HIDDEN TESTS: # assign writes the question's mark above...)
# assign writes the question's mark above these imports:
# ruff: noqa: E402
import pytest

from autograder.testing import expect_close, expect_tuple


def _check(student, reference, Q, K, V, what):
    out, weights = expect_tuple(student.attention(Q, K, V), "attention", 2)
    expected_out, expected_weights = reference.attention(Q, K, V)
    expect_close(weights, expected_weights, f"the weights of {what}")
    expect_close(out, expected_out, f"the output of {what}")


@pytest.mark.parametrize("n, m, d_k, d_v", [(3, 5, 4, 2), (6, 6, 16, 3)])
def test_matches_reference(student, reference, rng, n, m, d_k, d_v):
    """Attention of random queries, keys and values matches the reference."""
    Q, K, V = rng.normal(size=(n, d_k)), rng.normal(size=(m, d_k)), rng.normal(size=(m, d_v))
    _check(student, reference, Q, K, V, f"{n} queries over {m} keys of width {d_k}")


def test_at_your_own_sizes(student, reference, rng, parameters):
    """Self-attention of random tokens at your own sequence length and width matches the reference."""
    X = rng.normal(size=(parameters.seq_len, parameters.d_model))
    _check(student, reference, X, X, X, f"{parameters.seq_len} tokens of width {parameters.d_model}")


def test_large_scores(student, reference, rng):
    """Scores in the thousands give the expected weights and output, all finite (no overflow)."""
    Q = rng.integers(-30, 31, size=(4, 16)) * 10.0
    K = rng.integers(-30, 31, size=(6, 16)) * 10.0
    V = rng.normal(size=(6, 3))
    _check(student, reference, Q, K, V, "4 queries over 6 keys with scores in the thousands")
