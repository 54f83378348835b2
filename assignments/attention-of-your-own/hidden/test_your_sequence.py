"""Hidden tests of question your_sequence, written by `autograder assign` from attention-of-your-own.master.ipynb (cell 14): edit the master notebook, not this file."""

import pytest

pytestmark = pytest.mark.question("your_sequence")


# from attention-of-your-own.master.ipynb, cell 14, line 2 (# HIDDEN TESTS: # assign writes the question's mark above...)
# assign writes the question's mark above these imports:
# ruff: noqa: E402
import numpy as np

from autograder.testing import expect_array, expect_close, expect_tuple


def _your_tokens(parameters):
    """The student's own tokens, from the values drawn for them (never from their notebook)."""
    rng = np.random.default_rng(parameters.data_seed)
    return rng.normal(size=(parameters.seq_len, parameters.d_model))


def test_your_tokens(student, parameters):
    """Your tokens are the (seq_len, d_model) array your data_seed draws."""
    expected = _your_tokens(parameters)
    got = expect_array(student.your_tokens(), "your_tokens()", expected.shape)
    expect_close(got, expected, "your tokens")


def test_your_attention(student, reference, parameters):
    """The self-attention of your tokens matches the reference's, computed on your own values."""
    X = _your_tokens(parameters)
    expected_out, expected_weights = reference.attention(X, X, X)
    out, weights = expect_tuple(student.your_attention(), "your_attention()", 2)
    expect_close(weights, expected_weights, "the weights of your sequence")
    expect_close(out, expected_out, "the output of your sequence")
