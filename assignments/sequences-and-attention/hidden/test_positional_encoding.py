"""positional_encoding(n_positions, d_model): sines on even columns, cosines on odd ones."""

import numpy as np
import pytest

from autograder.testing import Mismatch, expect_array, expect_close

pytestmark = pytest.mark.question("positional_encoding")


def _check(student, reference, n_positions, d_model):
    what = f"positional_encoding({n_positions}, {d_model})"
    expected = reference.positional_encoding(n_positions, d_model)
    got = expect_array(student.positional_encoding(n_positions, d_model), what, expected.shape)
    try:
        expect_close(got, expected, what)
    except Mismatch as mismatch:
        # Where it goes wrong, as a hint: the first two columns (frequency 1) or the later ones.
        positions = np.arange(n_positions)
        first = np.allclose(got[:, 0], np.sin(positions)) and (d_model < 2 or np.allclose(got[:, 1], np.cos(positions)))
        hint = (
            "; columns 0 and 1 are right (sin(p), cos(p)): look at the frequencies of the later columns"
            if first
            else "; columns 0 and 1 (sin(p) and cos(p)) are wrong too"
        )
        raise Mismatch(f"{mismatch}{hint}") from None


@pytest.mark.parametrize("n_positions, d_model", [(10, 16), (50, 64)])
def test_matches_formula(student, reference, n_positions, d_model):
    """the sinusoidal encoding of the given size"""
    _check(student, reference, n_positions, d_model)


def test_odd_widths_and_a_single_position(student, reference):
    """an odd width ends on a sine column; one position is a single row"""
    _check(student, reference, 7, 5)
    _check(student, reference, 1, 6)
