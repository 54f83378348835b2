"""The reference: the solution of attention-of-your-own.master.ipynb, written by `autograder assign`."""

NAME = "solution"  # what reports say they were graded against


import numpy as np


# The instructor's values: each student's own notebook (autograder fetch, or the
# course site's download) has theirs here.
seq_len = 8
d_model = 16
data_seed = 2026


def attention(Q, K, V):
    """Scaled dot-product attention: returns (output, weights)."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def your_tokens():
    """Your own sequence: seq_len tokens of width d_model, drawn with your data_seed."""
    return np.random.default_rng(data_seed).normal(size=(seq_len, d_model))


def your_attention():
    """The self-attention of your tokens: (output, weights)."""
    tokens = your_tokens()
    return attention(tokens, tokens, tokens)
