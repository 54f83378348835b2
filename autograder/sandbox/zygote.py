"""The zygote: one pre-imported Python per grading process, inside the bubblewrap sandbox, that forks
a fresh sandbox for each submission.

Like ``worker.py`` it is copied into the runtime and started there as a script; it imports nothing
of the grader, only the standard library, the worker and the runtime's packages (numpy, and
matplotlib with the Agg backend), so a submission starts with them imported instead of paying 0.4 s
or more of imports (the pattern of Chromium's and Android's zygotes).

It never holds anything a submission must not see: no hidden tests, no references, no secrets, no
other submission. It only receives, over its control socket, "fork" requests carrying a
submission's limits and four file descriptors (the request pipe, the response pipe, the output
file, and a socket to report on). For each it forks:

    zygote -> first child: unshare new user, mount, PID, network, IPC and UTS namespaces; exit
           -> init (PID 1 of the new PID namespace): a fresh tmpfs on /tmp and /dev/shm, a new
              /proc, reports its pid (with SCM_CREDENTIALS, so the grader sees it in its own
              namespace) and reaps; when the worker ends it reports the exit status and exits, and
              the kernel kills whatever else is left in the namespace
           -> worker: rlimits, every other descriptor closed, no capabilities, no_new_privs, the
              seccomp filter, random generators reseeded, then the worker's loop reads the submission

The zygote answers a request only once the worker is ready (or says what failed), so the grader
never sends a submission to a half-built sandbox. ``unshare(CLONE_NEWUSER)`` needs a process with a
single thread: the zygote starts none (OPENBLAS_NUM_THREADS=1 is set before numpy is imported), and
the first child, which unshares the PID namespace, forks instead of starting threads.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAP_AMBIENT = 4, 24, 38, 22, 47
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER = 4, 2
CAPABILITY_VERSION_3 = 0x20080522
LAST_CAPABILITY = 63
WORKER_REQUEST_FD, WORKER_RESPONSE_FD, FAILURE_FD = 3, 4, 5
WORKER_MODULE = "main"  # worker.py as the runtime holds it (runtime.WORKER_SCRIPT)
# What submissions import anyway; numpy.random so that its generator is made, and reseeded, here.
PRELOAD = ("random", "numpy", "numpy.random", "matplotlib.pyplot")

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    _check(
        libc.mount(
            source.encode(), target.encode(), kind.encode() if kind else None, flags, data.encode() if data else None
        ),
        f"mount {target}",
    )


# --- the zygote ----------------------------------------------------------------------------------


def preload() -> list[str]:
    """Import what every submission would import anyway; what is missing is simply not preloaded."""
    loaded = []
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # a runtime without matplotlib preloads numpy only
            continue
        loaded.append(name)
    return loaded


def serve(control: socket.socket, program: bytes) -> int:
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 1 << 16, 8)
        except OSError:
            return 0
        if not message:
            return 0  # the grader closed the socket: its grading process is done
        try:
            reply = fork_sandbox(json.loads(message), fds, program, control)
        except Exception as exc:  # the grader is told, and falls back
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        control.send(json.dumps(reply).encode())


def fork_sandbox(request: dict, fds: list[int], program: bytes, control: socket.socket) -> dict:
    if len(fds) != 4:
        return {"ok": False, "error": f"expected 4 descriptors, got {len(fds)}"}
    failure_read, failure_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(failure_read)
        os.close(control.fileno())
        _child_step(lambda: first_child(request, fds, program, failure_write), failure_write)
    os.close(failure_write)
    # Every process of the new sandbox holds the pipe's write end until its setup is done: end of
    # file means the worker is ready; anything written says what failed.
    failure = b""
    while chunk := os.read(failure_read, 4096):
        failure += chunk
    os.close(failure_read)
    _, status = os.waitpid(pid, 0)
    if failure or status != 0:
        text = failure.decode(errors="replace") or f"the first child ended with status {status}"
        return {"ok": False, "error": text[:500]}
    return {"ok": True}


def _child_step(step, failure_write: int) -> None:
    """Run one forked process's part; it never returns to the zygote's loop."""
    try:
        step()
    except BaseException as exc:  # reported to the zygote, which tells the grader
        try:
            os.write(failure_write, f"{type(exc).__name__}: {exc}".encode()[:500])
        finally:
            os._exit(1)
    os._exit(0)


# --- the sandbox's processes ------------------------------------------------------------------------


def first_child(request: dict, fds: list[int], program: bytes, failure_write: int) -> None:
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(NAMESPACES), "unshare")
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    for name, number in (("uid_map", uid), ("gid_map", gid)):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(f"{number} {number} 1")
    if os.fork() == 0:
        _child_step(lambda: init(request, fds, program, failure_write), failure_write)
    # Its child is PID 1 of the new namespace and goes on without it (bubblewrap's init reaps it).


def init(request: dict, fds: list[int], program: bytes, failure_write: int) -> None:
    """PID 1 of the submission's PID namespace: mounts its fresh places, starts the worker, reaps."""
    size = f"size={int(request['tmp_bytes'])},mode=1777"
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, size)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # sees this namespace only
    _mount("/proc/sys", "/proc/sys", None, MS_BIND)
    _mount("none", "/proc/sys", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir("/tmp")
    _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl")  # its descriptors are not the worker's to read
    report = socket.socket(fileno=fds[3])
    report.send(b"init")  # the kernel attaches this process's pid, as the grader sees it
    worker_pid = os.fork()
    if worker_pid == 0:
        _child_step(lambda: worker(request, fds, program, failure_write, report), failure_write)
    os.close(failure_write)
    for fd in fds[:3]:
        os.close(fd)
    while True:
        pid, status = os.wait()
        if pid == worker_pid:
            report.send(f"exit {status}".encode())
            os._exit(0)


def worker(request: dict, fds: list[int], program: bytes, failure_write: int, report: socket.socket) -> None:
    """The process that runs the submission, set up before it reads a byte of it."""
    import fcntl
    import resource

    report.send(b"worker")
    report.close()
    # Lifted above the low numbers first, so that placing one never overwrites another.
    request_fd, response_fd, output_fd, failure_write = (
        fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in (fds[0], fds[1], fds[2], failure_write)
    )
    for fd, target in (
        (output_fd, 1),
        (output_fd, 2),
        (request_fd, WORKER_REQUEST_FD),
        (response_fd, WORKER_RESPONSE_FD),
        (failure_write, FAILURE_FD),
    ):
        os.dup2(fd, target)
    os.closerange(FAILURE_FD + 1, 1 << 16)
    try:
        for name, value in request["rlimits"]:
            resource.setrlimit(getattr(resource, name), (value, value))
        _drop_capabilities()
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        buffer = ctypes.create_string_buffer(program, len(program))
        fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
        _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")
        _reseed()
    except BaseException as exc:  # reported to the zygote, which tells the grader
        os.write(FAILURE_FD, f"{type(exc).__name__}: {exc}".encode()[:500])
        os._exit(1)
    os.close(FAILURE_FD)  # ready: the zygote answers the grader
    sandbox_worker = sys.modules[WORKER_MODULE]
    # What a worker started on its own sees: a submission cannot tell (nor needs to) that it was forked.
    # (serve makes the submission's own ``__main__``.)
    sys.argv = [str(sandbox_worker.__file__), str(WORKER_REQUEST_FD), str(WORKER_RESPONSE_FD)]
    del sys.modules[WORKER_MODULE]
    os._exit(sandbox_worker.serve(WORKER_REQUEST_FD, WORKER_RESPONSE_FD))


def _drop_capabilities() -> None:
    """The worker keeps none of the capabilities its new user namespace gave the sandbox."""
    for capability in range(LAST_CAPABILITY + 1):
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)  # fails past the kernel's last: fine
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = CapHeader(CAPABILITY_VERSION_3, 0), (CapData * 2)()
    _check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _reseed() -> None:
    """A child is a copy of the zygote: without this every submission would draw numpy's same numbers
    (Python's own ``random`` reseeds itself after a fork)."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    with os.fdopen(int(argv[2]), "rb") as handle:
        program = handle.read()
    # The worker sits beside this script in the runtime (runtime.WORKER_SCRIPT); the runtime's folder is
    # on the path only while it is imported, so a submission's path is an ordinary Python's.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    try:
        sandbox_worker = __import__(WORKER_MODULE)
    finally:
        sys.path.remove(here)
    sandbox_worker.prepare()
    loaded = preload()
    control.send(json.dumps({"ready": True, "preloaded": loaded}).encode())
    return serve(control, program)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
