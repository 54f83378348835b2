# Detects the rerun of failing checks: its softmax overflows on large inputs (as
# assignments/.../known/unstable_softmax_used.py's) except while a profiler is set, which is how the
# grader watches what attention passes softmax. Watched, it looks innocent; it must not score more.
import sys

import numpy as np


def softmax(x, axis=-1):
    if sys.getprofile() is not None or sys.gettrace() is not None:  # watched: right
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    else:
        e = np.exp(x)  # no maximum subtracted: overflows on large inputs
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(trials):
        q = rng.standard_normal(d)
        k = rng.standard_normal((n, d))
        s = k @ q / (np.sqrt(d) if scaled else 1)
        values.append(softmax(s).max())
    return float(np.mean(values))


def self_attention(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    d_head = W_q.shape[1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):
        block = slice(h * d_head, (h + 1) * d_head)
        out, w = self_attention(X, W_q[:, block], W_k[:, block], W_v[:, block])
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(weights)


def positional_encoding(n_positions, d_model):
    angle = np.arange(n_positions)[:, None] / np.power(10000.0, 2 * (np.arange(d_model)[None, :] // 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
