"""A student's submission running in a worker, as the hidden tests see it.

``StudentSession`` loads the submission's cells once, then answers calls: ``session.student.softmax(x)``
sends the call to the worker and returns the value, checked to be plain data. A call that times
out or kills the worker costs that call only: the worker is restarted (the cells run again) for
the next one, until the submission's total time is spent.
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from course.wording import plural
from untrusted.text import storable

from ..errors import BadReturn, MissingFunction, StudentFault, StudentRaised, StudentTimeout, WorkerCrashed
from .limits import Limits
from .process import MAX_LOAD_HEADER_BYTES, WorkerProcess
from .reported import (
    DTYPE_KINDS,
    Cell,
    CellError,
    defined_names,
    describe_exception,
    describe_rejected,
    none_dropped,
    watched_name,
)
from .runners import Runner
from .worker import encode_value

if TYPE_CHECKING:  # numpy is imported where an answer's array is read: a grading command launches
    import numpy as np  # its sandbox before it, and numpy's import then overlaps the sandbox's start

MAX_DEPTH = 32
MAX_ITEMS = 1_000_000  # values in one answer (lists, tuples, dicts, numbers, strings, arrays)
CLOCK_EVERY = 1024  # values decoded between two looks at the call's clock (and the count)
# An array's dtype as the worker names it (numpy's dtype.str): a byte order, a number's kind, a size.
ARRAY_DTYPE = re.compile(r"[<>|=][biufc][0-9]{1,2}")


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
        self.watching: WorkerProcess | None = None  # the worker asked to watch (see watch)
        self.watch_names: list[str] = []

    # --- lifecycle ---------------------------------------------------------------------------

    def load(self) -> LoadResult:
        """Start the worker and run the submission's cells; what they printed is kept."""
        try:
            worker, loaded = self._start()
        except StudentFault as fault:
            self.loaded = LoadResult(failure=str(fault))
            return self.loaded
        output, size = worker.output()
        self.loaded = loaded.model_copy(update={"output": output, "output_bytes": size})
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
        worker = self.worker if self.worker is not None else self._start()[0]
        blobs: list[bytes] = []
        header = {
            "op": "call",
            "name": name,
            "args": [encode_value(arg, blobs) for arg in args],
            "kwargs": {key: encode_value(value, blobs) for key, value in kwargs.items()},
        }
        timeout, hard = self._time_left(self.limits.call_timeout, f"{name}")
        try:
            response, out = worker.request(header, blobs, timeout=timeout, hard_timeout=hard)
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
            raise StudentRaised(f"{name} raised {describe_exception(response.get('error'), self.cells)}")
        # Reading the answer is part of the call: it spends what the worker left of the call's time.
        decoding_deadline = time.monotonic() + worker.last_clock.remaining()
        try:
            return decode_returned(name, response.get("value"), out, decoding_deadline)
        except DecodingTimeout:
            self.timed_out[name] = timeout
            raise StudentTimeout(
                f"{name} did not return within {timeout:g} s (reading its answer of many values took the rest)"
            ) from None
        except BadReturn:
            raise
        except Exception as exc:  # whatever the answer made the decoder do is the answer's fault
            raise BadReturn(f"{name} returned something the grader cannot read ({type(exc).__name__})") from None

    # --- watched functions (see worker.py): what a question's function gave the ones it uses ------

    def watch(self, names: list[str]) -> bool:
        """Keep the calls the submission's own code makes to ``names`` from the next graded call on,
        until ``watched``; False when the worker cannot be asked."""
        if self.worker is None or (self.loaded is not None and self.loaded.failure):
            return False
        try:
            timeout, hard = self._time_left(self.limits.call_timeout, "a watch")
            response, _ = self.worker.request({"op": "watch", "names": list(names)}, timeout=timeout, hard_timeout=hard)
        except (TimeoutError, WorkerCrashed, StudentTimeout):
            self.close()
            return False
        self.watching = self.worker  # a worker started after this one (a restart) watches nothing
        self.watch_names = list(names)
        return bool(response.get("ok"))

    def watched(self) -> Watched:
        """The calls kept since ``watch`` (none when the worker was restarted meanwhile), each decoded
        as an answer is: plain data within the same bounds; a record that is not is left out."""
        if self.worker is None or self.worker is not self.watching:
            return Watched(calls=[], dropped=1)
        self.watching = None
        try:
            timeout, hard = self._time_left(self.limits.call_timeout, "a watch")
            response, blobs = self.worker.request({"op": "watched"}, timeout=timeout, hard_timeout=hard)
        except (TimeoutError, WorkerCrashed, StudentTimeout):
            self.close()
            return Watched(calls=[], dropped=1)
        records = response.get("calls")
        dropped = response.get("dropped")
        observed = []
        lost = 0 if none_dropped(dropped) else 1
        # One decoder for all (each blob is read once in all), within what is left of the request's time.
        decoder = _Decoder("a watched function", blobs, time.monotonic() + self.worker.last_clock.remaining())
        for record in records[:MAX_OBSERVED] if isinstance(records, list) else []:
            name = watched_name(record, self.watch_names)
            if name is None or not isinstance(record.get("kwargs"), dict):
                lost += 1
                continue
            try:
                args = decoder.decode(record.get("args"), 0)
                kwargs = decoder.decode({"$dict": record["kwargs"]}, 0)
                value = decoder.decode(record.get("value"), 0)
            except BadReturn:
                lost += 1
                continue
            if isinstance(args, list) and isinstance(kwargs, dict):
                observed.append(ObservedCall(name=name, args=tuple(args), kwargs=kwargs, value=value))
        return Watched(calls=observed, dropped=lost)

    def _start(self) -> tuple[WorkerProcess, LoadResult]:
        """A worker started and the submission's cells run in it: (the worker, what the first start loaded)."""
        timeout, hard = self._time_left(self.limits.submission_timeout, "your notebook's cells")
        worker = self.worker = self.runner.start(self.limits)
        cells = [cell.model_dump() for cell in self.cells]
        try:
            response, _ = worker.request(
                {"op": "load", "cells": cells}, timeout=timeout, hard_timeout=hard, header_limit=MAX_LOAD_HEADER_BYTES
            )
        except TimeoutError:
            self.close()
            raise StudentTimeout(f"your notebook's cells did not finish within {timeout:g} s") from None
        except WorkerCrashed as crash:
            self.close()
            raise WorkerCrashed(f"running your notebook's cells: {crash}") from None
        if self.loaded is None:
            reported = response.get("cell_errors")
            errors = [
                CellError.from_worker(error, self.cells) for error in (reported if isinstance(reported, list) else [])
            ]
            self.loaded = LoadResult(
                cell_errors=[error for error in errors if error is not None],
                defined=defined_names(response.get("defined")),
            )
        return worker, self.loaded

    def _time_left(self, wanted: float, what: str) -> tuple[float, float]:
        """The time this step may take (its own time: CPU and sleep, not the time it waits for a CPU
        that others hold), and the wall-clock time it may be given in all: the submission's own
        deadline. A busy machine (neighbours, other jobs, a loaded host) slows an honest call down
        without costing it its limit; a submission that starves its own worker with processes of its
        own spends only its own deadline (its sandbox's CPU share keeps its neighbours' speed)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StudentTimeout(
                f"the submission's time limit ({self.limits.submission_timeout:g} s) was spent before {what} could run"
            )
        return min(wanted, left), left


MAX_OBSERVED = 64  # the worker keeps at most this many (worker.MAX_WATCHED_CALLS); a forged list is cut


class ObservedCall(BaseModel):
    """One call the submission's code made to a watched function: its arguments and what it returned."""

    model_config = {"arbitrary_types_allowed": True}
    name: str
    args: tuple
    kwargs: dict
    value: Any


