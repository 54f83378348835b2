"""The float64 numpy reference for Module 10's assignments. Grader-side only: never shipped to
students, never loaded into the sandbox."""

from __future__ import annotations

import numpy as np

from autograder.remembered import remembered

NAME = "numpy"


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=axis, keepdims=True)


def attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


# The notebook's name for it: the grader calls a function by that name to check what a student's
# question passed their own (autograder/causes.py).
scaled_dot_product_attention = attention


@remembered
def saturation(d, n=16, trials=200, scaled=True, seed=0):
    # Pure in its arguments: computed once, then remembered in memory and on the grader's disk (about
    # a second for the suite's calls, otherwise paid again by every grading process).
    # The draws are made one trial at a time, in the order the assignment's loop makes them, and the
    # softmaxes are computed all at once.
    rng = np.random.default_rng(seed)
    queries, keys = np.empty((trials, d)), np.empty((trials, n, d))
    for trial in range(trials):
        queries[trial] = rng.standard_normal(d)
        keys[trial] = rng.standard_normal((n, d))
    scores = np.einsum("tnd,td->tn", keys, queries)
    if scaled:
        scores = scores / np.sqrt(d)
    return float(softmax(scores, axis=-1).max(axis=-1).mean())


def self_attention(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=np.float64)
    return attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    X = np.asarray(X, dtype=np.float64)
    d_model = W_q.shape[1]
    d_head = d_model // n_heads
    outputs, weights = [], []
    for h in range(n_heads):
        columns = slice(h * d_head, (h + 1) * d_head)
        out, w = attention(X @ W_q[:, columns], X @ W_k[:, columns], X @ W_v[:, columns])
        outputs.append(out)
        weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_o, np.stack(weights)


def positional_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    pairs = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angles = positions / np.power(10000.0, pairs / d_model)
    encoding = np.zeros((n_positions, d_model))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding


def top_pairs(weights, tokens, k=3):
    weights = np.asarray(weights, dtype=np.float64)
    candidates = [(-weights[i, j], i, j) for i in range(weights.shape[0]) for j in range(weights.shape[1]) if i != j]
    candidates.sort()
    return [(tokens[i], tokens[j], float(-w)) for w, i, j in candidates[:k]]


def permutation_gap(X, W_q, W_k, W_v, perm, use_pe):
    X = np.asarray(X, dtype=np.float64)
    perm = np.asarray(perm)
    encoding = positional_encoding(*X.shape) if use_pe else 0.0
    permuted, _ = self_attention(X[perm] + encoding, W_q, W_k, W_v)
    original, _ = self_attention(X + encoding, W_q, W_k, W_v)
    return float(np.max(np.abs(permuted - original[perm])))
