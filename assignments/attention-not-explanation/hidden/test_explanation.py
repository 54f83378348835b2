"""explanation_breaking_input(X, W_q, W_k, W_v): the same attention map, a different input and output.

The grader never uses the student's attention code here: the weights are computed by its own
reference, on hidden random matrices with d_model at least 2 d_k + 4: the subspace an answer may
move in has room (with one or two dimensions left, a correct answer's output changed by under 10%
for some draws, and its verdict depended on the secret).
"""

import numpy as np
import pytest

from autograder.testing import expect, expect_array, tolerance

pytestmark = pytest.mark.question("explanation")
MIN_CHANGE = 0.10


@pytest.mark.parametrize("n, d_model, d_k, d_v", [(5, 10, 3, 4), (6, 16, 4, 8), (3, 9, 2, 5), (7, 32, 8, 8)])
def test_weights_kept_input_and_output_changed(student, reference, rng, n, d_model, d_k, d_v):
    """The attention weights stay the same while the input and the output change by at least 10%."""
    X = rng.normal(size=(n, d_model))
    # W_q and W_k with orthonormal columns together (an orthogonal initialisation): the subspace an
    # answer must avoid is then well conditioned, and a float32 answer's own rounding moves the weights
    # far less than float32's tolerance whatever the draw. Gaussian projections with d_model just over
    # 2 d_k were sometimes so ill conditioned that a correct float32 answer failed under some secrets.
    W_q, W_k = np.hsplit(np.linalg.qr(rng.normal(size=(d_model, 2 * d_k)))[0], 2)
    W_v = rng.normal(size=(d_model, d_v))
    X2 = expect_array(student.explanation_breaking_input(X, W_q, W_k, W_v), "the new input", X.shape)
    out, weights = reference.self_attention(X, W_q, W_k, W_v)
    out2, weights2 = reference.self_attention(X2, W_q, W_k, W_v)
    drift = float(np.max(np.abs(weights2 - weights)))
    rtol, atol = tolerance(X2.dtype)  # a float32 input keeps the weights only to float32's precision
    expect(
        bool(np.allclose(weights2, weights, rtol=rtol, atol=atol)),
        f"The attention weights changed (by up to {drift:.2g}); they must stay the same.",
    )
    input_change = float(np.linalg.norm(X2 - X) / np.linalg.norm(X))
    expect(
        input_change >= MIN_CHANGE,
        f"The new input differs from the old by {input_change:.1%}; it must differ by at least {MIN_CHANGE:.0%}.",
    )
    output_change = float(np.linalg.norm(out2 - out) / np.linalg.norm(out))
    expect(
        output_change >= MIN_CHANGE,
        f"The attention output changed by {output_change:.1%}; it must change by at least {MIN_CHANGE:.0%}.",
    )
