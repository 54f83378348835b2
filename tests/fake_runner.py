"""A runner for fast tests of scoring and feedback: the worker's own code, run in this process.

``InProcessRunner`` speaks the worker protocol (the same frames, encoded and decoded by the same
functions) without starting anything, so a hidden suite grades a trusted submission in
milliseconds. It isolates nothing: it is for known submissions only, never for an attack test.
It records every request, so a test can see which inputs a submission was sent.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Sequence

from autograder.sandbox import worker
from autograder.sandbox.limits import Limits
from autograder.sandbox.process import CallClock


class InProcessWorker:
    def __init__(self, requests: list[dict]):
        self.namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
        self.requests = requests
        self.printed = io.StringIO()
        self.last_clock = CallClock(0.0, 0.0, lambda: 0.0)

    def request(
        self,
        header: dict,
        blobs: Sequence[bytes] = (),
        timeout: float = 10.0,
        hard_timeout: float | None = None,
        header_limit: int = 0,
    ) -> tuple[dict, list[bytes]]:
        self.last_clock = CallClock(timeout, hard_timeout or timeout, lambda: 0.0)
        # Through the real framing both ways, as a frame read off a pipe would be.
        header, blobs = _roundtrip(header, list(blobs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what the student's numpy warns about is theirs
            return self._answer(header, blobs)

    def _answer(self, header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        self.requests.append({"header": header, "blobs": blobs})
        # What the submission prints while loading is kept; during graded calls it goes nowhere.
        printed = self.printed if header["op"] == "load" else io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            response, out = worker.answer(self.namespace, header, blobs)
        return _roundtrip(response, out)

    def output(self, limit: int = 64 * 1024) -> tuple[str, int]:
        text = self.printed.getvalue()
        return text[:limit], len(text.encode())

    def kill(self) -> None:
        pass


class InProcessRunner:
    name = "in-process (tests only)"

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def start(self, limits: Limits) -> InProcessWorker:
        return InProcessWorker(self.requests)

    def mode(self) -> str:
        return "the grading process itself"

    def prestart(self, limits: Limits) -> None:
        pass

    def calls(self) -> list[dict]:
        """The graded calls sent so far: each with the function's name and its decoded arguments."""
        return [
            {"name": r["header"]["name"], "args": worker.decode_value(r["header"]["args"], r["blobs"])}
            for r in self.requests
            if r["header"]["op"] == "call"
        ]


def _roundtrip(header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    data = io.BytesIO(worker.encode_frame(header, blobs))
    return worker.read_frame(0, read=lambda _fd, size: data.read(size))
