"""Helpers for hidden tests: checks that fail with a message safe to show the student.

A hidden test must never let pytest's assertion rewriting print its values (they are the hidden
inputs and references), so tests check with these helpers, which raise ``Mismatch`` with a message
written in plain words: what was expected, and what came back, described by shape, dtype and error
size rather than by values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np


class Mismatch(AssertionError):
    """A checked result differs from what was expected; the message is shown to the student."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Mismatch(message)


# Sizes a message may show. A student's value can be shaped to carry a hidden input (an array of
# 1,234,567 rows), so larger sizes are described, never written out; strings are never quoted.
SMALL = 16


def describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.ndim <= 4 and all(size <= SMALL for size in value.shape):
            return f"an array of shape {value.shape} and dtype {value.dtype}"
        return f"a {value.ndim}-dimensional array of dtype {value.dtype}"
    if isinstance(value, tuple | list):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return f"a {kind} of {len(value)} items" if len(value) <= SMALL else f"a {kind} of more than {SMALL} items"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def shape_problem(actual: tuple[int, ...], expected: tuple[int, ...]) -> str | None:
    """How ``actual`` differs from ``expected``: the number of dimensions, else the first axis that
    disagrees, with its sizes only when both are small."""
    if len(actual) != len(expected):
        return f"should have {len(expected)} dimension{'s' if len(expected) != 1 else ''}, but it has {len(actual)}"
    for axis, (got, want) in enumerate(zip(actual, expected, strict=True)):
        if got != want:
            sizes = f" ({got} instead of {want})" if max(got, want) <= SMALL else ""
            return f"has the wrong size along axis {axis}{sizes}"
    return None


def expect_array(value: Any, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` is a finite real numpy array (of ``shape`` when given); returns it."""
    expect(isinstance(value, np.ndarray), f"{what} should be a numpy array, but it is {describe(value)}")
    expect(value.dtype.kind in "biuf", f"{what} should hold real numbers, but its dtype is {value.dtype}")
    if shape is not None:
        problem = shape_problem(value.shape, tuple(shape))
        expect(problem is None, f"{what} {problem}")
    expect(bool(np.all(np.isfinite(value))), f"{what} contains NaN or infinity")
    return value


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """The one tolerance rule of every hidden test: a result is judged at the precision of the dtype
    it comes in. Relative tolerance 1024 machine epsilons and an absolute floor of 128 (for values
    near zero), never tighter than 1e-6 and 1e-8: float64 results within a relative 1e-6 (absolute
    1e-8), float32 ones within 1.2e-4 (1.5e-5), as the grader's own float32 torch reference agrees
    with its float64 numpy one. Integers are judged as float64; dtypes coarser than float32 at
    float32's precision, no looser. (``autograder verify`` divides both by its margin, through
    ``stricter``, to show that correct answers pass with room to spare.)"""
    kind = np.dtype(dtype)
    eps = float(np.finfo(kind).eps) if kind.kind == "f" else float(np.finfo(np.float64).eps)
    eps = min(eps, float(np.finfo(np.float32).eps))
    return max(1e-6, 1024 * eps) / _strictness[0], max(1e-8, 128 * eps) / _strictness[0]


_strictness = [1.0]


@contextlib.contextmanager
def stricter(factor: float) -> Iterator[None]:
    """Every tolerance divided by ``factor`` while the block runs (grading only: never the default)."""
    previous = _strictness[0]
    _strictness[0] = factor
    try:
        yield
    finally:
        _strictness[0] = previous


def expect_close(value: Any, expected: Any, what: str) -> None:
    """``value`` matches ``expected`` in shape, within the tolerance of ``value``'s own dtype; the
    message gives the size of the error, never the numbers."""
    expected = np.asarray(expected, dtype=np.float64)
    array = expect_array(value, what, expected.shape)
    rtol, atol = tolerance(array.dtype)
    error = float(np.max(np.abs(array - expected))) if array.size else 0.0
    expect(
        bool(np.allclose(array, expected, rtol=rtol, atol=atol)),
        f"{what} differs from the expected values (largest difference {error:.3g})",
    )


def expect_number(value: Any, what: str) -> np.ndarray:
    """``value`` is one real number (a Python number or a 0-d numeric array); returns it as a 0-d
    array that keeps its dtype, for ``expect_close``."""
    expect(
        isinstance(value, float | int | np.ndarray) and not isinstance(value, bool) and np.ndim(value) == 0,
        f"{what} should be one number, but it is {describe(value)}",
    )
    return expect_array(np.asarray(value), what)


def expect_tuple(value: Any, what: str, length: int) -> tuple:
    expect(
        isinstance(value, tuple | list) and len(value) == length,
        f"{what} should return a tuple of {length} items, but it returned {describe(value)}",
    )
    return tuple(value)
