"""top_pairs(weights, tokens, k=3): the k largest off-diagonal weights, largest first, ties by (i, j)."""

import numpy as np
import pytest

from autograder.testing import expect, expect_close

pytestmark = pytest.mark.question("top_pairs")
WORDS = ["the", "cat", "sat", "on", "the", "mat", "and", "slept"]


def _check(student, reference, weights, tokens, k, what):
    got = student.top_pairs(weights, tokens, k=k)
    expected = reference.top_pairs(weights, tokens, k=k)
    expect(isinstance(got, list | tuple), f"top_pairs should return a list, but it returned a {type(got).__name__}.")
    expect(len(got) == len(expected), f"top_pairs for {what} should return {len(expected)} pairs, not {len(got)}.")
    for rank, (pair, want) in enumerate(zip(got, expected, strict=True), start=1):
        expect(
            isinstance(pair, list | tuple) and len(pair) == 3,
            f"Pair {rank} for {what} should be a (query_token, key_token, weight) tuple.",
        )
        expect(tuple(pair[:2]) == tuple(want[:2]), f"Pair {rank} for {what} links the wrong tokens.")
        expect(
            isinstance(pair[2], float | int | np.ndarray) and np.ndim(pair[2]) == 0,
            f"The weight of pair {rank} for {what} should be a number.",
        )
        expect_close(np.asarray(float(pair[2])), np.asarray(want[2]), f"the weight of pair {rank} for {what}")


def _random_map(reference, rng, n, spread):
    """A random attention map whose words never attend to themselves (a zero diagonal): every test
    but the diagonal's own then checks one thing, whatever the draw, and a submission that counts
    the diagonal fails that test alone, not some random maps under some secrets."""
    return reference.softmax(np.where(np.eye(n, dtype=bool), -np.inf, rng.normal(size=(n, n)) * spread), axis=-1)


@pytest.mark.parametrize("n, k", [(6, 3), (8, 1), (5, 5)])
def test_random_maps(student, reference, rng, n, k):
    """On a random attention map, the k strongest links between different positions are found."""
    weights = _random_map(reference, rng, n, spread=2)
    _check(student, reference, weights, WORDS[:n], k, f"a random {n}x{n} map with k={k}")


def test_diagonal_is_never_a_pair(student, reference, rng):
    """A word attending to itself is never a pair, however strong the weight."""
    weights = reference.softmax(rng.normal(size=(6, 6)) + np.eye(6) * 10, axis=-1)
    _check(student, reference, weights, WORDS[:6], 3, "a map whose strongest weights are on the diagonal")


def test_ties_are_broken_by_position(student, reference):
    """Equal weights come in (query, key) position order."""
    weights = np.full((5, 5), 0.2)
    np.fill_diagonal(weights, 0.1)  # below the ties, so that this test checks ties alone
    weights[3, 1] = weights[1, 4] = weights[2, 0] = 0.3
    _check(student, reference, weights, ["a", "b", "c", "d", "e"], 4, "a map with ties")


def test_repeated_tokens_are_reported_by_their_words(student, reference, rng):
    """In a sentence that repeats a word, pairs name the words at the winning positions."""
    weights = _random_map(reference, rng, 8, spread=3)
    _check(student, reference, weights, WORDS, 4, "a sentence with 'the' twice")
