"""The torch reference for Module 10's assignments: outputs from
``torch.nn.functional.scaled_dot_product_attention``, weights from torch's softmax of the scaled
scores. It runs on CUDA when a GPU is there and on the CPU otherwise, in float64 unless asked for
another dtype. Grader-side only, like the numpy reference.

Functions that are statistics of numpy's random generator (``saturation``) or pure bookkeeping
(``top_pairs``) are the numpy reference's: the same definition has no torch form to compare.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # torch's own convention

NAME = "torch"
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
DTYPE = torch.float64
# One thread: the grader runs several grading processes side by side (--jobs).
torch.set_num_threads(1)


def _numpy_reference():
    spec = importlib.util.spec_from_file_location(
        "module10_numpy_reference_for_torch", Path(__file__).with_name("numpy_reference.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NUMPY = _numpy_reference()
saturation = _NUMPY.saturation
top_pairs = _NUMPY.top_pairs


def _tensor(array, dtype=None) -> torch.Tensor:
    return torch.as_tensor(np.asarray(array), device=DEVICE).to(dtype or DTYPE)


def _array(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to("cpu", torch.float64).numpy()


def softmax(x, axis=-1, dtype=None):
    return _array(torch.softmax(_tensor(x, dtype), dim=axis))


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None):
    allowed = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool), device=DEVICE)
    output = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    return output, torch.softmax(scores, dim=-1)


def attention(Q, K, V, mask=None, dtype=None):
    output, weights = _attention(_tensor(Q, dtype), _tensor(K, dtype), _tensor(V, dtype), mask)
    return _array(output), _array(weights)


# The notebook's name for it: the grader calls a function by that name to check what a student's
# question passed their own (autograder/causes.py).
scaled_dot_product_attention = attention


def self_attention(X, W_q, W_k, W_v, dtype=None):
    x = _tensor(X, dtype)
    output, weights = _attention(x @ _tensor(W_q, dtype), x @ _tensor(W_k, dtype), x @ _tensor(W_v, dtype))
    return _array(output), _array(weights)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, dtype=None):
    x = _tensor(X, dtype)
    n, d_model = x.shape[0], W_q.shape[1]
    d_head = d_model // n_heads

    def heads(weight):  # (n, d_model) -> (n_heads, n, d_head), head h from columns h*d_head:(h+1)*d_head
        return (x @ _tensor(weight, dtype)).reshape(n, n_heads, d_head).transpose(0, 1)

    output, weights = _attention(heads(W_q), heads(W_k), heads(W_v))
    concatenated = output.transpose(0, 1).reshape(n, n_heads * d_head)
    return _array(concatenated @ _tensor(W_o, dtype)), _array(weights)


def positional_encoding(n_positions, d_model, dtype=None):
    positions = torch.arange(n_positions, device=DEVICE, dtype=dtype or DTYPE)[:, None]
    even = torch.arange(0, d_model, 2, device=DEVICE, dtype=dtype or DTYPE)[None, :]
    angles = positions / torch.pow(torch.tensor(10000.0, device=DEVICE, dtype=dtype or DTYPE), even / d_model)
    encoding = torch.zeros((n_positions, d_model), device=DEVICE, dtype=dtype or DTYPE)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return _array(encoding)


def permutation_gap(X, W_q, W_k, W_v, perm, use_pe, dtype=None):
    X = np.asarray(X, dtype=np.float64)
    perm = np.asarray(perm)
    encoding = positional_encoding(*X.shape, dtype=dtype) if use_pe else 0.0
    permuted, _ = self_attention(X[perm] + encoding, W_q, W_k, W_v, dtype)
    original, _ = self_attention(X + encoding, W_q, W_k, W_v, dtype)
    return float(np.max(np.abs(permuted - original[perm])))
