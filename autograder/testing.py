"""Helpers for hidden tests: checks that fail with a message safe to show the student.

A hidden test must never let pytest's assertion rewriting print its values (they are the hidden
inputs and references), so tests check with these helpers, which raise ``Mismatch`` with a message
written in plain words: what was expected, and what came back, described by shape, dtype and error
size rather than by values. Each message is a whole sentence whatever ``what`` names (one value or
several: "the output of ...", "the weights of ..."): no verb ever has ``what`` as its subject.

The rest of a hidden test's world, for reference:

- **Fixtures** (``autograder.suite.SuitePlugin``): ``student``, the submission's functions, each
  call run in the sandbox (``student.softmax(x)``); ``reference``, the reference module the grade
  runs against (``--reference``); ``rng``, a numpy ``Generator`` drawn from the grader's secret,
  the submission's hash and the test, so a regrade draws the same inputs and another file others.
- **The question**: a module is marked ``pytestmark = pytest.mark.question("softmax")`` (``autograder
  assign`` writes it); a test marked with a question the manifest lacks stops ``grade`` before any
  student is graded (``autograder.suite.check_questions``).
- **The docstring-sentence rule**: a test's docstring starts with one whole sentence, the check's
  text the student reads; what follows a blank line is for the instructor. A failed check shows
  that sentence and the ``Mismatch``'s message; any other exception shows a generic sentence.
- **uses**: a question's ``uses`` lists graded functions of other questions its functions call;
  when one of those fails, the feedback says so first (``autograder.causes``).
- **The grade_id rule**: a notebook cell belongs to the question whose id is its nbgrader
  ``grade_id``, or begins it followed by ``_`` (``autograder.assignment.question_of_cell``).
- **Tolerance**: one rule for every value, ``tolerance`` (``course.tolerance``, re-exported here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.tolerance import stricter as stricter  # re-exported: hidden tests and verify use it from here
from course.tolerance import tolerance as tolerance
from course.tolerance import within
from course.wording import plural


class Mismatch(AssertionError):
    """A checked result differs from what was expected; the message is shown to the student."""


def expect(condition: bool, message: str) -> None:
    """Fail the check with ``message`` (a whole sentence the student reads) unless ``condition`` holds.
    Never put a hidden input or a reference value in the message."""
    if not condition:
        raise Mismatch(message)


# Sizes a message may show. A student's value can be shaped to carry a hidden input (an array of
# 1,234,567 rows), so larger sizes are described, never written out; strings are never quoted.
SMALL = 16


def describe(value: Any) -> str:
    """What ``value`` is, in words a message may show: its kind, and its shape and dtype when small."""
    if isinstance(value, np.ndarray):
        if value.ndim <= 4 and all(size <= SMALL for size in value.shape):
            return f"an array of shape {value.shape} and dtype {value.dtype}"
        return f"a {value.ndim}-dimensional array of dtype {value.dtype}"
    if isinstance(value, tuple | list):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return (
            f"a {kind} of {plural(len(value), 'item')}"
            if len(value) <= SMALL
            else f"a {kind} of more than {plural(SMALL, 'item')}"
        )
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def shape_problem(actual: tuple[int, ...], expected: tuple[int, ...]) -> str | None:
    """How ``actual`` differs from ``expected``: the number of dimensions, else the first axis that
    disagrees, with its sizes only when both are small."""
    if len(actual) != len(expected):
        return f"{plural(len(expected), 'dimension')} expected, {len(actual)} found"
    for axis, (got, want) in enumerate(zip(actual, expected, strict=True)):
        if got != want:
            sizes = f" ({got} instead of {want})" if max(got, want) <= SMALL else ""
            return f"the wrong size along axis {axis}{sizes}"
    return None


def expect_array(value: Any, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` is a finite real numpy array (of ``shape`` when given); returns it."""
    expect(isinstance(value, np.ndarray), f"Expected a numpy array for {what}, but got {describe(value)}.")
    expect(value.dtype.kind in "biuf", f"Expected real numbers in {what}, but got an array of dtype {value.dtype}.")
    if shape is not None:
        problem = shape_problem(value.shape, tuple(shape))
        expect(problem is None, f"Wrong shape for {what}: {problem}.")
    expect(bool(np.all(np.isfinite(value))), f"Found NaN or infinity in {what}.")
    return value


def expect_close(value: Any, expected: Any, what: str) -> None:
    """``value`` matches ``expected`` in shape, within the tolerance of ``value``'s own dtype; the
    message gives the size of the error, never the numbers."""
    expected = np.asarray(expected, dtype=np.float64)
    array = expect_array(value, what, expected.shape)
    rtol, atol = tolerance(array.dtype)
    error = float(np.max(np.abs(array - expected))) if array.size else 0.0
    expect(
        within(array, expected, rtol, atol),
        f"Wrong values in {what}: the largest difference from the expected ones is {error:.3g}.",
    )


def agrees(value: Any, expected: Any, nan_alike: bool = False) -> bool:
    """Whether ``value`` matches ``expected`` by the one tolerance rule (a tuple or list item by
    item), for values no check shows a student: what their function gave another (causes.py), or
    what a known mistake answers (mistakes.py, where a NaN matches a NaN: ``nan_alike``)."""
    if isinstance(expected, tuple | list):
        return (
            isinstance(value, tuple | list)
            and len(value) == len(expected)
            and all(agrees(item, want, nan_alike) for item, want in zip(value, expected, strict=True))
        )
    if isinstance(expected, np.ndarray | np.number | float | int) and not isinstance(expected, bool):
        try:
            array = np.asarray(value)
        except Exception:  # whatever cannot be an array does not match one
            return False
        want = np.asarray(expected, dtype=np.float64)
        if array.dtype.kind not in "biuf" or array.shape != want.shape:
            return False
        rtol, atol = tolerance(array.dtype)
        return within(array, want, rtol, atol, equal_nan=nan_alike)
    return bool(value == expected)


def expect_number(value: Any, what: str) -> np.ndarray:
    """``value`` is one real number (a Python number or a 0-d numeric array); returns it as a 0-d
    array that keeps its dtype, for ``expect_close``."""
    expect(
        isinstance(value, float | int | np.ndarray) and not isinstance(value, bool) and np.ndim(value) == 0,
        f"Expected one number for {what}, but got {describe(value)}.",
    )
    return expect_array(np.asarray(value), what)


def run_notebook_tests(student: Any, setup: str, tests: str, functions: list[str]) -> None:
    """Run a notebook's own test cell on the student's functions, as nbgrader grades: ``setup`` (the
    notebook's imports), then ``tests`` (the cell, hidden regions included) with each of
    ``functions`` the student's, called in the sandbox. A failed ``assert`` fails the check with its
    message (which the instructor wrote, and the student reads)."""
    namespace: dict[str, Any] = {}
    exec(setup, namespace)  # the instructor's code, never the student's
    namespace.update({name: getattr(student, name) for name in functions})
    try:
        exec(tests, namespace)
    except Mismatch:
        raise
    except AssertionError as exc:
        message = str(exc).strip() or "One of the notebook's tests failed."
        raise Mismatch(message[:1].upper() + message[1:]) from None


def expect_tuple(value: Any, what: str, length: int) -> tuple:
    """``value`` is a tuple (or list) of ``length`` items, as a function returning several values
    gives; returns it as a tuple, to check each item with ``expect_close``."""
    expect(
        isinstance(value, tuple | list) and len(value) == length,
        f"Expected {what} to return a tuple of {plural(length, 'item')}, but it returned {describe(value)}.",
    )
    return tuple(value)
