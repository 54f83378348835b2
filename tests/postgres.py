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


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty PostgreSQL database's URL; dropped afterwards, with this process's connections to it."""
    import psycopg

    name = f"gradewright_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        from django.db import connections

        for alias in list(connections.settings):
            if connections.settings[alias].get("NAME") == name:
                connections[alias].close()
        _drop(name)


def _drop(name: str) -> None:
    """Drop a test's database, ending the test role's own sessions in it first.

    Not `WITH (FORCE)`: that also tries to end an autovacuum worker which happens to be in the
    database, and a role that is not superuser may not, so the drop failed now and then in CI
    (InsufficientPrivilege). A plain DROP asks autovacuum to leave and waits for it; it can still
    find a session that is just ending, hence the few tries."""
    import psycopg
    from psycopg import errors

    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
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
