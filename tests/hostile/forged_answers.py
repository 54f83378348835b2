# Takes over the worker it runs in (a submission shares the worker's process) and answers the
# grader with forged values: an array named thousands of times, an array header that claims a huge
# shape, and exception names, dtype kinds and type names that carry the hidden inputs.
import sys

import numpy as np


class _Worker:
    """The worker's module, reached through the frames that run this cell (its __main__ is the
    submission's own): its names read and replaced as attributes."""

    def __init__(self):
        frame = sys._getframe()
        while "_call" not in frame.f_globals:
            frame = frame.f_back
        object.__setattr__(self, "namespace", frame.f_globals)

    def __getattr__(self, name):
        return self.namespace[name]

    def __setattr__(self, name, value):
        self.namespace[name] = value


worker = _Worker()
original_call = worker._call


def _secret(header, blobs):
    args = worker.decode_value(header.get("args", []), blobs)
    return "SECRET " + repr([a.tolist() if hasattr(a, "tolist") else a for a in args])[:3000]


def _array(index, shape):
    return {"$array": index, "dtype": "<f8", "shape": shape}


def forged(namespace, header, blobs):
    name = header["name"]
    if name == "softmax":  # 3,000 references to one 1 MiB array: 3 GB if each were decoded
        return {"ok": True, "value": [_array(0, [131072])] * 3000}, [bytes(8 * 131072)]
    if name == "scaled_dot_product_attention":  # a trillion float64s claimed, eight bytes sent
        return {"ok": True, "value": {"$tuple": [_array(0, [1000000000000]), _array(1, [2, 3])]}}, [
            bytes(8),
            bytes(8),
        ]
    if name == "saturation":
        secret = _secret(header, blobs)
        return {"ok": False, "error": {"type": secret, "own_class": True, "line": secret}}, []
    if name == "self_attention":
        return {"ok": True, "value": {"$rejected": "dtype", "kind": _secret(header, blobs)}}, []
    if name == "multi_head_attention":
        return {"ok": True, "value": {"$rejected": "object", "type": _secret(header, blobs)}}, []
    return original_call(namespace, header, blobs)


worker._call = forged


def positional_encoding(n_positions, d_model):
    positions = np.arange(n_positions)[:, None]
    rates = 1.0 / 10000 ** (2 * (np.arange(d_model) // 2) / d_model)
    angles = positions * rates
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def softmax(x, axis=-1):
    return x


def scaled_dot_product_attention(Q, K, V, mask=None):
    return Q, K


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    return 0.5


def self_attention(X, W_q, W_k, W_v):
    return X, X


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    return X
