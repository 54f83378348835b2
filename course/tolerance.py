"""The one tolerance rule: when a computed number matches the expected one.

A value matches when ``|value - expected| <= absolute + relative * |expected|``, element by element
(numpy's ``allclose``). The grader's hidden tests judge every result at float32's precision
(``tolerance``); a generated check question states its own relative and absolute tolerance (a
student types a softmax to three decimals, not to float32's seven digits) and is judged by the same
rule, ``within``. ``autograder.testing`` re-exports ``tolerance`` and ``stricter`` for hidden tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

FLOAT32_EPS = float(np.finfo(np.float32).eps)
_strictness = [1.0]


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """The one tolerance rule of every hidden test: a result is judged at float32's precision,
    whatever its dtype (a coarser one, float16, no looser; integers likewise). Relative tolerance
    1024 machine epsilons of float32 and an absolute floor of 128 (for values near zero): within a
    relative 1.2e-4 (absolute 1.5e-5), as the grader's own float32 torch reference agrees with its
    float64 numpy one.

    Not the returned dtype's own precision: a correct answer may compute in float32 and return
    float64 (float32 attention, then a float64 output projection), and the dtype it returns does not
    say the precision its arithmetic had; float32 is the least precise arithmetic a correct answer
    may use. Every known wrong answer is wrong by far more (``autograder verify`` shows it, and
    divides both tolerances by its margin, through ``stricter``, to show that correct answers pass
    with room to spare)."""
    eps = FLOAT32_EPS  # the same for every dtype: the parameter names what is judged, not how
    return 1024 * eps / _strictness[0], 128 * eps / _strictness[0]


@contextlib.contextmanager
def stricter(factor: float) -> Iterator[None]:
    """Every tolerance divided by ``factor`` while the block runs (grading only: never the default)."""
    previous = _strictness[0]
    _strictness[0] = factor
    try:
        yield
    finally:
        _strictness[0] = previous


def within(value: Any, expected: Any, relative: float, absolute: float, equal_nan: bool = False) -> bool:
    """Whether ``value`` matches ``expected`` (numbers or arrays of the same shape) by the rule:
    ``|value - expected| <= absolute + relative * |expected|`` everywhere."""
    return bool(np.allclose(value, expected, rtol=relative, atol=absolute, equal_nan=equal_nan))


def margin(expected: float, relative: float, absolute: float) -> float:
    """The rule as a margin about one expected number (``|value - expected| <= margin``), for the
    course platforms that state a numeric answer's tolerance as one absolute margin."""
    return absolute + relative * abs(expected)
