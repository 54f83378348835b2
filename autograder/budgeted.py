"""Trusted code run on arguments a submission chose, within a budget of its own.

The rerun of failing checks (causes.py) runs the reference on whatever a submission's code passed to a
watched function: 156 KB of arguments can ask an attention of a 20,000 x 20,000 matrix. The reference is
trusted, its arguments are not, so that work runs in a child forked from the grader, with its own memory
(address space beyond what the grader already holds) and CPU time, and a wall-clock deadline: a child
past any of them is killed and the answer is None, and the grader goes on as it was.
"""

from __future__ import annotations

import json
import math
import os
import resource
import select
import signal
import time
from collections.abc import Callable
from typing import Any

# Wall-clock time the child may take, as a multiple of its CPU time (it may wait for a CPU).
WALL_FACTOR = 3.0


def run_within_budget(work: Callable[[], Any], seconds: float, memory_mib: int) -> Any | None:
    """``work()``'s JSON-able result, computed in a forked child within ``seconds`` of CPU time and
    ``memory_mib`` of memory more than the grader holds; None when it ran past either, raised or died."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(read_fd)
            _take_budget(seconds, memory_mib)
            payload = json.dumps(work()).encode()
            while payload:
                payload = payload[os.write(write_fd, payload) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        data = _read_until(read_fd, time.monotonic() + seconds * WALL_FACTOR + 1)
    finally:
        os.close(read_fd)
        _end(pid)
    try:
        return json.loads(data) if data is not None else None
    except ValueError:
        return None


def _take_budget(seconds: float, memory_mib: int) -> None:
    """In the child: default signal handlers (the grader's own would end its sandboxes), no core
    file, and the limits."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    with open("/proc/self/statm", "rb") as handle:
        held = int(handle.read().split()[0]) * resource.getpagesize()
    room = held + memory_mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (room, room))
    cpu = max(1, math.ceil(seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read_until(fd: int, deadline: float) -> bytes | None:
    """All the child writes, up to its end of file; None past the deadline or when it wrote nothing."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks) or None
        chunks.append(chunk)


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)  # done or not: it has nothing more to say
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
