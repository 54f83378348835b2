# Degenerate answers of the right type that ignore their inputs' values: each must score zero.
import numpy as np


def top_pairs(weights, tokens, k=3):
    return [(tokens[0], tokens[1], 0.5)] * k


def explanation_breaking_input(X, W_q, W_k, W_v):
    return np.zeros_like(X)


def permutation_gap(X, W_q, W_k, W_v, perm, use_pe):
    return 0.0
