"""Helpers for hidden tests: checks that fail with a message safe to show the student.

A hidden test must never let pytest's assertion rewriting print its values (they are the hidden
inputs and references), so tests check with these helpers, which raise ``Mismatch`` with a message
written in plain words: what was expected, and what came back, described by shape, dtype and error
size rather than by values.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Mismatch(AssertionError):
    """A checked result differs from what was expected; the message is shown to the student."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Mismatch(message)


def describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} items"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    return f"a {type(value).__name__}"


def expect_array(value: Any, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` is a finite real numpy array (of ``shape`` when given); returns it."""
    expect(isinstance(value, np.ndarray), f"{what} should be a numpy array, but it is {describe(value)}")
    expect(value.dtype.kind in "biuf", f"{what} should hold real numbers, but its dtype is {value.dtype}")
    if shape is not None:
        expect(value.shape == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {value.shape}")
    expect(bool(np.all(np.isfinite(value))), f"{what} contains NaN or infinity")
    return value


def expect_close(value: Any, expected: np.ndarray, what: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """``value`` matches ``expected`` in shape and within tolerance; the message gives the size of
    the error, never the numbers."""
    array = expect_array(value, what, expected.shape)
    error = float(np.max(np.abs(array - expected))) if array.size else 0.0
    expect(
        bool(np.allclose(array, expected, rtol=rtol, atol=atol)),
        f"{what} differs from the expected values (largest difference {error:.3g})",
    )


def expect_tuple(value: Any, what: str, length: int) -> tuple:
    expect(
        isinstance(value, tuple | list) and len(value) == length,
        f"{what} should return a tuple of {length} items, but it returned {describe(value)}",
    )
    return tuple(value)
