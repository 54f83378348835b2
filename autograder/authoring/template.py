"""``autograder new NAME``: a master notebook to start from, one question of each kind.

A function graded by hidden tests (with public tests and a known wrong version), a function that
uses it (``uses``), and a written answer graded by hand with a rubric. ``assign``, ``verify`` and
``grade`` accept it as it stands (tests/test_authoring.py).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from ..errors import AssignmentError
from .assign import NAME

MEAN_HIDDEN = '''import pytest

from autograder.testing import expect_close, expect_number


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_matches_the_reference(student, reference, rng, size):
    """The mean of random values matches the expected one."""
    values = rng.normal(size=size) * 10 + 3
    what = f"the mean of {size} random value{'s' if size != 1 else ''}"
    expect_close(expect_number(student.mean_of(values), what), reference.mean_of(values), what)'''

SPREAD_HIDDEN = '''from autograder.testing import expect_close, expect_number


def test_spread_matches_the_reference(student, reference, rng):
    """The variance of random values matches the expected one."""
    values = rng.normal(size=50) * 4
    what = "the variance of 50 random values"
    expect_close(expect_number(student.variance_of(values), what), reference.variance_of(values), what)


def test_constant_values_have_no_spread(student, rng):
    """Values that are all the same have a variance of zero."""
    values = [float(rng.integers(1, 9))] * 5
    what = "the variance of five equal values"
    expect_close(expect_number(student.variance_of(values), what), 0.0, what)'''


def master_notebook(name: str, title: str) -> nbformat.NotebookNode:
    """The starting master notebook of an assignment called ``name``."""
    notebook = new_notebook()
    notebook.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    notebook.cells = [
        new_raw_cell(f'# ASSIGNMENT\nname = "{name}"\ntitle = "{title}"'),
        new_markdown_cell(
            f"# {title}\n\nThe mean of $n$ values is $\\bar{{x}} = \\frac{{1}}{{n}} \\sum_i x_i$. "
            "Write it by hand, then use it."
        ),
        new_code_cell("import numpy as np"),
        new_raw_cell('# BEGIN QUESTION\nid = "mean"\ntitle = "The mean of an array"\npoints = 1'),
        new_markdown_cell("## 1. The mean\n\nWrite `mean_of(values)`, the mean of a 1-D array, without `np.mean`."),
        new_code_cell(
            "def mean_of(values):\n    ### BEGIN SOLUTION\n    return float(np.sum(values) / len(values))\n"
            "    ### END SOLUTION"
        ),
        new_code_cell(
            '# PUBLIC TESTS\nassert mean_of(np.array([2.0, 4.0, 9.0])) == 5.0, "the mean of 2, 4 and 9 is 5"'
        ),
        new_code_cell(f"# HIDDEN TESTS\n{MEAN_HIDDEN}"),
        new_raw_cell(
            '# KNOWN WRONG\n# file = "mean_off_by_one"\n'
            '# mistake = "It divides by one less than the number of values."\n'
            "def mean_of(values):\n    return float(np.sum(values) / (len(values) - 1)) if len(values) > 1 else 0.0"
        ),
        new_raw_cell(
            '# BEGIN QUESTION\nid = "spread"\ntitle = "The variance, with your mean"\npoints = 2\nuses = ["mean_of"]'
        ),
        new_markdown_cell(
            "## 2. The spread\n\nWrite `variance_of(values)`, $\\frac{1}{n} \\sum_i (x_i - \\bar{x})^2$, "
            "with your `mean_of`."
        ),
        new_code_cell(
            "def variance_of(values):\n    ### BEGIN SOLUTION\n    values = np.asarray(values, dtype=float)\n"
            "    return mean_of((values - mean_of(values)) ** 2)\n    ### END SOLUTION"
        ),
        new_code_cell(
            '# PUBLIC TESTS\nassert variance_of(np.array([1.0, 3.0])) == 1.0, "the variance of 1 and 3 is 1"'
        ),
        new_code_cell(f"# HIDDEN TESTS\n{SPREAD_HIDDEN}"),
        new_raw_cell(
            '# BEGIN QUESTION\nid = "written"\ntitle = "When the mean misleads (graded by hand)"\npoints = 2\n\n'
            '[[rubric]]\nid = "outlier"\ntext = "Names an outlier (one large value) as what moves the mean"\npoints = 1\n\n'
            '[[rubric]]\nid = "median"\ntext = "Proposes the median, or another robust summary"\npoints = 1'
        ),
        new_markdown_cell("## 3. When does the mean mislead?\n\nIn two sentences: when is the mean a poor summary?"),
        new_markdown_cell(
            "<!-- SOLUTION -->\nWhen one value is far from the others (an outlier), the mean moves toward it; "
            "the median does not."
        ),
    ]
    return notebook


def new_master(name: str, folder: Path, title: str | None = None) -> Path:
    """Write ``folder/<name>.master.ipynb`` (``folder`` made if needed); refuses to replace a file."""
    if not NAME.match(name):
        raise AssignmentError(f"{name}: an assignment's name is lowercase words joined by -, e.g. recurrent-networks")
    path = folder / f"{name}.master.ipynb"
    if path.exists():
        raise AssignmentError(f"{path}: exists already; edit it, or choose another name")
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(master_notebook(name, title or name.replace("-", " ").capitalize()), path)
    return path
