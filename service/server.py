"""``autograder serve``: the site, its database brought up to date, a demo instructor on first
start, and N grading workers (``autograder worker``), until stopped."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.environment import read
from course.wording import plural
from untrusted.text import one_line

from .errors import ServiceSetupError
from .settings import MAX_UPLOAD_BYTES
from .setup import DEMO_INSTRUCTOR, prepare

if TYPE_CHECKING:
    from course.folder import CourseFolder

logger = logging.getLogger("gradewright.workers")

# Requests a site process answers at a time (waitress's threads; its own default). More threads do not
# add CPU (a process runs Python on one core at a time): on a busy machine they wait for Python's lock
# and hold database connections (measured: a class's synchronised exam start, docs/operators/scaling.md).
# Several processes on one machine: 2 threads each (`autograder serve --threads 2`).
THREADS = 4


def serve(
    course_root: Path,
    host: str,
    port: int,
    workers: int,
    database_url: str | None,
    say: Callable[[str], None] = print,
    demo: bool = False,
    threads: int = THREADS,
) -> None:
    """Serve until interrupted, answering ``threads`` requests at a time; the workers are stopped with
    the site. With ``demo``, the course's demo (service/demo.py), in a folder and gradebook of its own,
    instead of the course."""
    # Each line said as it is said, whoever reads it: a hub gives its services no PYTHONUNBUFFERED,
    # and a pipe's block buffer would hold the first start's lines until the site stopped.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)
    if demo:
        course_root = _open_demo(course_root, database_url, say)
    else:
        _prepare_course(course_root, database_url, say)
    from django.conf import settings

    server = _listen(host, port, Path(settings.GRADEWRIGHT_STATE), threads)
    kept = Workers(lambda: _start_worker(course_root, database_url), workers).start()
    at_once = plural(server.adj.threads, "request")  # what waitress was given, said as it took it
    say(
        f"serving {course_root} on http://{host}:{port}/ with {plural(workers, 'grading worker')}, {at_once} at a time; Ctrl-C stops"
    )
    try:
        server.run()
    finally:
        _forget_pid(Path(settings.GRADEWRIGHT_STATE))
        kept.stop()


class Workers:
    """The site's grading workers, each replaced when it ends while the site serves (a crash, a
    kill, a database that was away when it started): after ``FIRST`` seconds, doubled each time
    the slot's worker ended within ``STEADY`` seconds of its start, at most ``MOST`` (a worker
    that cannot start does not spin), back to ``FIRST`` once one ran ``STEADY`` seconds. Each end
    and each replacement is a warning in the log. Watched from a thread of its own; ``stop()``
    ends the watch, then the workers (SIGTERM, then SIGKILL after ``STOP_WITHIN`` seconds)."""

    FIRST, MOST, STEADY = 1.0, 60.0, 60.0
    EVERY = 0.5  # seconds between looks at the workers
    STOP_WITHIN = 10.0

    def __init__(self, start: Callable[[], subprocess.Popen], count: int):
        self.launch = start
        self.processes = [start() for _ in range(count)]
        now = time.monotonic()
        self.started_at = [now] * count
        self.delays = [0.0] * count  # the slot's last wait before a replacement
        self.due: list[float | None] = [None] * count  # when the slot's replacement starts
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="grading-workers", daemon=True)

    def start(self) -> Workers:
        if self.processes:
            self.thread.start()
        return self

    def _watch(self) -> None:
        while not self.stopping.wait(self.EVERY):
            self.look(time.monotonic())

    def look(self, now: float) -> None:
        """Note each worker that ended, and start each replacement that is due."""
        for slot, process in enumerate(self.processes):
            if process.poll() is None or self.stopping.is_set():
                continue
            due = self.due[slot]
            if due is None:
                ran = now - self.started_at[slot]
                last = self.delays[slot]
                self.delays[slot] = self.FIRST if ran >= self.STEADY or not last else min(self.MOST, 2 * last)
                self.due[slot] = now + self.delays[slot]
                logger.warning(
                    "grading worker %d (process %d) ended (exit code %s) after %.0f s; another starts in %g s",
                    slot + 1,
                    process.pid,
                    process.returncode,
                    ran,
                    self.delays[slot],
                )
            elif now >= due:
                try:
                    started = self.launch()
                except OSError as exc:  # no process to be had now (a full process table): the next wait
                    self.due[slot], self.started_at[slot] = None, now  # as a start that ended at once
                    logger.warning("grading worker %d could not be started again: %s", slot + 1, exc.strerror or exc)
                    continue
                self.processes[slot] = started
                self.started_at[slot], self.due[slot] = now, None
                logger.warning("grading worker %d started again (process %d)", slot + 1, started.pid)

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join()
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=self.STOP_WITHIN)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


PID_FILE = "serve.pid"  # in the state folder: this site's process, while it serves


def _listen(host: str, port: int, state: Path, threads: int = THREADS) -> Any:
    """waitress's server, bound to the port (not serving yet), and this process noted as the site's;
    a port in use is one line, which says so when the site's own earlier process holds it."""
    from waitress import create_server

    try:
        # waitress refuses a request body over the upload limit before the site reads any of it.
        server = create_server(
            application(),
            host=host,
            port=port,
            threads=threads,
            ident="gradewright",
            max_request_body_size=MAX_UPLOAD_BYTES + 1024 * 1024,
            **proxy_options(),
        )
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise ServiceSetupError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        raise ServiceSetupError(_port_in_use(host, port, state)) from None
    (state / PID_FILE).write_text(f"{os.getpid()} {host} {port}\n")
    return server


