# self-attention and positional encoding that return nested lists, not arrays.
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
    out, w = _attention(X @ W_q, X @ W_k, X @ W_v)
    return out.tolist(), w.tolist()


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
    pe = np.zeros((n_positions, d_model))
    for p in range(n_positions):
        for i in range(0, d_model, 2):
            pe[p, i] = np.sin(p / 10000 ** (i / d_model))
            if i + 1 < d_model:
                pe[p, i + 1] = np.cos(p / 10000 ** (i / d_model))
    return pe.tolist()
