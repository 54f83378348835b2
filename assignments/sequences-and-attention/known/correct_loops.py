# A correct submission written with explicit loops where a student might use them.
import math

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    maxima = []
    for _ in range(trials):
        q = rng.standard_normal(d)
        keys = rng.standard_normal((n, d))
        scores = np.array([keys[i] @ q for i in range(n)])
        if scaled:
            scores = scores / math.sqrt(d)
        maxima.append(softmax(scores).max())
    return float(np.mean(maxima))


def self_attention(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    d_model = W_q.shape[1]
    d_head = d_model // n_heads
    heads, maps = [], []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, w = scaled_dot_product_attention(X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols])
        heads.append(out)
        maps.append(w)
    return np.concatenate(heads, axis=1) @ W_o, np.stack(maps)


def positional_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    for p in range(n_positions):
        for i in range(0, d_model, 2):
            angle = p / 10000 ** (i / d_model)
            pe[p, i] = math.sin(angle)
            if i + 1 < d_model:
                pe[p, i + 1] = math.cos(angle)
    return pe
