# Positional encoding with the wrong frequencies (10000^(i/d) for every column i, instead of
# 10000^(2i/d) shared by each sine and cosine pair): its first two columns are right, its shape is
# right and its values lie in [-1, 1], but the encoding is wrong and earns nothing. The rest is correct.
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
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
    columns = np.arange(d_model)
    angles = np.arange(n_positions)[:, None] / np.power(10000.0, np.maximum(columns - 1, 0) / d_model)
    return np.where(columns % 2 == 0, np.sin(angles), np.cos(angles))
