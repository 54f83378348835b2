"""positional_encoding(n_positions, d_model): sines on even columns, cosines on odd ones."""

import numpy as np
import pytest

from autograder.testing import expect_close

pytestmark = pytest.mark.question("positional_encoding")


@pytest.mark.parametrize("n_positions, d_model", [(10, 16), (50, 64), (7, 5), (1, 2)])
def test_matches_formula(student, reference, n_positions, d_model):
    """the sinusoidal encoding of the given size (odd widths included)"""
    expected = reference.positional_encoding(n_positions, d_model)
    got = student.positional_encoding(n_positions, d_model)
    expect_close(got, expected, f"positional_encoding({n_positions}, {d_model})", rtol=1e-6, atol=1e-9)


def test_first_columns_are_sin_then_cos(student):
    """column 0 is sin(p) and column 1 is cos(p)"""
    got = np.asarray(student.positional_encoding(6, 4))
    positions = np.arange(6)
    expect_close(got[:, 0] if got.ndim == 2 else got, np.sin(positions), "column 0 (it should be sin(p))")
    expect_close(got[:, 1], np.cos(positions), "column 1 (it should be cos(p))")
