# Forges what the worker reports and turns the grader's own work against it: the worker's helper that
# finds an exception's line is replaced, so that the line would encode a hidden input (softmax) or
# point at a comment (attention); a million tiny values come back (saturation); and the rerun of failing checks is handed arguments on which the reference's attention
# would need a 20,000 x 20,000 matrix, 3 GB (self_attention).
import sys

import numpy as np


def _forge(line):
    frame = sys._getframe(1)
    while frame is not None and "_where" not in frame.f_globals:
        frame = frame.f_back
    if frame is not None:
        frame.f_globals["_where"] = lambda tb: {"cell": 1, "line": line}


def softmax(x, axis=-1):
    _forge(100_000 + int(abs(np.asarray(x, dtype=float).flat[0]) * 1000))  # a hidden input, as a line number
    raise ValueError("no")


def scaled_dot_product_attention(Q, K, V, mask=None):
    _forge(1)  # the first line of this file: a comment
    raise ValueError("no")


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    return [0] * 999_000  # 2 MB of "0,": a million values to decode one by one


def self_attention(X, W_q, W_k, W_v):
    big = np.ones((20_000, 1))
    try:
        scaled_dot_product_attention(big, big, big)
    except ValueError:
        pass
    return np.zeros((len(X), W_v.shape[1])), np.zeros((len(X), len(X)))


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    return np.zeros((len(X), W_o.shape[1])), np.zeros((n_heads, len(X), len(X)))


def positional_encoding(n_positions, d_model):
    p = np.arange(n_positions)[:, None]
    angles = p / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe
