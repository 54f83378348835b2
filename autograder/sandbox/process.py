"""One running worker, as the grader holds it: its pipes, its output file, its limits.

A runner (bubblewrap, or the explicit unsafe one) decides how the worker process is started; from
then on every worker is driven the same way through ``WorkerProcess``.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import WorkerCrashed
from .worker import FrameError, read_frame, write_frame

OUTPUT_KEPT_BYTES = 64 * 1024
PR_SET_CHILD_SUBREAPER = 36


class Limits(BaseModel):
    """What one submission's worker may use. Defaults are documented in the README."""

    memory_mib: int = Field(default=2048, ge=64)
    call_timeout: float = Field(default=10.0, gt=0)
    submission_timeout: float = Field(default=120.0, gt=0)
    cpu_seconds: int = Field(default=300, ge=1)
    processes: int = Field(default=32, ge=1)
    open_files: int = Field(default=64, ge=16)
    file_mib: int = Field(default=16, ge=1)
    tmp_mib: int = Field(default=16, ge=1)

    def apply(self) -> None:
        """Set the limits on the current process (called in the child, before exec)."""
        memory = self.memory_mib * 1024 * 1024
        for limit, value in (
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_NOFILE, self.open_files),
            (resource.RLIMIT_FSIZE, self.file_mib * 1024 * 1024),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))


class WorkerProcess:
    """A started worker: send a request, wait (bounded) for its answer, kill it."""

    def __init__(
        self,
        process: subprocess.Popen,
        request_fd: int,
        response_fd: int,
        output_path: Path,
        info_fd: int | None = None,
    ):
        self.process = process
        self.info_fd = info_fd
        self.request_fd = request_fd
        self.response_fd = response_fd
        self.output_path = output_path
        self.sequence = 0

    def request(self, header: dict, blobs: Sequence[bytes] = (), timeout: float = 10.0) -> tuple[dict, list[bytes]]:
        """Send one request and read its response; a wait past ``timeout`` raises TimeoutError.

        Each request carries a sequence number the answer must echo: a frame written on the
        channel by the submission itself arrives out of order and ends the worker."""
        self.sequence += 1
        header = {**header, "id": self.sequence}
        try:
            write_frame(self.request_fd, header, list(blobs))
        except (BrokenPipeError, OSError) as exc:
            raise WorkerCrashed(self._death("before it could be asked")) from exc
        deadline = time.monotonic() + timeout
        remaining = timeout
        while True:
            ready, _, _ = select.select([self.response_fd], [], [], max(remaining, 0))
            if ready:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
        try:
            response, response_blobs = read_frame(self.response_fd)
        except (FrameError, ValueError, OSError) as exc:
            raise WorkerCrashed(self._death("while answering")) from exc
        if response.get("id") != self.sequence:
            raise WorkerCrashed("the submission wrote on the grader's channel (an answer out of order)")
        return response, response_blobs

    def output(self, limit: int = OUTPUT_KEPT_BYTES) -> tuple[str, int]:
        """The first ``limit`` bytes the submission printed while loading, and how many it printed."""
        try:
            size = self.output_path.stat().st_size
            with self.output_path.open("rb") as handle:
                data = handle.read(limit)
        except OSError:
            return "", 0
        return data.decode("utf-8", errors="replace"), size

    def kill(self) -> None:
        """Kill the worker and everything it started (its process group; its PID namespace under
        bubblewrap), and release the pipes and the output file."""
        inner = self._inner_pid()
        if inner is not None:
            # Killing the namespace's first process makes the kernel kill everything inside it.
            _signal(inner, signal.SIGKILL)
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if inner is not None:
            _reap(inner)
        for fd in (self.request_fd, self.response_fd, self.info_fd):
            if fd is None:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self.output_path.unlink(missing_ok=True)
        try:
            self.output_path.parent.rmdir()
        except OSError:
            pass

    def _inner_pid(self) -> int | None:
        """The pid (as this process sees it) of the sandbox's first process, from bubblewrap's
        --info-fd report."""
        if self.info_fd is None:
            return None
        data = b""
        while select.select([self.info_fd], [], [], 0)[0]:
            chunk = os.read(self.info_fd, 4096)
            if not chunk:
                break
            data += chunk
        try:
            return int(json.loads(data)["child-pid"]) if data else None
        except (ValueError, KeyError, TypeError):
            return None

    def _death(self, when: str) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return f"the worker stopped responding {when}"
        if code > 128:  # bubblewrap reports a command killed by signal N as 128 + N
            code = -(code - 128)
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            reason = " (out of memory or CPU time)" if name in {"SIGKILL", "SIGXCPU", "SIGSEGV"} else ""
            return f"the worker was killed by {name}{reason} {when}"
        return f"the worker exited with status {code} {when}"


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, seconds: float = 2.0) -> None:
    """Collect a process that was re-parented to us (we are a child subreaper), so that no
    zombie outlives its grading."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            time.sleep(0.01)  # not (yet) our child: re-parenting happens when bwrap exits
            continue
        if done:
            return
        time.sleep(0.01)


def become_subreaper() -> None:
    """Orphaned descendants (the sandbox's first process, once bubblewrap exits) become our
    children rather than init's, so we can reap them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def spawn(
    argv: Sequence[str],
    limits: Limits,
    environment: dict[str, str],
    extra_fds: Sequence[int] = (),
    user: int | None = None,
    info_fd: int | None = None,
) -> WorkerProcess:
    """Start ``argv`` with the worker's two pipes (their fd numbers fill argv's ``{request}`` and
    ``{response}`` placeholders), stdout and stderr into a private output file, and ``limits`` set
    between fork and exec."""
    request_read, request_write = os.pipe()
    response_read, response_write = os.pipe()
    folder = Path(tempfile.mkdtemp(prefix="worker-output-"))
    output_path = folder / "output"
    output_fd = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    argv = [part.format(request=request_read, response=response_write) for part in argv]

    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=output_fd,
            stderr=output_fd,
            pass_fds=(request_read, response_write, *extra_fds),
            env=environment,
            cwd="/",
            start_new_session=True,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
            preexec_fn=limits.apply,  # noqa: PLW1509 - limits must be set between fork and exec
        )
    finally:
        for fd in (request_read, response_write, output_fd):
            os.close(fd)
    return WorkerProcess(process, request_write, response_read, output_path, info_fd)
