"""A student's submission running in a worker, as the hidden tests see it.

``StudentSession`` loads the submission's cells once, then answers calls: ``session.student.softmax(x)``
sends the call to the worker and returns the value, checked to be plain data. A call that times
out or kills the worker costs that call only: the worker is restarted (the cells run again) for
the next one, until the submission's total time is spent.
"""

from __future__ import annotations

import io
import time
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..errors import BadReturn, MissingFunction, StudentFault, StudentRaised, StudentTimeout, WorkerCrashed
from .process import Limits, WorkerProcess
from .runners import Runner
from .worker import encode_value

MAX_DEPTH = 32
PLAIN_KINDS = "biufc"


class Cell(BaseModel):
    index: int
    source: str


class CellError(BaseModel):
    cell: int
    type: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"cell {self.cell}" + (f", line {self.line}" if self.line else "")
        return f"{where}: {self.type}: {self.message}" if self.message else f"{where}: {self.type}"


class LoadResult(BaseModel):
    cell_errors: list[CellError] = []
    defined: list[str] = []
    output: str = ""
    output_bytes: int = 0
    failure: str | None = None  # the whole load failed (timeout, crash): why


class StudentSession:
    def __init__(self, runner: Runner, cells: list[Cell], limits: Limits):
        self.runner = runner
        self.cells = cells
        self.limits = limits
        self.worker: WorkerProcess | None = None
        self.deadline = time.monotonic() + limits.submission_timeout
        self.loaded: LoadResult | None = None
        # A function that hung once is not called again: it would spend the submission's time
        # one call timeout at a time.
        self.timed_out: dict[str, float] = {}

    # --- lifecycle ---------------------------------------------------------------------------

    def load(self) -> LoadResult:
        """Start the worker and run the submission's cells; what they printed is kept."""
        try:
            self._start()
        except StudentFault as fault:
            self.loaded = LoadResult(failure=str(fault))
            return self.loaded
        assert self.worker is not None
        output, size = self.worker.output()
        self.loaded = self.loaded.model_copy(update={"output": output, "output_bytes": size})
        return self.loaded

    def close(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None

    def __enter__(self) -> StudentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def student(self) -> StudentProxy:
        return StudentProxy(self)

    # --- calls ----------------------------------------------------------------------------------

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.loaded is not None and self.loaded.failure:
            raise WorkerCrashed(f"your code could not be run: {self.loaded.failure}")
        if self.loaded is not None and name not in self.loaded.defined:
            raise MissingFunction(f"{name} is not defined in your submission")
        if name in self.timed_out:
            raise StudentTimeout(f"{name} did not return within {self.timed_out[name]:g} s (in an earlier check)")
        if self.worker is None:
            self._start()
        assert self.worker is not None
        blobs: list[bytes] = []
        header = {
            "op": "call",
            "name": name,
            "args": [encode_value(arg, blobs) for arg in args],
            "kwargs": {key: encode_value(value, blobs) for key, value in kwargs.items()},
        }
        timeout = self._time_left(self.limits.call_timeout, f"{name}")
        try:
            response, out = self.worker.request(header, blobs, timeout=timeout)
        except TimeoutError:
            self.close()
            self.timed_out[name] = timeout
            raise StudentTimeout(f"{name} did not return within {timeout:g} s") from None
        except WorkerCrashed as crash:
            self.close()
            raise WorkerCrashed(f"{name} crashed: {crash}") from None
        if response.get("missing"):
            raise MissingFunction(f"{name} is not defined in your submission")
        if not response.get("ok"):
            error = response.get("error") or {}
            where = f" at line {error['line']} of your code" if isinstance(error.get("line"), int) else ""
            raise StudentRaised(f"{name} raised {error.get('type', 'an exception')}{where}")
        return decode_returned(name, response.get("value"), out)

    def _start(self) -> None:
        timeout = self._time_left(self.limits.submission_timeout, "your notebook's cells")
        self.worker = self.runner.start(self.limits)
        cells = [cell.model_dump() for cell in self.cells]
        try:
            response, _ = self.worker.request({"op": "load", "cells": cells}, timeout=timeout)
        except TimeoutError:
            self.close()
            raise StudentTimeout(f"your notebook's cells did not finish within {timeout:g} s") from None
        except WorkerCrashed as crash:
            self.close()
            raise WorkerCrashed(f"running your notebook's cells: {crash}") from None
        if self.loaded is None:
            self.loaded = LoadResult(
                cell_errors=[CellError(**error) for error in response.get("cell_errors", [])],
                defined=[name for name in response.get("defined", []) if isinstance(name, str)],
            )

    def _time_left(self, wanted: float, what: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StudentTimeout(
                f"the submission's time limit ({self.limits.submission_timeout:g} s) was spent before {what} could run"
            )
        return min(wanted, left)


class StudentProxy:
    """``student.softmax(x)`` in a hidden test: a call into the sandbox."""

    def __init__(self, session: StudentSession):
        self._session = session

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._session.call(name, *args, **kwargs)


def decode_returned(name: str, value: Any, blobs: list[bytes], depth: int = 0) -> Any:
    """A returned value rebuilt from plain data only; anything else is a BadReturn."""
    if depth > MAX_DEPTH:
        raise BadReturn(f"{name} returned a value nested more than {MAX_DEPTH} levels deep")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is list:
        return [decode_returned(name, item, blobs, depth + 1) for item in value]
    if type(value) is dict and len(value) == 1:
        ((tag, content),) = value.items()
        if tag == "$float" and type(content) is str:
            try:
                return float(content)
            except ValueError:
                pass
        elif tag == "$tuple" and type(content) is list:
            return tuple(decode_returned(name, item, blobs, depth + 1) for item in content)
        elif tag == "$rejected" and type(content) is str:
            raise BadReturn(
                f"{name} returned {content[:120]}; return numbers, strings, lists, tuples or plain numpy arrays"
            )
        elif tag == "$npy" and type(content) is int and 0 <= content < len(blobs):
            return _load_array(name, blobs[content])
    raise BadReturn(f"{name} returned something the grader cannot read")


def _load_array(name: str, data: bytes) -> np.ndarray:
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise BadReturn(f"{name} returned an array the grader cannot read ({type(exc).__name__})") from None
    if type(array) is not np.ndarray or array.dtype.kind not in PLAIN_KINDS or array.dtype.fields is not None:
        raise BadReturn(f"{name} returned an array of dtype {array.dtype}; return a numeric numpy array")
    return array
