"""The autograder: releases assignments and grades submissions in a sandbox.

For students, inside a notebook: ``from autograder import check; check("softmax")``.
"""

from .check import check

__all__ = ["check"]
