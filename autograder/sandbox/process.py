"""One running worker, as the grader holds it: its pipes, its output, its limits.

A runner (bubblewrap, or the explicit unsafe one) decides how the worker process is started; from
then on every worker is driven the same way through ``WorkerProcess``. Every read from a worker
and every write to it has a deadline: a worker that stops reading, sends half a frame or trickles
bytes is out of time like one that never answers.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from ..errors import WorkerCrashed
from .cgroups import CpuGroup, groups_of
from .limits import Limits
from .worker import ChannelClosed, FrameError, encode_frame, read_exact, read_frame

OUTPUT_KEPT_BYTES = 64 * 1024
# An answer's budget: the grader holds at most this much of a frame, and decodes it into at most
# about twice as much (each array once, a bounded header). Hidden tests exchange arrays of a few
# kilobytes; 32 MiB leaves room for any honest answer.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
# The JSON part (numbers, strings, lists outside arrays) is parsed and decoded value by value: bounded
# before it is read, so that a million tiny values (2 MB of "0,") cost the grader nothing. An honest
# answer's lists hold thousands of numbers (20 KB); its arrays travel apart, as raw bytes.
MAX_ANSWER_HEADER_BYTES = 512 * 1024
# Loading answers once per submission with every failing cell's error (thousands, each bounded): more room.
MAX_LOAD_HEADER_BYTES = 2 * 1024 * 1024
# A call whose worker waited for a CPU (other sandboxes were busy) gets that waiting time back, up to
# this many times its limit of wall-clock time, where its caller names no wall-clock limit of its own
# (a graded call's is the submission's deadline: session.py).
STARVED_WALL_FACTOR = 3.0
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class CallClock:
    """The time a call may take. Its limit is the worker's own time: wall-clock time less the time
    the worker (and the grading thread waiting for its answer) spent waiting for a CPU that other
    processes held, so a neighbour, or a machine, that keeps every core busy cannot make an honest
    call time out. Waiting is given back up to ``hard`` seconds of
    wall-clock time in all."""

    def __init__(self, budget: float, hard: float, waited: Callable[[], float]):
        self.start = time.monotonic()
        self.budget = budget
        self.hard = max(hard, budget)
        self.waited = waited
        self.waited_before = waited()

    def remaining(self) -> float:
        elapsed = time.monotonic() - self.start
        if elapsed < self.budget:
            return self.budget - elapsed
        own = elapsed - max(0.0, self.waited() - self.waited_before)
        return max(0.0, min(self.budget - own, self.hard - elapsed))


class WorkerProcess:
    """A started worker: send a request, wait (bounded) for its answer, kill it."""

    def __init__(
        self,
        process: subprocess.Popen,
        request_fd: int,
        response_fd: int,
        output_fd: int,
        info_fd: int | None = None,
        group: CpuGroup | None = None,
    ):
        self._open_channels(request_fd, response_fd, output_fd)
        self.process = process
        self.info_fd = info_fd
        self.group = group
        self._inner: int | None = None
        self._info = b""
        self._worker_pid: int | None = None

    def _open_channels(self, request_fd: int, response_fd: int, output_fd: int) -> None:
        self.request_fd = request_fd
        self.response_fd = response_fd
        self.output_fd = output_fd
        self.sequence = 0
        self.last_clock = CallClock(0.0, 0.0, lambda: 0.0)  # the latest request's: its answer is read within it
        os.set_blocking(request_fd, False)

    def request(
        self,
        header: dict,
        blobs: Sequence[bytes] = (),
        timeout: float = 10.0,
        hard_timeout: float | None = None,
        header_limit: int = MAX_ANSWER_HEADER_BYTES,
    ) -> tuple[dict, list[bytes]]:
        """Send one request and read its response. Past ``timeout`` seconds of the worker's own time
        (``hard_timeout`` of wall-clock time at most) raises TimeoutError, whether the worker is
        silent, slow to read, or part-way through a frame.

        Each request carries a sequence number the answer must echo: a frame written on the
        channel by the submission itself arrives out of order and ends the worker."""
        self.sequence += 1
        clock = self.last_clock = CallClock(
            timeout, hard_timeout or timeout * STARVED_WALL_FACTOR, self._waited_for_cpu
        )
        try:
            self._write(encode_frame({**header, "id": self.sequence}, list(blobs)), clock)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise WorkerCrashed(self._death("before it could be asked")) from exc
        try:
            response, response_blobs = read_frame(
                self.response_fd,
                limit=MAX_ANSWER_BYTES,
                json_limit=header_limit,
                read=lambda fd, size: read_exact(fd, size, wait=lambda ready: _wait_readable(ready, clock)),
            )
        except ChannelClosed as exc:
            raise WorkerCrashed(self._death("while answering")) from exc
        except FrameError as exc:
            raise WorkerCrashed(f"the answer could not be read: {exc}") from exc
        if response.get("id") != self.sequence:
            raise WorkerCrashed("the submission wrote on the grader's channel (an answer out of order)")
        return response, response_blobs

    def _write(self, data: bytes, clock: CallClock) -> None:
        view = memoryview(data)
        while view:
            left = clock.remaining()
            if left <= 0 or not select.select([], [self.request_fd], [], left)[1]:
                if clock.remaining() <= 0:
                    raise TimeoutError
                continue
            try:
                written = os.write(self.request_fd, view)
            except BlockingIOError:
                continue
            view = view[written:]

    def output(self, limit: int = OUTPUT_KEPT_BYTES) -> tuple[str, int]:
        """The first ``limit`` bytes the submission printed while loading, and how many it printed."""
        try:
            size = os.fstat(self.output_fd).st_size
            data = os.pread(self.output_fd, limit, 0)
        except OSError:
            return "", 0
        return data.decode("utf-8", errors="replace"), size

    def kill(self) -> None:
        """Kill the worker and everything it started (its process group; its PID namespace under
        bubblewrap), and release the pipes and the output."""
        inner = self._inner_pid()
        if inner is not None:
            # Killing the namespace's first process makes the kernel kill everything inside it.
            _signal(inner, signal.SIGKILL)
        if self.group is not None:
            self.group.kill()
        kill_session(self.process)
        if inner is not None:
            reap(inner)
        close_all(self.request_fd, self.response_fd, self.info_fd, self.output_fd)
        # The sandbox's other processes die with its namespace and come to us (a subreaper) to be
        # collected: a long-running grader must not collect zombies. With a control group we know when
        # all are gone; without one, what arrives late is collected at the next kill.
        reap_sandbox_orphans()
        if self.group is not None:
            for _ in range(100):
                if self.group.remove():
                    break
                time.sleep(0.01)
                reap_sandbox_orphans()

    def _inner_pid(self) -> int | None:
        """The pid (as this process sees it) of the sandbox's first process, from bubblewrap's
        --info-fd report."""
        if self._inner is not None or self.info_fd is None:
            return self._inner
        try:
            while select.select([self.info_fd], [], [], 0)[0]:
                chunk = os.read(self.info_fd, 4096)
                if not chunk:
                    break
                self._info += chunk
            self._inner = int(json.loads(self._info)["child-pid"])
        except (ValueError, KeyError, TypeError, OSError):
            return None  # not all written yet: what was read is kept for the next look
        return self._inner

    def _worker_process(self) -> int | None:
        """The pid of the worker's Python process: bubblewrap's first process in the namespace
        starts it; without bubblewrap it is the process itself."""
        if self._worker_pid is None:
            inner = self._inner_pid() if self.info_fd is not None else None
            self._worker_pid = self.process.pid if self.info_fd is None else _child_of(inner)
        return self._worker_pid

    def _waited_for_cpu(self) -> float:
        """Seconds the worker, and this grading thread, have spent runnable but waiting for a CPU (the
        kernel's schedstat): a busy machine that keeps the grader from reading an answer the worker
        has written slows the call down as much as one that keeps the worker from writing it."""
        pid = self._worker_process()
        return (_waited("thread-self") + _waited(str(pid))) if pid is not None else 0.0

    def _death(self, when: str) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return f"the worker stopped responding {when}"
        if code > 128:  # bubblewrap reports a command killed by signal N as 128 + N
            code = -(code - 128)
        return describe_end(code, when)


def _waited(process: str) -> float:
    """Seconds ``/proc/<process>`` has spent runnable but waiting for a CPU; 0 where it cannot be read."""
    try:
        with open(f"/proc/{process}/schedstat", "rb") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def describe_end(code: int, when: str) -> str:
    """How a worker ended, from its exit code (negative: the signal that killed it)."""
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        reason = " (out of memory or CPU time)" if name in {"SIGKILL", "SIGXCPU", "SIGSEGV"} else ""
        return f"the worker was killed by {name}{reason} {when}"
    return f"the worker exited with status {code} {when}"


def close_all(*fds: int | None) -> None:
    """Close descriptors that may be closed already (or never opened: None)."""
    for fd in fds:
        if fd is None:
            continue
        try:
            os.close(fd)
        except OSError:
            pass


def kill_session(process: subprocess.Popen) -> None:
    """Kill a process started in a session of its own, with its session's group, and collect it."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _wait_readable(fd: int, clock: CallClock) -> None:
    """Until ``fd`` has bytes to read (or is closed); TimeoutError once the call's time is spent."""
    while True:
        left = clock.remaining()
        if left > 0 and select.select([fd], [], [], left)[0]:
            return
        if clock.remaining() <= 0:
            raise TimeoutError


def _child_of(parent: int | None) -> int | None:
    if parent is None:
        return None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent:
            return int(entry.name)
    return None


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def reap(pid: int, seconds: float = 2.0) -> None:
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


def reap_sandbox_orphans() -> None:
    """Collect our dead children that lived in a sandbox's PID namespace (their NSpid is deeper than
    ours). Only those: another child of ours (a pool's process, say) is left to whoever started it."""
    own_depth = _namespace_depth("self")
    me = os.getpid()
    for pid in _children_of_self():
        try:
            with open(f"/proc/{pid}/status", "rb") as handle:
                status = handle.read()
        except OSError:
            continue
        fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
        if (
            fields.get(b"PPid", b"").strip() == str(me).encode()
            and fields.get(b"State", b"").strip().startswith(b"Z")
            and len(fields.get(b"NSpid", b"").split()) > own_depth
        ):
            try:
                os.waitpid(int(pid), os.WNOHANG)
            except ChildProcessError:
                pass


def _children_of_self() -> list[str]:
    """Our children's pids (zombies included, until collected), from the kernel's list of each of
    our threads' children; every pid in /proc where the kernel keeps no such list. (Read after
    every submission: a scan of /proc costs as much as the machine has processes.)"""
    pids: list[str] = []
    try:
        for task in os.scandir("/proc/self/task"):
            with open(f"/proc/self/task/{task.name}/children", "rb") as handle:
                pids += handle.read().decode().split()
    except OSError:
        return [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    return pids


def _namespace_depth(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"NSpid:"):
                    return len(line.split()) - 1
    except OSError:
        pass
    return 1


def _descendants() -> list[int]:
    """Every process below this one (children, theirs, and so on), from the kernel's lists of children."""
    found: list[int] = []
    parents = ["self"]
    while parents:
        parent = parents.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", "rb") as handle:
                    children = [int(pid) for pid in handle.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            parents += [str(pid) for pid in children]
    return found


def _owned_by(user: int) -> list[int]:
    """The pids of every process (zombies included) whose real uid is ``user``."""
    owned = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as handle:
                uid = next(line for line in handle if line.startswith(b"Uid:")).split()[1]
        except (OSError, StopIteration, IndexError):
            continue
        if int(uid) == user:
            owned.append(int(entry.name))
    return owned


def _kill_everything_of(user: int) -> None:
    """SIGKILL every process ``user`` owns, at once: a child that becomes ``user`` and calls kill(-1),
    which the kernel sends to all of that user's processes together, so that none forks away meanwhile."""
    pid = os.fork()
    if pid == 0:  # only system calls between fork and _exit
        try:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def end_everything_started(user: int | None = None, seconds: float = 10.0) -> bool:
    """Kill and collect whatever the student's code left running, wherever it went: every process below
    this one (orphans come here, as this process is a subreaper: ``become_subreaper``, before the
    student's code starts), a new session or process group of its own included, and, with ``user`` (the
    uid it ran as), every process that user owns. Waits until none is left; False if some still are
    after ``seconds``. For a grader that grades one submission and exits (Gradescope's run)."""
    deadline = time.monotonic() + seconds
    while True:
        if user is not None:
            _kill_everything_of(user)
        below = _descendants()
        for pid in below:
            _signal(pid, signal.SIGKILL)
        while True:  # collect the dead: ours, and the orphans that came to us
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not done:
                break
        if not below and (user is None or not _owned_by(user)):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def kill_groups_of(pid: int) -> None:
    """Kill what is left of the sandboxes that grading process ``pid`` started (it was killed before
    it could), and remove their control groups."""
    for group in groups_of(pid):
        for _ in range(100):
            group.kill()
            reap_sandbox_orphans()
            if group.remove():
                break
            time.sleep(0.01)


def _prctl(option: int, value: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def become_subreaper() -> None:
    """Orphaned descendants (the sandbox's first process, once bubblewrap exits) become our
    children rather than init's, so we can reap them."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _child_setup(limits: Limits | None, group: CpuGroup | None, user: int | None) -> Callable[[], None]:
    """What the child does between fork and exec: join its CPU group (as root, before giving root
    up), die with the grading process that started it, take its limits (no core files at least),
    then become ``user``."""

    def setup() -> None:
        if group is not None:
            group.join(os.getpid())
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if limits is not None:
            limits.apply()
        else:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)

    return setup


def launch(
    argv: Sequence[str],
    limits: Limits | None,
    environment: dict[str, str],
    pass_fds: Sequence[int],
    output_fd: int,
    user: int | None = None,
    group: CpuGroup | None = None,
) -> subprocess.Popen:
    """Start ``argv`` in a session of its own, stdout and stderr into ``output_fd``, passing it
    ``pass_fds``, with ``limits`` set between fork and exec."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=output_fd,
        stderr=output_fd,
        pass_fds=tuple(pass_fds),
        env=environment,
        cwd="/",
        start_new_session=True,
        preexec_fn=_child_setup(limits, group, user),  # limits must be set between fork and exec
    )


def spawn(
    argv: Sequence[str],
    limits: Limits,
    environment: dict[str, str],
    extra_fds: Sequence[int] = (),
    user: int | None = None,
    info_fd: int | None = None,
    group: CpuGroup | None = None,
) -> WorkerProcess:
    """Start ``argv`` with the worker's two pipes (their fd numbers fill argv's ``{request}`` and
    ``{response}`` placeholders), stdout and stderr into an anonymous in-memory file (nothing is
    left on disk), and ``limits`` set between fork and exec."""
    request_read, request_write = os.pipe()
    response_read, response_write = os.pipe()
    output_fd = os.memfd_create("worker-output", os.MFD_CLOEXEC)
    argv = [part.format(request=request_read, response=response_write) for part in argv]

    try:
        process = launch(argv, limits, environment, (request_read, response_write, *extra_fds), output_fd, user, group)
    except BaseException:
        for fd in (request_write, response_read, output_fd):
            os.close(fd)
        if group is not None:
            group.remove()
        raise
    finally:
        for fd in (request_read, response_write):
            os.close(fd)
    return WorkerProcess(process, request_write, response_read, output_fd, info_fd, group)


def memory_file(name: str, data: bytes) -> int:
    """An anonymous in-memory file holding ``data``, positioned at its start (for bubblewrap's
    ``--seccomp FD``): nothing is written to disk."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
