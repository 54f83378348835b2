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
        raise Mismatch(f"{mismatch} {_hint(got, expected, n_positions, d_model)}") from None


def _hint(got, expected, n_positions, d_model):
    """Where it goes wrong, column by column: the first wrong column, and whether it is the wrong
    function (a cosine where a sine belongs) or the wrong frequency. Positions and sizes are in the
    check's own text already; no value is shown."""
    right = [bool(np.allclose(got[:, c], expected[:, c], rtol=1e-4, atol=1e-5)) for c in range(d_model)]
    column = right.index(False)
    positions = np.arange(n_positions)
    pair = column // 2
    frequency = 1.0 / 10000.0 ** (2 * pair / d_model)
    wave, other = (np.sin, np.cos) if column % 2 == 0 else (np.cos, np.sin)
    name, other_name = ("sine", "cosine") if column % 2 == 0 else ("cosine", "sine")
    before = "Column 0 is right" if column == 1 else f"Columns 0 to {column - 1} are right" if column else ""
    where = f"{before}; column {column} is the first wrong one" if before else "Column 0 is wrong"
    if np.allclose(got[:, column], other(positions * frequency), rtol=1e-4, atol=1e-5):
        return f"{where}: it holds a {other_name} where a {name} belongs (even columns are sines, odd ones cosines)."
    if n_positions > 1 and any(
        np.allclose(got[:, column], wave(positions * w), rtol=1e-4, atol=1e-5)
        for w in 1.0 / 10000.0 ** (np.arange(d_model) / d_model)
        if not np.isclose(w, frequency)
    ):
        return (
            f"{where}: it is a {name} of the wrong frequency. Columns 2i and 2i + 1 share one frequency, "
            f"1 / 10000^(2i / d_model), so column {column} should use the frequency of pair {pair}."
        )
    return f"{where}: it should be the {name} of the position times 1 / 10000^({2 * pair} / d_model)."


@pytest.mark.parametrize("n_positions, d_model", [(10, 16), (50, 64)])
def test_matches_formula(student, reference, n_positions, d_model):
    """The sinusoidal encoding of the given size matches the formula."""
    _check(student, reference, n_positions, d_model)


def test_odd_widths_and_a_single_position(student, reference):
    """An odd width ends on a sine column, and one position is a single row."""
    _check(student, reference, 7, 5)
    _check(student, reference, 1, 6)
