"""The gradebook's data version, and what is computed from it kept per version.

A course's tables (its grade table, its statistics) take a large course's whole grades to compute
(half a second at 2,000 students); most requests for them find nothing changed since the last. The
database keeps a version of the grades: one row (``gradebook_dataversion``) that a trigger on every
table a grade is derived from (students, submissions, results, marks, extensions, rubric edits) sets
to a new random value on every write to it, in the writing transaction. So every writer bumps it,
whatever wrote (the gradebook's functions, the site's forms, a bulk update, another process, the
command line), with nothing to remember at each place that writes; and a version names one state of
the data: a rolled-back write's version is never seen again, nor reused.

``cached`` keeps a computed value in this process under (the database, what was computed, the
version read before computing it): the next request with nothing written since reads it; the first
after any write computes it anew. Reading the version first means a value is never older than the
version it is kept under. Where the version cannot be read (a database without the triggers), or
the reading transaction has written itself (PostgreSQL bumps the version at commit), nothing is
kept: it is computed each time, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .book import Gradebook

T = TypeVar("T")

TABLE = "gradebook_dataversion"
# The tables a grade, a statistic or the roster's page is derived from.
TRACKED = ["student", "submission", "result", "mark", "extension", "rubricedit"]
KEPT = 24  # values kept in this process (a few assignments' grade tables and statistics: megabytes each)

_SQLITE_NEW = "random()"  # 64 bits, signed
_POSTGRES_FUNCTION = f"""
CREATE OR REPLACE FUNCTION gradebook_bump_version() RETURNS trigger AS $$
BEGIN
    -- Once per transaction, at its commit (the trigger is deferred): the row is locked for a moment,
    -- not from a transaction's first write to its end, so two writers never wait on each other here.
    IF current_setting('gradebook.version_bumped', true) IS DISTINCT FROM 'yes' THEN
        PERFORM set_config('gradebook.version_bumped', 'yes', true);
        UPDATE {TABLE} SET value = floor(random() * 9.2e18)::bigint WHERE id = 1;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
"""


def install(connection: Any) -> None:
    """Create the triggers on ``connection``'s database (again: they are idempotent). Run by the
    migration that made the table and after every migration (an SQLite table rebuilt by a later
    migration loses its triggers)."""
    tables = set(connection.introspection.table_names())
    if TABLE not in tables:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for name in TRACKED:
                for event in ("INSERT", "UPDATE", "DELETE"):
                    cursor.execute(
                        f"CREATE TRIGGER IF NOT EXISTS gradebook_{name}_{event.lower()}_version AFTER {event} "
                        f"ON gradebook_{name} BEGIN UPDATE {TABLE} SET value = {_SQLITE_NEW} WHERE id = 1; END"
                    )
        elif connection.vendor == "postgresql":
            cursor.execute(_POSTGRES_FUNCTION)
            for name in TRACKED:
                cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_version ON gradebook_{name}")
                cursor.execute(
                    f"CREATE CONSTRAINT TRIGGER gradebook_{name}_version AFTER INSERT OR UPDATE OR DELETE "
                    f"ON gradebook_{name} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                    "EXECUTE FUNCTION gradebook_bump_version()"
                )
                cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_truncate_version ON gradebook_{name}")
                cursor.execute(
                    f"CREATE TRIGGER gradebook_{name}_truncate_version AFTER TRUNCATE ON gradebook_{name} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION gradebook_bump_version()"
                )


def data_version(book: Gradebook) -> int | None:
    """The grades' version now (one query), or None where no value may be kept."""
    from django.db import DatabaseError, connections

    connection = connections[book.alias]
    if connection.vendor == "postgresql":
        # A transaction that has written sees its own writes but not yet their version (bumped at
        # commit): what it computes must not be kept under the version before them.
        sql = f"SELECT value, txid_current_if_assigned() IS NULL FROM {TABLE} WHERE id = 1"
    elif connection.vendor == "sqlite":
        sql = f"SELECT value, 1 FROM {TABLE} WHERE id = 1"
    else:
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            row = cursor.fetchone()
    except DatabaseError:  # a gradebook older than the table: computed each time
        return None
    return int(row[0]) if row is not None and row[1] else None


class _Kept:
    """The last ``KEPT`` values computed, least recently used first out; shared by the threads of a
    process (the site's requests)."""

    def __init__(self) -> None:
        self.values: OrderedDict[Hashable, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self.lock:
            if key not in self.values:
                return _MISSING
            self.values.move_to_end(key)
            return self.values[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.values[key] = value
            self.values.move_to_end(key)
            while len(self.values) > KEPT:
                self.values.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.values.clear()


_MISSING = object()
_kept = _Kept()


def cached(book: Gradebook, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``'s value as of the gradebook's current version: kept from an earlier call with
    nothing written since, else computed now (and kept). Callers must not change what they get."""
    version = data_version(book)
    if version is None:
        return compute()
    full = (book.alias, book.where, version, key)
    found = _kept.get(full)
    if found is not _MISSING:
        return found
    value = compute()
    _kept.put(full, value)
    return value


def uninstall(connection: Any) -> None:
    """Drop the triggers (the migration's reverse, before its table goes)."""
    with connection.cursor() as cursor:
        for name in TRACKED:
            if connection.vendor == "sqlite":
                for event in ("insert", "update", "delete"):
                    cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_{event}_version")
            elif connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_version ON gradebook_{name}")
                cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_truncate_version ON gradebook_{name}")
        if connection.vendor == "postgresql":
            cursor.execute("DROP FUNCTION IF EXISTS gradebook_bump_version()")


def forget() -> None:
    """Drop every kept value (tests that compare a computed value with a kept one)."""
    _kept.clear()
