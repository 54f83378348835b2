"""saturation(d, n=16, trials=200, scaled=True, seed=0): the mean largest softmax weight."""

import numpy as np
import pytest

from autograder.testing import expect

pytestmark = pytest.mark.question("saturation")
TOLERANCE = 0.06  # four standard errors of a 200-trial mean


def _value(student, *args, **kwargs) -> float:
    value = student.saturation(*args, **kwargs)
    expect(
        isinstance(value, float | int | np.ndarray) and np.ndim(value) == 0,
        f"saturation should return one number, but it returned {type(value).__name__}",
    )
    return float(value)


def test_scaled_matches_the_reference(student, reference):
    """with the scale, the mean largest weight matches the expected value in d = 8, 64, 512"""
    for d in (8, 64, 512):
        got = _value(student, d, n=16, trials=200, scaled=True, seed=3)
        expected = reference.saturation(d, n=16, trials=2000, scaled=True, seed=11)
        expect(
            abs(got - expected) < TOLERANCE,
            f"saturation({d}, scaled=True) is {got:.3f}, too far from the expected mean largest weight",
        )


def test_unscaled_saturates(student, reference):
    """without the scale, the largest weight creeps towards one as d grows"""
    for d in (4, 256):
        got = _value(student, d, n=16, trials=200, scaled=False, seed=5)
        expected = reference.saturation(d, n=16, trials=2000, scaled=False, seed=13)
        expect(
            abs(got - expected) < TOLERANCE,
            f"saturation({d}, scaled=False) is {got:.3f}, too far from the expected mean largest weight",
        )


def test_number_of_keys(student, reference):
    """n sets the number of keys (2 keys: the largest weight is at least one half)"""
    got = _value(student, 16, n=2, trials=200, scaled=True, seed=1)
    expected = reference.saturation(16, n=2, trials=2000, scaled=True, seed=17)
    expect(
        got >= 0.5 and abs(got - expected) < TOLERANCE,
        f"saturation(16, n=2) is {got:.3f}, too far from the expected mean largest weight",
    )


def test_same_seed_same_value(student):
    """the same seed gives the same value; the result is a probability"""
    first = _value(student, 32, n=8, trials=50, scaled=True, seed=42)
    second = _value(student, 32, n=8, trials=50, scaled=True, seed=42)
    expect(first == second, "two calls with the same seed gave different values")
    expect(1 / 8 <= first <= 1, f"saturation(32, n=8) is {first:.3f}, outside [1/8, 1]")
