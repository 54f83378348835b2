"""The grader's side of the zygote (``zygote.py``): started once per grading process inside
bubblewrap, asked for a fresh sandbox per submission, each held as a ``ForkedWorker``.

A forked sandbox is driven like any worker (the same pipes, frames and deadlines); only its start
and its end differ. Its processes are not the grader's children: the grader learns the pids of the
sandbox's init and worker from the kernel (SCM_CREDENTIALS translates them into the grader's PID
namespace, whatever the sandbox claims), holds the init by a pidfd, and ends the sandbox by killing
its init, which makes the kernel kill everything else in its PID namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Sequence

from .cgroups import CpuGroup
from .limits import Limits
from .process import WorkerProcess, close_all, describe_end, kill_session, launch, reap_sandbox_orphans

READY_TIMEOUT = 60.0  # importing numpy and matplotlib on a loaded machine
FORK_TIMEOUT = 20.0
END_TIMEOUT = 5.0
# The sandbox's own processes beside the submission's, under the same uid, that the old design did
# not have: the zygote and the sandbox's init (the process limit counts every process of a uid).
SANDBOX_PROCESSES = 2
UCRED = struct.Struct("iII")


class ZygoteUnavailable(Exception):
    """The zygote could not start or could not fork a sandbox: why, in words."""


class Zygote:
    """A started zygote, owned by the process that started it."""

    def __init__(
        self, process: subprocess.Popen, control: socket.socket, output_fd: int, info_fd: int, group: CpuGroup | None
    ):
        self.process = process
        self.control = control
        self.output_fd = output_fd
        self.info_fd = info_fd
        self.inner_fd: int | None = None
        self.group = group
        self.owner = os.getpid()
        self.pending = True  # launched, not yet known to be ready
        self.spare: AskedFork | None = None  # the next submission's sandbox, asked for ahead

    @classmethod
    def launch(
        cls,
        argv: Sequence[str],
        seccomp_fd: int,
        info: tuple[int, int],
        user: int | None,
        group: CpuGroup | None,
    ) -> Zygote:
        """Start ``argv`` (bubblewrap's, ending with the interpreter and zygote.py) with the control
        socket and the seccomp program's descriptor as its last two arguments, bubblewrap's report on
        the pipe ``info`` (read end, write end), and return at once: ``wait_ready`` waits for its
        imports, so that the grader can do its own start meanwhile. The caller closes the write end."""
        control, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        output_fd = os.memfd_create("zygote-output", os.MFD_CLOEXEC)
        try:
            process = launch(
                [*argv, str(inside.fileno()), str(seccomp_fd)],
                None,
                {"PATH": "/usr/bin:/bin"},
                pass_fds=(inside.fileno(), seccomp_fd, info[1]),
                user=user,
                group=group,
                output_fd=output_fd,
            )
        except OSError as exc:
            control.close()
            os.close(output_fd)
            os.close(info[0])
            raise ZygoteUnavailable(f"bubblewrap could not start it ({exc})") from None
        finally:
            inside.close()
        return cls(process, control, output_fd, info[0], group)

    def wait_ready(self) -> None:
        """Wait until the launched zygote says it is ready; end it and raise if it does not."""
        if not self.pending:
            return
        try:
            ready = json.loads(self._receive(READY_TIMEOUT) or b"{}")
        except (TimeoutError, OSError, ValueError):
            ready = {}
        if ready.get("ready") is not True:
            why = self._last_words() or f"it did not say it was ready within {READY_TIMEOUT:g} s"
            self.close()
            raise ZygoteUnavailable(why)
        self._hold_inner()
        self.pending = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, limits: Limits) -> ForkedWorker:
        """A fresh sandbox for one submission, ready to read it. The next one is asked for at once
        (a spare): the zygote forks it while this one is graded, on a core the grading leaves idle,
        and the next submission with the same limits finds it ready. A spare never holds anything
        a submission sent: it waits, in namespaces of its own, for the one it is given to."""
        request = _fork_request(limits)
        spare, self.spare = self.spare, None
        worker = spare.take(request) if spare is not None else None
        if worker is None:
            worker = self._ask(request).receive()
        self.ask_ahead(limits)
        return worker

    def ask_ahead(self, limits: Limits) -> None:
        """Ask for a spare sandbox with these limits now, if none is asked for (also before the
        zygote is ready: it answers once its imports are done, and the first submission's sandbox
        is then ready too)."""
        if self.spare is None:
            # A refused request leaves no spare: the next submission asks for its own, and learns why.
            with contextlib.suppress(ZygoteUnavailable):
                self.spare = self._ask(_fork_request(limits))

    def _ask(self, request: dict) -> AskedFork:
        """Send the zygote a fork request; its answer is read by the returned AskedFork."""
        request_read, request_write = os.pipe()
        response_read, response_write = os.pipe()
        output_fd = os.memfd_create("worker-output", os.MFD_CLOEXEC)
        report, report_inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Set before anything is sent: the kernel then attaches each sender's pid and uid.
        report.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        asked = AskedFork(self, request, (request_write, response_read, output_fd), report)
        try:
            socket.send_fds(
                self.control,
                [json.dumps(request).encode()],
                [request_read, response_write, output_fd, report_inside.fileno()],
            )
        except OSError as exc:
            asked.release()
            raise ZygoteUnavailable(f"it could not fork a sandbox ({type(exc).__name__}: {exc})") from None
        finally:
            for fd in (request_read, response_write):
                os.close(fd)
            report_inside.close()
        return asked

    def close(self) -> None:
        """End the zygote (and any sandbox it forked) and release what it held."""
        bury_killed(wait=True)  # the sandboxes it ended are gone before it is
        if self.spare is not None:
            self.spare.release()  # its processes end with the zygote's PID namespace, below
            self.spare = None
        self.control.close()
        if self.inner_fd is not None:  # the first process of its PID namespace: the kernel kills the rest
            try:
                signal.pidfd_send_signal(self.inner_fd, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.group is not None:
            self.group.kill()
        kill_session(self.process)
        if self.inner_fd is not None:
            _collect(self.inner_fd)
        close_all(self.output_fd, self.info_fd, self.inner_fd)
        # bubblewrap's init outlives the bubblewrap we started by a moment and comes to us (a
        # subreaper) to be collected: a long-running grader must not collect zombies.
        reap_sandbox_orphans()
        if self.group is not None:
            for _ in range(100):
                self.group.kill()
                if self.group.remove():
                    break
                time.sleep(0.01)
                reap_sandbox_orphans()

    def _hold_inner(self) -> None:
        """Hold the sandbox's first process (bubblewrap's --info-fd names it) by a pidfd, which no
        other process can ever stand for, however long the zygote lives."""
        try:
            if select.select([self.info_fd], [], [], 1)[0]:
                self.inner_fd = os.pidfd_open(int(json.loads(os.read(self.info_fd, 4096))["child-pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            self.inner_fd = None

    def _receive(self, timeout: float) -> bytes:
        if not select.select([self.control], [], [], timeout)[0]:
            raise TimeoutError
        return self.control.recv(1 << 16)

    def _last_words(self) -> str:
        """The last line the zygote wrote before it ended, if it ended."""
        if self.process.poll() is None:
            return ""
        try:
            text = os.pread(self.output_fd, 1 << 16, 0).decode("utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1][:300] if lines else f"it exited with status {self.process.returncode}"


def _fork_request(limits: Limits) -> dict:
    return {"rlimits": limits.rlimits(more_processes=SANDBOX_PROCESSES), "tmp_bytes": limits.tmp_mib * 1024 * 1024}


class AskedFork:
    """A fork the zygote was asked for: its answer is read once (``receive``), before the zygote is
    asked anything else, so that requests and answers stay in step on the control socket."""

    def __init__(self, zygote: Zygote, request: dict, ours: tuple[int, int, int], report: socket.socket):
        self.zygote = zygote
        self.request = request
        self.ours = ours  # the request pipe's write end, the response pipe's read end, the output file
        self.report = report

    def receive(self) -> ForkedWorker:
        """The sandbox, once the zygote says it is ready; raises ZygoteUnavailable, saying why."""
        try:
            answer = json.loads(self.zygote._receive(FORK_TIMEOUT) or b"{}")
            if answer.get("ok") is not True:
                raise ZygoteUnavailable(str(answer.get("error") or self.zygote._last_words() or "it ended"))
            init = _sender(self.report, b"init")
            worker = _sender(self.report, b"worker")
            init_fd = os.pidfd_open(init)
        except (OSError, TimeoutError, ValueError) as exc:
            self.release()
            raise ZygoteUnavailable(f"it could not fork a sandbox ({type(exc).__name__}: {exc})") from None
        except ZygoteUnavailable:
            self.release()
            raise
        return ForkedWorker(*self.ours, self.report, init_fd, worker)

    def take(self, request: dict) -> ForkedWorker | None:
        """This spare, for a submission that asks for ``request``; None (and the spare ended) when it
        was made for other limits or could not be made: the caller then asks for a sandbox of its own."""
        try:
            worker = self.receive()
        except ZygoteUnavailable:
            return None
        if request != self.request:
            worker.kill()
            return None
        return worker

    def release(self) -> None:
        """Close our ends of a fork that will not be used."""
        self.report.close()
        close_all(*self.ours)


_dying: list[int] = []  # pidfds of killed sandboxes' inits, not yet seen gone
_dying_lock = threading.Lock()  # a Dask worker's grading threads end sandboxes at once


def bury_killed(wait: bool) -> None:
    """Release the killed sandboxes that are gone; with ``wait``, wait for each (bounded) first."""
    deadline = time.monotonic() + END_TIMEOUT
    with _dying_lock:
        for pidfd in list(_dying):
            if select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()) if wait else 0)[0] or wait:
                _dying.remove(pidfd)
                os.close(pidfd)


def _collect(pidfd: int, seconds: float = 2.0) -> None:
    """Collect the process ``pidfd`` holds once it has come to us (we are a subreaper; it comes when
    the bubblewrap that started it is gone), so that no zombie outlives the zygote."""
    start = time.monotonic()
    while time.monotonic() < start + seconds:
        try:
            if os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG) is not None:
                return
        except ChildProcessError:  # not (yet) our child
            if select.select([pidfd], [], [], 0)[0] and time.monotonic() > start + 0.1:
                return  # it ended, and another process collects it
        time.sleep(0.01)


def _sender(report: socket.socket, expected: bytes) -> int:
    """The pid (in our namespace) of the process that sent ``expected`` on ``report``, as the kernel
    saw it: a process cannot claim another's pid without privileges it no longer has."""
    if not select.select([report], [], [], FORK_TIMEOUT)[0]:
        raise TimeoutError
    message, ancillary, _flags, _address = report.recvmsg(64, socket.CMSG_SPACE(UCRED.size))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and message == expected:
            pid, _uid, _gid = UCRED.unpack(data[: UCRED.size])
            return pid
    raise ValueError(f"the sandbox's {expected.decode()} did not report")


