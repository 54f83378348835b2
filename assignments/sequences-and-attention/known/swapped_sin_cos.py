# positional encoding with cosines on even columns and sines on odd ones.
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def scaled_dot_product_attention(Q, K, V, mask=None):
    return _attention(Q, K, V, mask)


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(trials):
        q = rng.standard_normal(d)
        k = rng.standard_normal((n, d))
        s = k @ q / (np.sqrt(d) if scaled else 1.0)
        w = np.exp(s - s.max())
        total += (w / w.sum()).max()
    return total / trials


def self_attention(X, W_q, W_k, W_v):
    return _attention(X @ W_q, X @ W_k, X @ W_v)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    d_head = W_q.shape[1] // n_heads
    outs, maps = [], []
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        o, w = _attention(X @ W_q[:, c], X @ W_k[:, c], X @ W_v[:, c])
        outs.append(o)
        maps.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(maps)


def positional_encoding(n_positions, d_model):
    p = np.arange(n_positions)[:, None]
    i = np.arange(0, d_model, 2)[None, :]
    angles = p / 10000 ** (i / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.cos(angles)
    pe[:, 1::2] = np.sin(angles[:, : d_model // 2])
    return pe
