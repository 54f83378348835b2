# A correct submission that computes everything in float32, as code written for a GPU does: it is
# judged at float32's precision and must keep full marks.
import numpy as np

f32 = np.float32


def softmax(x, axis=-1):
    z = np.asarray(x, dtype=f32)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=f32) for M in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(f32(K.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, f32(-np.inf))
    weights = softmax(scores)
    return weights @ V, weights


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    rng = np.random.default_rng(seed)
    largest = []
    for _ in range(trials):
        q = rng.standard_normal(d).astype(f32)
        k = rng.standard_normal((n, d)).astype(f32)
        s = k @ q / (np.sqrt(f32(d)) if scaled else f32(1))
        largest.append(softmax(s).max())
    return np.mean(np.array(largest, dtype=f32))


def self_attention(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=f32)
    return scaled_dot_product_attention(X @ W_q.astype(f32), X @ W_k.astype(f32), X @ W_v.astype(f32))


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    X, W_q, W_k, W_v, W_o = (np.asarray(M, dtype=f32) for M in (X, W_q, W_k, W_v, W_o))
    d_head = W_q.shape[1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):
        block = slice(h * d_head, (h + 1) * d_head)
        out, w = scaled_dot_product_attention(X @ W_q[:, block], X @ W_k[:, block], X @ W_v[:, block])
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(weights)


def positional_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=f32)[:, None]
    rates = f32(1) / np.power(f32(10000), (2 * (np.arange(d_model) // 2)).astype(f32) / f32(d_model))
    angles = positions * rates
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles)).astype(f32)