class ForkedWorker(WorkerProcess):
    """A worker in a sandbox forked by the zygote: not our child, ended through its init's pidfd."""

    def __init__(
        self, request_fd: int, response_fd: int, output_fd: int, report: socket.socket, init_fd: int, worker_pid: int
    ):
        self._open_channels(request_fd, response_fd, output_fd)
        self.info_fd = None
        self.group = None
        self.report = report
        self.init_fd = init_fd
        self._worker_pid = worker_pid
        self._ended: int | None = None

    def kill(self) -> None:
        """End the sandbox: its worker is done with once its request pipe closes; its init is
        killed if anything is still running, and with it everything in its PID namespace. The
        kernel takes a few milliseconds to tear the namespaces down: that is not waited for here
        (the next submission's sandbox is ready meanwhile), but before the zygote is closed."""
        close_all(self.request_fd, self.response_fd)
        if not select.select([self.init_fd], [], [], 0)[0]:
            try:
                signal.pidfd_send_signal(self.init_fd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        close_all(self.output_fd)
        self.report.close()
        with _dying_lock:
            _dying.append(self.init_fd)
        bury_killed(wait=False)
        # A zygote whose bubblewrap died (it dies with the thread that started it) leaves processes
        # that come to us to be collected: collected here, as after any sandbox.
        reap_sandbox_orphans()

    def _worker_process(self) -> int | None:
        return self._worker_pid

    def _death(self, when: str) -> str:
        """How the worker ended, as its init reported it."""
        deadline = time.monotonic() + 2
        while self._ended is None and time.monotonic() < deadline:
            if not select.select([self.report], [], [], max(0.0, deadline - time.monotonic()))[0]:
                break
            try:
                message = self.report.recv(64)
            except OSError:
                break
            if not message:
                break
            if message.startswith(b"exit ") and message[5:].isdigit():
                self._ended = os.waitstatus_to_exitcode(int(message[5:]))
        if self._ended is None:
            return f"the worker stopped responding {when}"
        return describe_end(self._ended, when)
