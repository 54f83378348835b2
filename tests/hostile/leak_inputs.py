# Tries to smuggle the hidden inputs into its own feedback: in exception messages and printed
# output during graded calls, and by writing forged frames on the worker's response pipe.
import os
import sys

import numpy as np


class HiddenInput(Exception):
    pass


def softmax(x, axis=-1):
    print("SECRET-PRINT", np.asarray(x).tolist())
    raise ValueError("SECRET-MESSAGE " + repr(np.asarray(x).tolist()))


def scaled_dot_product_attention(Q, K, V, mask=None):
    raise HiddenInput("SECRET-CLASS " + repr(Q.tolist()))


def positional_encoding(n_positions, d_model):
    sys.stderr.write("SECRET-STDERR %d %d\n" % (n_positions, d_model))
    os.write(1, b"SECRET-FD1\n")
    return np.zeros((n_positions, d_model))
