# An honest, correct submission whose every graded call takes a fifth of a second of CPU
# (students write slow code): graded next to a CPU hog, it must keep its full score.
import functools
import time

import numpy as np

_depth = [0]


def slow(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if _depth[0] == 0:
            end = time.process_time() + 0.2
            while time.process_time() < end:
                pass
        _depth[0] += 1
        try:
            return function(*args, **kwargs)
        finally:
            _depth[0] -= 1

    return wrapper


@slow
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@slow
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


@slow
def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(trials):
        q = rng.standard_normal(d)
        k = rng.standard_normal((n, d))
        s = k @ q / (np.sqrt(d) if scaled else 1)
        values.append(softmax(s).max())
    return float(np.mean(values))


@slow
def self_attention(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


@slow
def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    d_head = W_q.shape[1] // n_heads
    outs, maps = [], []
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        o, w = scaled_dot_product_attention(X @ W_q[:, c], X @ W_k[:, c], X @ W_v[:, c])
        outs.append(o)
        maps.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(maps)


@slow
def positional_encoding(n_positions, d_model):
    p = np.arange(n_positions)[:, None]
    angles = p / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe
