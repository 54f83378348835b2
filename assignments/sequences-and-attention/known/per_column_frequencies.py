# A positional encoding whose every column has its own frequency (exponent i / d_model for column i)
# instead of one per pair of columns (2 (i // 2) / d_model): the sine columns are right, every cosine
# column's frequency is wrong, column 1 first. The hint must point at the frequency, and at column 1
# alone, never say that column 0 is wrong.
import numpy as np


def softmax(x, axis=-1):
    z = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    z = z - z.max(-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(-1, keepdims=True)
    return np.moveaxis(p, -1, axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.einsum("...nd,...md->...nm", Q, K) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(np.broadcast_to(mask, scores.shape), scores, -np.inf)
    weights = softmax(scores)
    return np.einsum("...nm,...mv->...nv", weights, V), weights


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    draws = [(rng.standard_normal(d), rng.standard_normal((n, d))) for _ in range(trials)]
    scores = np.stack([keys @ query for query, keys in draws])
    if scaled:
        scores /= np.sqrt(d)
    return float(softmax(scores).max(axis=1).mean())


def self_attention(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    n, d_model = X.shape[0], W_q.shape[1]
    split = lambda M: (X @ M).reshape(n, n_heads, d_model // n_heads).transpose(1, 0, 2)
    out, weights = scaled_dot_product_attention(split(W_q), split(W_k), split(W_v))
    return out.transpose(1, 0, 2).reshape(n, d_model) @ W_o, weights


def positional_encoding(n_positions, d_model):
    angle = np.arange(n_positions)[:, None] / np.power(10000.0, np.arange(d_model)[None, :] / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