class Watched(BaseModel):
    """The calls kept while watching, and whether some were not (a bound, a restart, an unreadable one)."""

    calls: list[ObservedCall]
    dropped: int


class StudentProxy:
    """``student.softmax(x)`` in a hidden test: a call into the sandbox."""

    def __init__(self, session: StudentSession):
        self._session = session

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._session.call(name, *args, **kwargs)


def decode_returned(name: str, value: Any, blobs: list[bytes], deadline: float | None = None) -> Any:
    """A returned value rebuilt from plain data only; anything else is a BadReturn. The decoding has a
    budget: at most MAX_ITEMS values, MAX_DEPTH levels, and each array blob used once, so the grader
    never holds more than about twice the answer's own size; and, with a ``deadline`` (time.monotonic),
    it stops there (DecodingTimeout): a million tiny values cost the call's time, not the grader's."""
    return _Decoder(name, blobs, deadline).decode(value, 0)


class DecodingTimeout(BadReturn):
    """The answer's decoding ran past the call's deadline."""


class _Decoder:
    def __init__(self, name: str, blobs: list[bytes], deadline: float | None = None):
        self.name = name
        self.blobs = blobs
        self.used: set[int] = set()
        self.items = 0
        self.deadline = deadline

    def fail(self, what: str) -> BadReturn:
        return BadReturn(f"{self.name} returned {what}")

    def decode(self, value: Any, depth: int) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise self.fail(f"more than {MAX_ITEMS:,} values")
        if self.items % CLOCK_EVERY == 0 and self.deadline is not None and time.monotonic() > self.deadline:
            raise DecodingTimeout(f"{self.name} took too long to read")
        if depth > MAX_DEPTH:
            raise self.fail(f"a value nested more than {plural(MAX_DEPTH, 'level')} deep")
        if value is None or type(value) in (bool, int):
            return value
        if type(value) is str:
            return storable(value)
        if type(value) is list:
            return [self.decode(item, depth + 1) for item in value]
        if type(value) is dict:
            if "$rejected" in value:
                raise BadReturn(
                    f"{self.name} returned {describe_rejected(value)}; "
                    "return numbers, strings, lists, tuples, dicts with string keys or plain numpy arrays"
                )
            if "$array" in value and len(value) == 3:
                return self.array(value)
            if len(value) == 1:
                ((tag, content),) = value.items()
                if tag == "$float" and type(content) is str and len(content) < 40:
                    try:
                        return float(content)
                    except ValueError:
                        pass
                elif tag == "$tuple" and type(content) is list:
                    return tuple(self.decode(item, depth + 1) for item in content)
                elif tag == "$dict" and type(content) is dict:
                    return {storable(key): self.decode(item, depth + 1) for key, item in content.items()}
        raise self.fail("something the grader cannot read")

    def array(self, value: dict) -> np.ndarray:
        """An array from its raw bytes, only when they hold exactly the data that its dtype (a plain
        number's, named as numpy's dtype strings name it) and its shape claim; each blob once."""
        index, dtype_text, shape = value["$array"], value.get("dtype"), value.get("shape")
        if type(index) is not int or not 0 <= index < len(self.blobs):
            raise self.fail("something the grader cannot read")
        if index in self.used:  # the worker sends each array once: a repeat is forged
            raise self.fail("something the grader cannot read (an array used twice)")
        self.used.add(index)
        if type(dtype_text) is not str or not ARRAY_DTYPE.fullmatch(dtype_text):
            kind = DTYPE_KINDS.get(dtype_text[1:2]) if type(dtype_text) is str else None
            raise self.fail(
                f"a numpy array of dtype {kind or 'that does not hold numbers'}; return a numeric numpy array"
            )
        import numpy as np

        try:
            dtype = np.dtype(dtype_text)  # the pattern leaves only a byte order, a number kind and a size
        except TypeError:  # a size numpy has no such type of ("i3")
            raise self.fail("an array whose header does not match its data") from None
        data = self.blobs[index]
        if (
            type(shape) is not list
            or len(shape) > MAX_DEPTH
            or not all(type(size) is int and size >= 0 for size in shape)
            or math.prod(shape) * dtype.itemsize != len(data)
        ):
            raise self.fail("an array whose header does not match its data")
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
