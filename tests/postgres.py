"""The PostgreSQL server the tests run on, when there is one: its address, the mark that skips a
test (saying why) where none runs, and a fresh database of a test's own, dropped afterwards; and a
private server of a test's or a benchmark's own (``private_server``), for what must never be done to
the machine's shared one, such as stopping it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

POSTGRES_URL = os.environ.get(
    "GRADEWRIGHT_TEST_POSTGRES", "postgresql://gradewright:gradewright@127.0.0.1:5432/postgres"
)


def _postgres_problem() -> str | None:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return None
    except Exception as exc:  # any failure means: no server to test on
        return f"no PostgreSQL server at {POSTGRES_URL} ({type(exc).__name__}); .ci/run starts one"


_NO_POSTGRES = _postgres_problem()
# .ci/run starts a server and sets GRADEWRIGHT_REQUIRE_POSTGRES: there, these tests never skip.
needs_postgres = pytest.mark.skipif(
    _NO_POSTGRES is not None and not os.environ.get("GRADEWRIGHT_REQUIRE_POSTGRES"), reason=_NO_POSTGRES or ""
)


def create_database(prefix: str = "gradewright_test", server: str = POSTGRES_URL) -> tuple[str, str]:
    """A new, empty database on the server: (its URL, its name)."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + "/" + name, name


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty PostgreSQL database's URL; dropped afterwards, with this process's connections to it."""
    url, name = create_database()
    try:
        yield url
    finally:
        drop_database(name)


def drop_database(name: str, server: str = POSTGRES_URL) -> None:
    """Drop a database made by `create_database`, closing this process's Django connections to it
    and ending the role's other sessions in it first.

    Not `WITH (FORCE)`: that also tries to end an autovacuum worker which happens to be in the
    database, and a role that is not superuser may not, so the drop failed now and then in CI
    (InsufficientPrivilege). A plain DROP asks autovacuum to leave and waits for it; it can still
    find a session that is just ending, hence the few tries."""
    import psycopg
    from django.conf import settings
    from django.db import connections
    from psycopg import errors

    if settings.configured:  # a benchmark drops its database without Django set up
        for alias in list(connections.settings):
            if connections.settings[alias].get("NAME") == name:
                connections[alias].close()
    with psycopg.connect(server, autocommit=True) as admin:
        for attempt in range(20):
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND usename = current_user AND pid <> pg_backend_pid()",
                (name,),
            )
            try:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
                return
            except errors.ObjectInUse:
                if attempt == 19:
                    raise
                time.sleep(0.25)


BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)  # the newest


class PrivateServer:
    """A PostgreSQL server in ``folder``, run as the ``postgres`` user when this is root (initdb
    refuses root), reached on 127.0.0.1:``port`` with no password (trust, its own socket folder)."""

    def __init__(self, folder: Path, port: int):
        self.data, self.port = folder / "data", port
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.run_as:
            shutil.chown(folder, "postgres")
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def _tool(self, *args: str) -> None:
        if BIN is None:
            raise RuntimeError("no PostgreSQL server programs in /usr/lib/postgresql")
        done = subprocess.run(
            [*self.run_as, str(BIN / args[0]), *args[1:]], capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]}: {done.stdout}{done.stderr}")

    def init(self) -> None:
        self._tool("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._tool("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.data / "server.log"), "-w", "start")

    def stop(self) -> None:
        self._tool("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def discard(self) -> None:
        """Stop it at once, whatever state it is in (its data is thrown away next)."""
        if BIN is not None:
            subprocess.run(
                [*self.run_as, str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
            )


@contextmanager
def private_server(port: int) -> Iterator[PrivateServer]:
    """A new PostgreSQL server of the caller's own on ``port``, running; stopped and its folder
    removed afterwards."""
    # Not under pytest's tmp_path: the postgres user cannot pass root's 0700 folders.
    folder = Path(tempfile.mkdtemp(prefix="gradewright-postgres-"))
    try:
        server = PrivateServer(folder, port)
        server.init()
        server.start()
        try:
            yield server
        finally:
            server.discard()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