def _port_in_use(host: str, port: int, state: Path) -> str:
    """Who holds the port: this course's own earlier site (left running when whatever started it
    died: a hub, a terminal), said with how to stop it, or another program."""
    try:
        pid_text, _, held = (state / PID_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        pid, held = 0, ""
    if pid and held == str(port) and _is_our_site(pid):
        return (
            f"port {port} is held by this course's own earlier site (process {pid}), still running after what started "
            f"it stopped; stop it with `kill {pid}` and start again"
        )
    return f"port {port} on {host} is in use by another program; stop it, or serve on another port with --port"


def _is_our_site(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"autograder" in b" ".join(command) and b"serve" in command


def _forget_pid(state: Path) -> None:
    path = state / PID_FILE
    with contextlib.suppress(OSError, ValueError):
        if int(path.read_text().split()[0]) == os.getpid():
            path.unlink()


def _prepare_course(course_root: Path, database_url: str | None, say: Callable[[str], None]) -> None:
    from .settings import started_by_hub

    if started_by_hub():
        # Staff and students come from the hub (its groups say who is staff: service/accounts/hub.py);
        # demo accounts would be passwords nobody reads, on a site anyone on the hub reaches.
        prepare(course_root, database_url, demo=False)
        say(
            "started by JupyterHub: no demo accounts; the hub's users sign in through the hub, its groups say who is staff"
        )
        return
    made = prepare(course_root, database_url)
    for username, password in made.items():
        say(f"demo {'instructor' if username == DEMO_INSTRUCTOR else 'student'}: {username} / {password} (shown once)")
    if not made:
        from django.contrib.auth.models import User

        accounts = User.objects.count()
        say(
            f"{plural(accounts, 'account')} {'exists' if accounts == 1 else 'exist'} already: `autograder accounts list` lists them, "
            "`autograder accounts password USER` sets a new password"
        )


def _open_demo(course_root: Path, database_url: str | None, say: Callable[[str], None]) -> Path:
    """The demo course's folder, seeded or reused, with its sign-in details said (every start)."""
    from .demo import open_demo
    from .errors import ServiceSetupError

    if database_url:
        raise ServiceSetupError("--demo keeps its own gradebook in the demo's folder; leave out --database-url")
    demo = open_demo(course_root, say)
    say(
        f"demo course {'made' if demo.made else 'reused'} in {demo.root} (its own gradebook; delete the folder to "
        "start it afresh)"
    )
    roles: dict[str, list[tuple[str, str]]] = {}
    for role, username, password in demo.accounts:
        roles.setdefault(role, []).append((username, password))
    for role, accounts in roles.items():
        names = ", ".join(username for username, _ in accounts)
        say(f"demo {role}{'s' if len(accounts) > 1 else ''}: {names} / {accounts[0][1]}")
    return demo.root


def work(
    course: CourseFolder,
    database_url: str | None,
    once: bool = False,
    scheduler: str | None = None,
    unsafe_no_sandbox: bool = False,
    on_refused: Callable[[str], None] | None = None,
) -> int:
    """``autograder worker``: grade the queue's jobs, one at a time, until stopped (with ``once``:
    until the queue is empty), here or on the Dask cluster ``scheduler`` names (else
    ``$DASK_SCHEDULER_ADDRESS``). The number graded. A database that cannot be reached as it starts
    is one line (under ``serve``, the worker is started again a little later)."""
    from .core.outage import database_lost

    try:
        prepare(course.root, database_url, demo=False)  # the starting accounts are the site's to make and say
    except Exception as exc:
        if not database_lost(exc):
            raise
        raise ServiceSetupError(f"cannot reach the database ({one_line(str(exc))[:200]}); no job was taken") from None
    from autograder.batch import GradeOptions
    from autograder.cluster import GradingNeeds
    from autograder.distributed import executor_for

    from .handin.worker import run_worker
    from .settings import state_folder

    options = GradeOptions(jobs=1, unsafe_no_sandbox=unsafe_no_sandbox)
    needs = GradingNeeds.here(course.sandbox.packages, unsafe_no_sandbox, [course.root])
    with executor_for(scheduler, needs, on_refused) as executor:
        return run_worker(course, state_folder(course.root), options, once=once, executor=executor)


def application() -> Any:
    """The site's WSGI application; under a JupyterHub's proxy, its prefix taken off first."""
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application

    from .accounts.hub import StripPrefix

    prefix = getattr(settings, "FORCE_SCRIPT_NAME", None)
    return StripPrefix(get_wsgi_application(), prefix) if prefix else get_wsgi_application()


def proxy_options() -> dict[str, Any]:
    """waitress's options for the proxy in front of the site, ``$GRADEWRIGHT_TRUSTED_PROXY`` (its
    address). From that proxy only, waitress takes the client's address from X-Forwarded-For into
    REMOTE_ADDR (what sign-in throttling counts by) and keeps X-Forwarded-Proto (what
    GRADEWRIGHT_HTTPS reads); from anyone else, and when no proxy is named, it drops both, since
    anyone can write them."""
    proxy = read("GRADEWRIGHT_TRUSTED_PROXY").strip()
    if not proxy:
        return {}
    return {
        "trusted_proxy": proxy,
        "trusted_proxy_count": 1,
        "trusted_proxy_headers": "x-forwarded-for x-forwarded-proto",
    }


def _start_worker(course_root: Path, database_url: str | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "autograder", "--course", str(course_root), "worker"]
    if database_url:
        command += ["--database-url", database_url]
    return subprocess.Popen(command, env={**os.environ, "PYTHONUNBUFFERED": "1"})
