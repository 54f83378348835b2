"""The PostgreSQL server the tests run on, when there is one: its address, the mark that skips a
test (saying why) where none runs, and a fresh database of a test's own, dropped afterwards."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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
