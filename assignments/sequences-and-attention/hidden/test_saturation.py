"""saturation(d, n=16, trials=200, scaled=True, seed=0): the mean largest softmax weight.

Every test compares values against the reference in at least two settings whose expected values
differ by far more than the tolerance, so that no constant answer passes any test.
"""

import pytest

from autograder.testing import expect, expect_number

pytestmark = pytest.mark.question("saturation")
# The student's mean is over TRIALS draws. The largest weight varies most without the scale at d = 4
# (a standard deviation of 0.21 per trial), where the tolerance is 4.4 standard errors of a 100-trial
# mean beyond the reference's own error (0.008 there): a correct answer, whatever order it draws in,
# fails one in several hundred thousand times. Every check's settings still differ by more than twice
# the tolerance. (100 trials, not 200, and ten calls, not twelve: the same verdicts for less than half
# of the student's time, which every grading pays.)
TRIALS = 100
TOLERANCE = 0.1


def _value(student, *args, **kwargs) -> float:
    return float(expect_number(student.saturation(*args, **kwargs), "saturation"))


def _near(student, reference, d, n, scaled, seed, what):
    got = _value(student, d, n=n, trials=TRIALS, scaled=scaled, seed=seed)
    expected = reference.saturation(d, n=n, trials=2000, scaled=scaled, seed=seed + 100)
    expect(abs(got - expected) < TOLERANCE, f"{what} is {got:.3f}, too far from the expected mean largest weight.")
    return got


def test_scaled_matches_the_reference(student, reference):
    """With the scale, the mean largest weight depends on n, not on d (d = 8 and 128; n = 16 and 4)."""
    # d = 128 is wide enough: unscaled, its mean largest weight is 0.89 against 0.24 scaled (wider
    # widths only cost every grading more of the student's time: TRIALS draws of n x d normals).
    for d, n in ((8, 16), (128, 16), (64, 4)):
        _near(student, reference, d, n, True, 3, f"saturation({d}, n={n}, scaled=True)")


def test_unscaled_saturates(student, reference):
    """Without the scale, the largest weight creeps towards one as d grows."""
    for d in (4, 128):
        _near(student, reference, d, 16, False, 5, f"saturation({d}, scaled=False)")


def test_number_of_keys(student, reference):
    """The number of keys n matters: with 2 keys the largest weight is at least one half, with 8 it is much less."""
    for n in (2, 8):
        got = _near(student, reference, 16, n, True, 1, f"saturation(16, n={n})")
        expect(got >= 1 / n, f"saturation(16, n={n}) is {got:.3f}, below 1/{n}")


def test_same_seed_same_value(student, reference):
    """The same seed gives the same value, and the right one."""
    # Two settings, so that no constant answer passes; one of them called twice.
    first = _near(student, reference, 32, 8, True, 42, "saturation(32, n=8)")
    _near(student, reference, 32, 2, True, 42, "saturation(32, n=2)")
    second = _value(student, 32, n=8, trials=TRIALS, scaled=True, seed=42)
    expect(first == second, "Two calls with the same seed gave different values.")
