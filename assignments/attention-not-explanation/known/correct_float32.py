# A correct submission computed in float32 throughout, as code written for a GPU is: judged at
# float32's precision, it keeps full marks.
import numpy as np

f32 = np.float32


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=f32)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def self_attention(X, W_q, W_k, W_v):
    X, W_q, W_k, W_v = (np.asarray(M, dtype=f32) for M in (X, W_q, W_k, W_v))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    w = softmax(Q @ K.T / np.sqrt(f32(Q.shape[1])))
    return w @ V, w


def positional_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model), dtype=f32)
    for p in range(n_positions):
        for i in range(0, d_model, 2):
            pe[p, i] = np.sin(p / 10000 ** (i / d_model))
            if i + 1 < d_model:
                pe[p, i + 1] = np.cos(p / 10000 ** (i / d_model))
    return pe


def top_pairs(weights, tokens, k=3):
    order = sorted(((i, j) for i in range(len(weights)) for j in range(len(weights[0])) if i != j),
                   key=lambda ij: (-weights[ij[0]][ij[1]], ij[0], ij[1]))
    return [(tokens[i], tokens[j], float(weights[i][j])) for i, j in order[:k]]


def explanation_breaking_input(X, W_q, W_k, W_v):
    # Project random noise onto the orthogonal complement of the columns of W_q and W_k.
    X, W_q, W_k = (np.asarray(M, dtype=f32) for M in (X, W_q, W_k))
    A = np.hstack([W_q, W_k])
    P = np.eye(A.shape[0], dtype=f32) - A @ np.linalg.pinv(A)
    N = np.random.default_rng(1).normal(size=X.shape).astype(f32) @ P
    N *= 2 * np.linalg.norm(X) / np.linalg.norm(N)
    return X + N


def permutation_gap(X, W_q, W_k, W_v, perm, use_pe):
    X = np.asarray(X, dtype=f32)
    pe = positional_encoding(X.shape[0], X.shape[1]) if use_pe else np.zeros_like(X)
    a, _ = self_attention(X[perm] + pe, W_q, W_k, W_v)
    b, _ = self_attention(X + pe, W_q, W_k, W_v)
    return np.abs(a - b[perm]).max()  # a float32 number
