"""The reference the example's hidden test compares against. It lives outside anything a student
receives or the sandbox sees."""

import numpy as np

NAME = "numpy"


def mean_of(values):
    return float(np.mean(np.asarray(values, dtype=np.float64)))
