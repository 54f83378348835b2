"""How a worker is started: inside bubblewrap (the default), or plainly (``--unsafe-no-sandbox``).

Both start the same worker script with the same limits; only the bubblewrap runner hides the
filesystem, the network and other processes, and runs as an unprivileged user.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
import threading
from functools import cache
from typing import Protocol

from ..environment import read
from ..errors import SandboxUnavailable
from . import worker
from .cgroups import new_group
from .forking import Zygote, ZygoteUnavailable
from .limits import Limits
from .process import WorkerProcess, become_subreaper, memory_file, spawn
from .runtime import RUNTIME_MOUNT, SANDBOX_PACKAGES, WORKER_SCRIPT, ZYGOTE_SCRIPT, ensure_runtime, missing_packages

# Unprivileged uids for workers when the grader runs as root: one per grading process, so that
# each worker's process limit is its own.
SANDBOX_UID_BASE = 61000
SANDBOX_UID_SPAN = 4000
# Uids for student code run without the sandbox (Gradescope's containers), apart from the sandbox's: every
# process such a uid owns is killed after the submission (process.end_everything_started).
UNSANDBOXED_UID_BASE = 65000
UNSANDBOXED_UID_SPAN = 500

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
# Namespaces a submission may not make (bubblewrap's --disable-userns does the same for the user
# namespace where there is no zygote; the zygote's sandboxes need the filter).
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
ZYGOTE_SWITCH = "GRADEWRIGHT_ZYGOTE"  # "off": a sandbox started for each submission, as before the zygote
# The sandbox's host name: what a machine shows that was never given one (a fresh VM or container), so
# a submission that asks learns nothing of where it runs, nor that it is being graded.
SANDBOX_HOSTNAME = "localhost"
logger = logging.getLogger("autograder.sandbox")


class Runner(Protocol):
    name: str

    def start(self, limits: Limits) -> WorkerProcess: ...

    def mode(self) -> str: ...

    def prestart(self, limits: Limits) -> None: ...


def worker_environment() -> dict[str, str]:
    """The worker's whole environment: what a numerical script run headless would have, and no name
    of the grader's (a submission reads it; the runtime's places are found from the script's own)."""
    return {
        "PATH": "/usr/bin:/bin",
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
    of /usr with the runtime as its /usr/local, and a small tmpfs; a seccomp filter; no capabilities;
    an unprivileged uid when the grader is root.

    By default one sandbox per grading process holds the zygote, which forks each submission a
    sandbox of its own inside it (fresh namespaces, /tmp, /dev/shm and /proc, its limits, the same
    seccomp filter): numpy and matplotlib are then imported once, not once per submission. Where
    the zygote cannot start, each submission gets a bubblewrap sandbox started for it, and the log
    says why."""

    name = "bubblewrap"

    def __init__(self, packages: tuple[str, ...] = SANDBOX_PACKAGES, zygote: bool = True) -> None:
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.runtime = ensure_runtime(packages)
        self.seccomp = seccomp_program()
        self.reaping_pid = 0
        self.use_zygote = zygote
        self.zygote: Zygote | None = None
        self.zygote_refused: str | None = None if zygote else f"{ZYGOTE_SWITCH}=off"
        self.lock = threading.Lock()  # grading threads of one process (Dask's) share the zygote
        self.closing_at_exit = 0  # the pid whose exit ends the zygote

    def start(self, limits: Limits) -> WorkerProcess:
        if self.reaping_pid != os.getpid():  # the flag is not inherited by a forked pool worker
            become_subreaper()
            self.reaping_pid = os.getpid()
        if self.use_zygote:
            with self.lock:
                forked = self._fork(limits)
            if forked is not None:
                return forked
        return self._start_alone(limits)

    def mode(self) -> str:
        """How submissions are sandboxed here, in words (for ``autograder doctor``)."""
        with self.lock:
            if self.use_zygote and self.zygote_refused is None:
                self._zygote()
        if self.zygote_refused is None:
            return "a pre-imported zygote forks each submission a sandbox of its own"
        return f"a sandbox started for each submission (no zygote: {self.zygote_refused})"

    def _fork(self, limits: Limits) -> WorkerProcess | None:
        zygote = self._zygote()
        if zygote is None:
            return None
        try:
            return zygote.fork(limits)
        except ZygoteUnavailable as exc:
            answered = zygote.alive()  # it answered, refusing: it would refuse the next one too
            zygote.close()
            self.zygote = None
            if answered:
                self._refuse(str(exc))
            else:
                logger.warning("the zygote ended (%s); this submission gets a sandbox of its own", exc)
            return None

    def prestart(self, limits: Limits) -> None:
        """Launch this process's zygote now, without waiting for its imports (about half a second),
        so that they overlap the grader's own start, and ask it for a first sandbox with ``limits``
        (the first submission's): the first submission waits for what is left."""
        with self.lock:
            if self.use_zygote and self.zygote_refused is None and not self._owns_zygote():
                self._launch()
                if self.zygote is not None:
                    self.zygote.ask_ahead(limits)

    def _owns_zygote(self) -> bool:
        return self.zygote is not None and self.zygote.owner == os.getpid()

    def _zygote(self) -> Zygote | None:
        if self.zygote_refused is not None:
            return None
        if self._owns_zygote() and self.zygote is not None and not self.zygote.pending:
            if self.zygote.alive():
                return self.zygote
            self.zygote.close()
            self.zygote = None
        if not self._owns_zygote():
            self.zygote = None  # a forked process leaves its parent's zygote alone
            self._launch()
        if self.zygote is None:
            return None
        try:
            self.zygote.wait_ready()
        except ZygoteUnavailable as exc:
            self.zygote = None
            self._refuse(f"it could not start: {exc}")
            return None
        return self.zygote

    def _launch(self) -> None:
        seccomp_fd = memory_file("seccomp", self.seccomp)
        info_read, info_write = os.pipe()
        try:
            argv = [
                *self._bwrap_argv(Limits(), zygote=True, info_fd=info_write),
                f"{RUNTIME_MOUNT}/bin/python3",
                "-I",
                "-B",
                f"{RUNTIME_MOUNT}/{ZYGOTE_SCRIPT}",
            ]
            self.zygote = Zygote.launch(argv, seccomp_fd, (info_read, info_write), self._user(), new_group())
        except ZygoteUnavailable as exc:
            self._refuse(f"it could not start: {exc}")
            return
        finally:
            for fd in (seccomp_fd, info_write):
                os.close(fd)
        if self.closing_at_exit != os.getpid():
            # Ended with the process, so that nothing of it outlives it: at exit, and in a pool's
            # process (which leaves through multiprocessing's finalizers, not atexit).
            from multiprocessing import util

            atexit.register(self.close)
            util.Finalize(self, self.close, exitpriority=100)
            self.closing_at_exit = os.getpid()

    def close(self) -> None:
        """End this process's zygote (a forked process's copy of the runner leaves its parent's alone)."""
        with self.lock:
            if self.zygote is not None and self.zygote.owner == os.getpid():
                self.zygote.close()
            self.zygote = None

    def _refuse(self, why: str) -> None:
        self.zygote_refused = why
        logger.warning(
            "the sandbox's zygote is not used (%s): each submission gets a sandbox started for it, about 0.4 s slower",
            why,
        )

    def _bwrap_argv(self, limits: Limits, zygote: bool, seccomp_fd: int | None = None, info_fd: int | None = None):
        """bubblewrap's command line up to the command. The zygote's sandbox has no seccomp filter and
        may make namespaces: it runs only the zygote, whose children take the filter themselves."""
        writable = str(limits.tmp_mib * 1024 * 1024)
        runtime = RUNTIME_MOUNT
        argv = [
            self.bwrap,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--hostname",
            SANDBOX_HOSTNAME,
            # The runtime in place of the machine's own /usr/local, which the sandbox never sees.
            "--ro-bind",
            "/usr",
            "/usr",
            "--ro-bind",
            str(self.runtime),
            runtime,
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--symlink",
            "usr/bin",
            "/bin",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            # The only writable places, each of a bounded size: /tmp and /dev/shm; /dev itself is read-only.
            "--size",
            writable,
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
            "--size",
            writable,
            "--tmpfs",
            "/tmp",
            "--chdir",
            "/tmp",
            "--remount-ro",
            "/",
            "--clearenv",
        ]
        if not zygote:
            # The worker is its namespace's first process and its own init (worker.py's _reap_as_init):
            # bubblewrap's init would show the submission bubblewrap's whole command line as process 1.
            # The zygote keeps bubblewrap's, which reaps the first children of the sandboxes it forks.
            argv += ["--disable-userns", "--seccomp", str(seccomp_fd), "--as-pid-1"]
        argv += ["--info-fd", str(info_fd)]
        environment = worker_environment()
        environment["LD_LIBRARY_PATH"] = f"{runtime}/lib"
        for key, value in environment.items():
            argv += ["--setenv", key, value]
        return [*argv, "--"]

    @staticmethod
    def _user() -> int | None:
        return unprivileged_user()

    def _start_alone(self, limits: Limits) -> WorkerProcess:
        seccomp_fd = memory_file("seccomp", self.seccomp)
        info_read, info_write = os.pipe()
        argv = [
            *self._bwrap_argv(limits, False, seccomp_fd, info_write),
            f"{RUNTIME_MOUNT}/bin/python3",
            "-I",
            "-B",
            f"{RUNTIME_MOUNT}/{WORKER_SCRIPT}",
            "{request}",
            "{response}",
        ]
        try:
            return spawn(
                argv,
                limits,
                {"PATH": "/usr/bin:/bin"},
                extra_fds=(seccomp_fd, info_write),
                user=self._user(),
                info_fd=info_read,
                group=new_group(),
            )
        except BaseException:
            os.close(info_read)
            raise
        finally:
            os.close(seccomp_fd)
            os.close(info_write)


class UnsafeRunner:
    """The worker as a plain child process with resource limits only: for machines where the
    sandbox cannot start, and only when the instructor asks for it by name (or Gradescope's
    container, where bubblewrap cannot start). With ``user`` (a grader running as root), the worker
    runs as that unprivileged uid, from the sandbox's runtime, which any user can read. With
    ``contained`` (a grader that grades one submission and exits: Gradescope's run), the grader becomes
    a subreaper first, so that whatever the worker leaves running comes back to it, to be ended by
    process.end_everything_started (a long-running grader would gather its zombies instead)."""

    name = "unsafe-no-sandbox"

    def __init__(
        self, user: int | None = None, packages: tuple[str, ...] = SANDBOX_PACKAGES, contained: bool = False
    ) -> None:
        self.user = user
        self.packages = packages
        self.contained = contained
        self.folder: str | None = None

    def mode(self) -> str:
        if self.user is not None:
            return f"a plain process for each submission, without isolation, as uid {self.user}"
        return "a plain process for each submission, without isolation"

    def prestart(self, limits: Limits) -> None:
        pass  # nothing to start ahead

    def start(self, limits: Limits) -> WorkerProcess:
        if self.contained:
            become_subreaper()
        environment = worker_environment()
        if self.user is None:
            argv = [sys.executable, "-I", "-B", worker.__file__, "{request}", "{response}"]
            environment["MPLCONFIGDIR"] = tempfile.gettempdir()
            return spawn(argv, limits, environment)
        runtime = ensure_runtime(self.packages)
        argv = [f"{runtime}/bin/python3", "-I", "-B", f"{runtime}/{WORKER_SCRIPT}", "{request}", "{response}"]
        environment["LD_LIBRARY_PATH"] = f"{runtime}/lib"
        environment["MPLCONFIGDIR"] = environment["HOME"] = self._own_folder(self.user)
        return spawn(argv, limits, environment, user=self.user)

    def _own_folder(self, user: int) -> str:
        """A folder of the student's uid alone (matplotlib's cache, its home): the machine's /tmp is shared."""
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="gradewright-unsandboxed-")
            os.chown(self.folder, user, user)
            atexit.register(shutil.rmtree, self.folder, ignore_errors=True)
        return self.folder


def unprivileged_user(base: int = SANDBOX_UID_BASE, span: int = SANDBOX_UID_SPAN) -> int | None:
    """The uid student code runs as when the grader is root: one per grading process, from ``base``
    (the sandbox's uids, or another range: ``UNSANDBOXED_UID_BASE``); None where the grader is not
    root and cannot change its user."""
    return base + os.getpid() % span if os.geteuid() == 0 else None


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
    return _bubblewrap_runner(packages, read(ZYGOTE_SWITCH) != "off")


@cache
def _bubblewrap_runner(packages: tuple[str, ...], zygote: bool) -> BubblewrapRunner:
    """One runner per course's packages in a grading process, so its zygote serves every submission."""
    return BubblewrapRunner(packages, zygote)


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
    for flag in CLONE_NAMESPACE_FLAGS:
        program.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory, where a filter cannot look: refused as unknown, which makes
    # the C library fall back to clone (what container runtimes do).
    program.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    fd = os.memfd_create("seccomp-build")
    with os.fdopen(fd, "w+b") as file:
        program.export_bpf(file)
        file.seek(0)
        return file.read()


@cache
def _user_namespaces_work() -> bool:
    import subprocess

    # A user namespace alone: a PID namespace would leave its first process for init to reap.
    command = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-user",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--",
        "/usr/bin/true",
    ]
    user = SANDBOX_UID_BASE if os.geteuid() == 0 else None
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            timeout=20,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0
