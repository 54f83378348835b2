"""Opening a gradebook: Django's ORM used standalone, on an SQLite file (the default) or on the
database a URL names (``GRADEWRIGHT_DATABASE_URL``, or ``--database-url``: PostgreSQL, say).

Each opened gradebook is a Django database alias of its own, so one process (a test, the service)
can hold several. Opening one brings its tables up to date (Django's migrations, one opener at a
time), and refuses, changing nothing, a file that is not a gradebook, a gradebook written by a newer
Gradewright, and today's older format (which ``autograder gradebook upgrade`` converts).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder.environment import read

from .errors import GradebookError, GradebookUnavailable, dependency_error

URL_VARIABLE = "GRADEWRIGHT_DATABASE_URL"
LEGACY_TABLES = {"submissions", "grades"}  # the single-file format of Gradewright 0.1's first releases
WAIT_VARIABLE = "GRADEWRIGHT_GRADEBOOK_WAIT"  # seconds a writer waits for another's transaction (default 30)
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",  # a writer takes the lock when it starts, so two never deadlock
    "init_command": "PRAGMA synchronous=FULL;",  # WAL is set once the file is known to be a gradebook
}
MIGRATION_LOCK = 727_274_019  # PostgreSQL advisory lock id held while migrating


def setup_django() -> None:
    """Django with the gradebook app, unless the process configured it already (the service)."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            INSTALLED_APPS=["gradebook"],
            DATABASES={},
            USE_TZ=True,
            TIME_ZONE="UTC",
            DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        )
        django.setup()


def database_url(url: str | None) -> str | None:
    """The URL given, else the environment's, else None (an SQLite file)."""
    return url or read(URL_VARIABLE) or None


def open_database(path: Path | None = None, url: str | None = None) -> tuple[str, str]:
    """Connect to a gradebook and bring its tables up to date: (Django alias, what to call it in messages)."""
    setup_django()
    from django.db import connections

    url = database_url(url)
    if url:
        import dj_database_url

        try:
            config = dj_database_url.parse(url)
        except (ValueError, KeyError) as exc:
            raise GradebookUnavailable(f"{URL_VARIABLE}: not a database URL ({exc})") from None
        where = _without_password(url)
    else:
        if path is None:
            raise GradebookError("no gradebook given: pass --gradebook PATH or set " + URL_VARIABLE)
        path = path.absolute()
        path.parent.mkdir(parents=True, exist_ok=True)
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": sqlite_options()}
        where = str(path)
    alias = "gradebook_" + hashlib.sha256(repr(sorted(config.items())).encode()).hexdigest()[:16]
    if alias not in connections.settings:
        connections.settings[alias] = connections.configure_settings({"default": {}, alias: config})[alias]
    try:
        with _one_migrator(alias, path if not url else None):
            _refuse_foreign(alias, where)
            if not url:  # readers never wait for a writer, and a writer waits for the other (IMMEDIATE)
                with connections[alias].cursor() as cursor:
                    cursor.execute("PRAGMA journal_mode=WAL")
            _migrate(alias)
    except GradebookError:
        connections[alias].close()
        raise
    except Exception as exc:
        connections[alias].close()
        said = dependency_error(exc, where)
        if said is None:
            raise
        raise said from None
    return alias, where


def sqlite_options() -> dict[str, object]:
    """The options of every connection to an SQLite gradebook, the service's included."""
    return {**SQLITE_OPTIONS, "timeout": _wait_seconds()}


def _wait_seconds() -> float:
    text = read(WAIT_VARIABLE)
    try:
        seconds = float(text)
    except ValueError:
        raise GradebookError(f"{WAIT_VARIABLE}={text!r}: not a number of seconds") from None
    if not 0 <= seconds < 86_400:
        raise GradebookError(f"{WAIT_VARIABLE}={text!r}: give between 0 and 86400 seconds")
    return seconds


def close_database(alias: str) -> None:
    from django.db import connections

    connections[alias].close()


def _create_private(path: Path) -> None:
    """A new gradebook file is its owner's alone (grades are private); an existing one is left as it
    is, without opening it (see _one_migrator)."""
    if path.exists():
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass  # another opener made it first


@contextmanager
def _one_migrator(alias: str, path: Path | None) -> Iterator[None]:
    """One process at a time checks and migrates a gradebook: two graders starting together on a
    new file would otherwise both create its tables."""
    if path is not None:
        _create_private(path)
        # flock on the gradebook's folder, never on a descriptor of the file itself: closing any
        # descriptor of the file drops every fcntl lock this process holds on it, SQLite's own
        # included; another process's SQLite, closing a connection, then takes itself for the
        # file's last user and removes the WAL this process is still writing to ("disk I/O error",
        # writes lost). A folder's descriptor holds none of them.
        handle = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # releases the lock
        return
    from django.db import connections

    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
        try:
            yield
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])


def _refuse_foreign(alias: str, where: str) -> None:
    from django.db import connections
    from django.db.migrations.loader import MigrationLoader

    connection = connections[alias]
    tables = set(connection.introspection.table_names())
    if LEGACY_TABLES <= tables and "django_migrations" not in tables:
        raise GradebookUnavailable(
            f"{where}: a gradebook in the older format; convert it with `autograder gradebook upgrade "
            f"--gradebook {where}` (it keeps a copy of the old file)"
        )
    if tables and "django_migrations" not in tables:
        raise GradebookUnavailable(f"{where}: not a gradebook (it holds other tables); nothing was changed")
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    newer = sorted(
        name
        for app, name in loader.applied_migrations
        if app == "gradebook" and (app, name) not in loader.disk_migrations
    )
    if newer:
        raise GradebookUnavailable(
            f"{where}: written by a newer Gradewright (migration {newer[-1]}); upgrade Gradewright to use it"
        )


def _migrate(alias: str) -> None:
    from django.core.management import call_command
    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[alias])
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        call_command("migrate", "gradebook", database=alias, verbosity=0, interactive=False)


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url
