"""How a worker is started: inside bubblewrap (the default), or plainly (``--unsafe-no-sandbox``).

Both start the same worker script with the same limits; only the bubblewrap runner hides the
filesystem, the network and other processes, and runs as an unprivileged user.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from functools import cache
from typing import Protocol

from ..errors import SandboxUnavailable
from . import worker
from .cgroups import new_group
from .process import Limits, WorkerProcess, become_subreaper, memory_file, spawn
from .runtime import RUNTIME_MOUNT, SANDBOX_PACKAGES, ensure_runtime, missing_packages

# Unprivileged uids for workers when the grader runs as root: one per grading process, so that
# each worker's process limit is its own.
SANDBOX_UID_BASE = 61000
SANDBOX_UID_SPAN = 4000

# System calls a numerical submission has no use for, and that an escape would want.
DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "reboot",
    "swapon",
    "swapoff",
    "io_uring_setup",
    "open_by_handle_at",
    "name_to_handle_at",
    "acct",
    "settimeofday",
    "clock_settime",
)
AF_UNIX = 1


class Runner(Protocol):
    name: str

    def start(self, limits: Limits) -> WorkerProcess: ...


def worker_environment(site: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "WORKER_SITE": site,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "HOME": "/tmp",
    }


class BubblewrapRunner:
    """Workers in bubblewrap: new user, PID, network, IPC, UTS and cgroup namespaces; a filesystem
    of the runtime, /usr (without /usr/local) and a small tmpfs; a seccomp filter; no capabilities;
    an unprivileged uid when the grader is root."""

    name = "bubblewrap"

    def __init__(self, packages: tuple[str, ...] = SANDBOX_PACKAGES) -> None:
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.runtime = ensure_runtime(packages)
        self.seccomp = seccomp_program()
        self.reaping_pid = 0

    def start(self, limits: Limits) -> WorkerProcess:
        if self.reaping_pid != os.getpid():  # the flag is not inherited by a forked pool worker
            become_subreaper()
            self.reaping_pid = os.getpid()
        seccomp_fd = memory_file("seccomp", self.seccomp)
        info_read, info_write = os.pipe()
        writable = str(limits.tmp_mib * 1024 * 1024)
        runtime = RUNTIME_MOUNT
        argv = [
            self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox",
            "--ro-bind", str(self.runtime), runtime,
            "--ro-bind", "/usr", "/usr", "--tmpfs", "/usr/local", "--remount-ro", "/usr/local",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
            "--proc", "/proc", "--dev", "/dev",
            # The only writable places, each of a bounded size: /tmp and /dev/shm; /dev itself is read-only.
            "--size", writable, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            "--size", writable, "--tmpfs", "/tmp", "--chdir", "/tmp",
            "--remount-ro", "/", "--seccomp", str(seccomp_fd), "--info-fd", str(info_write), "--clearenv",
        ]  # fmt: skip
        environment = worker_environment(f"{runtime}/site")
        environment["LD_LIBRARY_PATH"] = f"{runtime}/lib"
        environment["WORKER_MPL_CACHE"] = f"{runtime}/mplconfig"
        for key, value in environment.items():
            argv += ["--setenv", key, value]
        argv += ["--", f"{runtime}/bin/python3", "-I", "-B", f"{runtime}/worker.py", "{request}", "{response}"]
        user = SANDBOX_UID_BASE + os.getpid() % SANDBOX_UID_SPAN if os.geteuid() == 0 else None
        try:
            return spawn(argv, limits, {"PATH": "/usr/bin:/bin"}, extra_fds=(seccomp_fd, info_write), user=user,
                         info_fd=info_read, group=new_group())  # fmt: skip
        except BaseException:
            os.close(info_read)
            raise
        finally:
            os.close(seccomp_fd)
            os.close(info_write)


class UnsafeRunner:
    """The worker as a plain child process with resource limits only: for machines where the
    sandbox cannot start, and only when the instructor asks for it by name."""

    name = "unsafe-no-sandbox"

    def start(self, limits: Limits) -> WorkerProcess:
        argv = [sys.executable, "-I", "-B", worker.__file__, "{request}", "{response}"]
        environment = worker_environment("")
        environment["MPLCONFIGDIR"] = tempfile.gettempdir()
        return spawn(argv, limits, environment)


def missing_for_sandbox() -> list[str]:
    """What this machine lacks for the sandbox, in words; empty when it can start."""
    missing = []
    if shutil.which("bwrap") is None:
        missing.append("bubblewrap (the bwrap command; Debian package 'bubblewrap')")
    try:
        seccomp_program()
    except SandboxUnavailable as exc:
        missing.append(str(exc))
    if not missing and not _user_namespaces_work():
        missing.append("user namespaces for an unprivileged user (bwrap could not start one)")
    return missing


def make_runner(unsafe: bool = False, packages: tuple[str, ...] = SANDBOX_PACKAGES) -> Runner:
    """The runner for a course whose submissions may import ``packages`` (numpy always)."""
    absent = missing_packages(packages)
    if absent:
        raise SandboxUnavailable(
            f"the course's sandbox packages are not installed here: {', '.join(absent)} "
            f"(pip install {' '.join(absent)}, or change [sandbox] packages in course.toml)"
        )
    if unsafe:
        return UnsafeRunner()
    missing = missing_for_sandbox()
    if missing:
        raise SandboxUnavailable(
            "cannot start the sandbox: missing " + "; ".join(missing) + ". Install it, or pass "
            "--unsafe-no-sandbox to run student code without isolation"
        )
    return BubblewrapRunner(packages)


@cache
def seccomp_program() -> bytes:
    """A compiled seccomp filter (BPF) that bubblewrap loads: denied calls fail with EPERM, and
    sockets other than local ones fail with EACCES. Kept in memory: no file is left behind."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:
        raise SandboxUnavailable(f"seccomp support (the pyseccomp package and libseccomp: {exc})") from None
    import errno

    program = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            program.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            continue  # not a system call on this architecture
    program.add_rule(seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.NE, AF_UNIX))
    fd = os.memfd_create("seccomp-build")
    with os.fdopen(fd, "w+b") as file:
        program.export_bpf(file)
        file.seek(0)
        return file.read()


@cache
def _user_namespaces_work() -> bool:
    import subprocess

    # A user namespace alone: a PID namespace would leave its first process for init to reap.
    command = [shutil.which("bwrap") or "bwrap", "--unshare-user", "--ro-bind", "/usr", "/usr",
               "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
               "--", "/usr/bin/true"]  # fmt: skip
    user = SANDBOX_UID_BASE if os.geteuid() == 0 else None
    try:
        completed = subprocess.run(
            command, capture_output=True, timeout=20, user=user, group=user,
            extra_groups=[] if user is not None else None, cwd="/",
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0
