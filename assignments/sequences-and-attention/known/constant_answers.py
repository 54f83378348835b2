# Degenerate answers of the right shape and type that ignore their inputs' values: each must score
# zero on its question, however many structural checks (shapes, rows summing to one, values in
# [-1, 1], determinism) it happens to satisfy.
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    return np.full(x.shape, 1.0 / x.shape[axis])


def scaled_dot_product_attention(Q, K, V, mask=None):
    weights = np.ones(Q.shape[:-1] + (K.shape[-2],))
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    return 0.5


def self_attention(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    n = X.shape[0]
    weights = np.full((n_heads, n, n), 1.0 / n)
    return np.zeros((n, W_o.shape[1])), weights


def positional_encoding(n_positions, d_model):
    return np.where(np.arange(d_model) % 2 == 0, 0.0, 1.0) * np.ones((n_positions, 1))
