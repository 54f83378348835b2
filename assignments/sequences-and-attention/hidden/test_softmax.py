"""softmax(x, axis=-1): numerically stable, any shape, any axis."""

import numpy as np
import pytest

from autograder.testing import Mismatch, expect, expect_array, expect_close

pytestmark = pytest.mark.question("softmax")


def test_vector(student, reference, rng):
    """A 1-D vector of moderate values is normalised."""
    x = rng.normal(size=7)
    expect_close(student.softmax(x), reference.softmax(x), "softmax of a vector of 7 values")


@pytest.mark.parametrize("axis", [-1, 1, 0, -2])
def test_matrix_axes(student, reference, axis, rng):
    """A matrix is normalised along the given axis."""
    x = rng.normal(size=(4, 6)) * 3
    expect_close(
        student.softmax(x, axis=axis), reference.softmax(x, axis=axis), f"softmax of a 4x6 matrix along axis={axis}"
    )


def test_default_axis_is_last(student, reference, rng):
    """Without an axis, the last axis is normalised."""
    x = rng.normal(size=(3, 5))
    expect_close(student.softmax(x), reference.softmax(x, axis=-1), "softmax of a 3x5 matrix with the default axis")


def test_three_dimensions_middle_axis(student, reference, rng):
    """A 3-D array is normalised along its middle axis."""
    x = rng.normal(size=(2, 5, 3))
    expect_close(student.softmax(x, axis=1), reference.softmax(x, axis=1), "softmax of a 2x5x3 array along axis=1")


@pytest.mark.parametrize("scale", [1e3, 1e5])
def test_large_inputs_are_stable(student, reference, scale, rng):
    """Inputs of large magnitude (around 1e3 and 1e5) give the expected probabilities, all finite."""
    # One value of `scale` itself, past where exp overflows (709), whatever the draw; whole numbers,
    # exact in float32 too, so that a float32 answer is judged on its softmax, not on the rounding
    # of its inputs (at 1e5 that rounding alone moved near-tied probabilities past the tolerance).
    x = np.round(rng.normal(size=(3, 8)) * scale)
    x[0, 0] = scale
    expect_close(
        student.softmax(x, axis=-1), reference.softmax(x, axis=-1), f"softmax of inputs of magnitude around {scale:g}"
    )


def test_columns_of_spread_out_values(student, reference, rng):
    """Values spread over tens, normalised along axis 0, give each column its own distribution."""
    x = rng.normal(size=(6, 9)) * 10
    out = expect_close_or_explain(student.softmax(x, axis=0), reference.softmax(x, axis=0))
    expect(bool(np.all(out >= 0)), "softmax returned negative values.")


def expect_close_or_explain(out, expected):
    """The values, and when they are wrong, whether at least each column sums to one (a hint, not a
    point: a uniform answer sums to one too)."""
    array = expect_array(out, "softmax of a 6x9 matrix along axis=0", expected.shape)
    sums_ok = bool(np.allclose(array.sum(axis=0), 1.0, rtol=1e-3))
    hint = "" if sums_ok else " Its columns do not even sum to one."
    try:
        expect_close(array, expected, "softmax of a 6x9 matrix along axis=0")
    except Mismatch as mismatch:
        raise Mismatch(f"{mismatch}{hint}") from None
    return array
