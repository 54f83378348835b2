"""mean_of(values): the mean of a 1-D array. Hidden tests receive `student` (the submission's
functions, called in the sandbox), `reference` and `rng` (inputs drawn per submission)."""

import pytest

from autograder.testing import expect_close, expect_number

pytestmark = pytest.mark.question("mean")


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_matches_the_reference(student, reference, rng, size):
    """The mean of random values matches the reference."""
    values = rng.normal(size=size) * 10 + 3
    what = f"the mean of {size} random value{'s' if size != 1 else ''}"
    expect_close(expect_number(student.mean_of(values), what), reference.mean_of(values), what)
