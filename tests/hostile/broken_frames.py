# Takes over the worker's channel and answers with frames the grader must not choke on: nesting a
# hundred thousand levels deep, a header claiming a gigabyte, bytes that are not UTF-8, half a frame
# and then silence, and a frame trickled a byte at a time forever.
import os
import struct
import sys
import time

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
original_write = worker.write_frame
HEADER = struct.Struct("!II")


def broken_write(fd, header, blobs=()):
    name = broken_write.current
    if name == "softmax":
        payload = b"[" * 100000 + b"]" * 100000
        os.write(fd, HEADER.pack(len(payload), 0) + payload)
    elif name == "scaled_dot_product_attention":
        os.write(fd, HEADER.pack(1 << 30, 0))
    elif name == "saturation":
        payload = b'{"ok": true, "id": 1, "value": "\xff\xfe"}'
        os.write(fd, HEADER.pack(len(payload), 0) + payload)
    elif name == "self_attention":
        os.write(fd, HEADER.pack(100, 0))
        time.sleep(3600)
    elif name == "multi_head_attention":
        os.write(fd, HEADER.pack(100, 0))
        while True:
            os.write(fd, b" ")
            time.sleep(0.2)
    else:
        original_write(fd, header, blobs)


broken_write.current = None
original_call = worker._call


def remember_call(namespace, header, blobs):
    broken_write.current = header.get("name")
    return original_call(namespace, header, blobs)


worker._call = remember_call
worker.write_frame = broken_write


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
