"""The gradebook's data version and change log, and what is computed from them kept per version.

A course's tables (its grade table, its statistics) take a large course's whole grades to compute
(a third of a second at 2,000 students); most requests for them find nothing changed since the last,
and a write changes one student's rows or a few. The database keeps a version of the grades: one
row (``gradebook_dataversion``) that a trigger on every table a grade is derived from (students,
submissions, results, marks, extensions, rubric edits, the staff's choices of the submission that
counts) sets to a new random value on every write to it, in the writing transaction. So every
writer bumps it, whatever wrote (the gradebook's functions, the site's forms, a bulk update,
another process, the command line), with nothing to remember at each place that writes; and a
version names one state of the data: a rolled-back write's version is never seen again, nor reused.

``cached`` keeps a computed value in this process under (the database, what was computed, the
version read before computing it): the next request with nothing written since reads it; the first
after any write computes it anew. Reading the version first means a value is never older than the
version it is kept under. Where the version cannot be read (a database without the triggers), or
the reading transaction has written itself (PostgreSQL bumps the version at commit), nothing is
kept: it is computed each time, as before.

``updated`` does the same, and the first request after a write updates the last value kept for
only the students the writes since changed. The same triggers log them (``gradebook_datachange``:
one entry per row written, naming the row's Student; NULL, everyone, for a rubric edit or a result
of no submission); a kept value remembers the log's mark read with its version, and the next read
of the version reads, in the same query, the students written since that mark:

- SQLite has one writer at a time, so the entries' ids are in commit order: the mark is the newest
  entry's id, and the changes the entries after it. Each entry has a random tag, and the mark's own
  entry must still be there with its tag: a mark read inside a transaction later rolled back (its
  id given again to another entry since), or pruned, is not known for sure.
- On PostgreSQL ids are not in commit order (a writer that took its ids first may commit last):
  each entry carries its writer's transaction id, the mark is the snapshot read with the version,
  and the changes are every entry of a transaction not committed in that snapshot.

Anything not known for sure (an entry for everyone, the mark's entry gone, more than
``MOST_CHANGED`` students, no log) computes the value anew, as does a transaction that has written
on PostgreSQL (nothing is kept). Reading a student's rows again is harmless; missing one is the bug
this guards against. Writers take no lock they did not take before: they only insert entries. The
log keeps its last ``LOGGED`` entries: SQLite's trigger prunes older ones on each insert; on
PostgreSQL the version's trigger, at commit, once the log has doubled, deletes the older entries it
can without waiting (rows another committing writer is pruning are skipped) and logs a change for
everyone, so a value whose mark came before the pruning is computed anew. ``install`` (after every
migration, a restore's included) empties PostgreSQL's log the same way: a restored dump's entries
carry another server's transaction ids.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .book import Gradebook

T = TypeVar("T")

TABLE = "gradebook_dataversion"
LOG = "gradebook_datachange"
# The tables a grade, a statistic or the roster's page is derived from.
TRACKED = ["student", "submission", "result", "mark", "extension", "rubricedit", "countedchoice"]
KEPT = 24  # values kept in this process (a few assignments' grade tables and statistics: megabytes each)
# The change log's entries kept (a grading writes one per question's result): a kept table older
# than them is computed anew.
LOGGED = 5000
# More students changed than this since a kept table: computed anew (as quick, and fewer queries'
# parameters).
MOST_CHANGED = 300

# Whose row a write to each table changed: (SQL for a row, NEW or OLD) per table; NULL: everyone's.
_WHOSE = {
    "student": "{row}.id",
    "submission": "{row}.student_id",
    "mark": "{row}.student_id",
    "extension": "{row}.student_id",
    "result": "(SELECT student_id FROM gradebook_submission WHERE id = {row}.submission_id)",
    "rubricedit": "NULL",
    "countedchoice": "{row}.student_id",
}

_SQLITE_NEW = "random()"  # 64 bits, signed
_POSTGRES_BUMP = f"""
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


# With the change log: pruned when it has grown to twice ``LOGGED`` entries, to the last
# ``LOGGED``, by a transaction that logs a change for everyone: a kept table from before its
# commit, which might have needed an entry pruned, is computed anew. Rows another committing writer
# is pruning are skipped, not waited for.
def _postgres_bump_and_prune() -> str:
    return f"""
CREATE OR REPLACE FUNCTION gradebook_bump_version() RETURNS trigger AS $$
DECLARE
    newest bigint;
BEGIN
    IF current_setting('gradebook.version_bumped', true) IS DISTINCT FROM 'yes' THEN
        PERFORM set_config('gradebook.version_bumped', 'yes', true);
        UPDATE {TABLE} SET value = floor(random() * 9.2e18)::bigint WHERE id = 1;
        SELECT max(id) INTO newest FROM {LOG};
        IF newest - (SELECT min(id) FROM {LOG}) > 2 * {LOGGED} THEN
            DELETE FROM {LOG} WHERE id IN (
                SELECT id FROM {LOG} WHERE id <= newest - {LOGGED} FOR UPDATE SKIP LOCKED
            );
            INSERT INTO {LOG} (student_pk, tag) VALUES (NULL, txid_current());
        END IF;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
"""


_POSTGRES_LOG = f"""
CREATE OR REPLACE FUNCTION gradebook_log_change() RETURNS trigger AS $$
DECLARE
    new_pk bigint;
    old_pk bigint;
BEGIN
    -- TG_ARGV[0]: how a row names its student (each branch reads only the columns its table has).
    IF TG_ARGV[0] = 'everyone' OR TG_OP = 'TRUNCATE' THEN
        INSERT INTO {LOG} (student_pk, tag) VALUES (NULL, txid_current());
        RETURN NULL;
    END IF;
    IF TG_ARGV[0] = 'self' THEN
        IF TG_OP <> 'DELETE' THEN new_pk := NEW.id; END IF;
        IF TG_OP <> 'INSERT' THEN old_pk := OLD.id; END IF;
    ELSIF TG_ARGV[0] = 'submission' THEN
        -- A result: its submission's student (a result of no submission, as far as this transaction
        -- sees: everyone's, to be sure).
        IF TG_OP <> 'DELETE' THEN
            SELECT student_id INTO new_pk FROM gradebook_submission WHERE id = NEW.submission_id;
            IF new_pk IS NULL THEN
                INSERT INTO {LOG} (student_pk, tag) VALUES (NULL, txid_current());
                RETURN NULL;
            END IF;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.submission_id = NEW.submission_id THEN
            old_pk := new_pk;
        ELSIF TG_OP <> 'INSERT' THEN
            SELECT student_id INTO old_pk FROM gradebook_submission WHERE id = OLD.submission_id;
            IF old_pk IS NULL THEN
                INSERT INTO {LOG} (student_pk, tag) VALUES (NULL, txid_current());
                RETURN NULL;
            END IF;
        END IF;
    ELSE
        IF TG_OP <> 'DELETE' THEN new_pk := NEW.student_id; END IF;
        IF TG_OP <> 'INSERT' THEN old_pk := OLD.student_id; END IF;
    END IF;
    IF new_pk IS NOT NULL THEN
        INSERT INTO {LOG} (student_pk, tag) VALUES (new_pk, txid_current());
    END IF;
    IF old_pk IS NOT NULL AND old_pk IS DISTINCT FROM new_pk THEN
        INSERT INTO {LOG} (student_pk, tag) VALUES (old_pk, txid_current());
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
"""
_POSTGRES_HOW = {"student": "self", "result": "submission", "rubricedit": "everyone"}


def install(connection: Any) -> None:
    """Create the triggers on ``connection``'s database (again: they are idempotent). Run by the
    migrations that made the tables and after every migration (an SQLite table rebuilt by a later
    migration loses its triggers)."""
    tables = set(connection.introspection.table_names())
    if TABLE not in tables:
        return
    logged = LOG in tables
    # A table a later migration makes is left for the install after it.
    tracked = [name for name in TRACKED if f"gradebook_{name}" in tables]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for name in tracked:
                for event in ("INSERT", "UPDATE", "DELETE"):
                    cursor.execute(
                        f"CREATE TRIGGER IF NOT EXISTS gradebook_{name}_{event.lower()}_version AFTER {event} "
                        f"ON gradebook_{name} BEGIN UPDATE {TABLE} SET value = {_SQLITE_NEW} WHERE id = 1; END"
                    )
                    if logged:
                        rows = {"INSERT": ["NEW"], "UPDATE": ["NEW", "OLD"], "DELETE": ["OLD"]}[event]
                        whose = " UNION ".join(f"SELECT {_WHOSE[name].format(row=row)} AS s" for row in rows)
                        cursor.execute(
                            f"CREATE TRIGGER IF NOT EXISTS gradebook_{name}_{event.lower()}_change AFTER {event} "
                            f"ON gradebook_{name} BEGIN INSERT INTO {LOG} (student_pk, tag) "
                            f"SELECT s, {_SQLITE_NEW} FROM ({whose}); END"
                        )
            if logged:
                # SQLite has one writer at a time: ids are in commit order, and the oldest are a prefix.
                cursor.execute(
                    f"CREATE TRIGGER IF NOT EXISTS gradebook_datachange_prune AFTER INSERT ON {LOG} "
                    f"BEGIN DELETE FROM {LOG} WHERE id <= NEW.id - {LOGGED}; END"
                )
        elif connection.vendor == "postgresql":
            cursor.execute(_postgres_bump_and_prune() if logged else _POSTGRES_BUMP)
            if logged:
                cursor.execute(_POSTGRES_LOG)
            for name in tracked:
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
                if logged:
                    how = _POSTGRES_HOW.get(name, "student")
                    # Not deferred: the entry is written with the row, in the writer's transaction.
                    cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_change ON gradebook_{name}")
                    cursor.execute(
                        f"CREATE TRIGGER gradebook_{name}_change AFTER INSERT OR UPDATE OR DELETE "
                        f"ON gradebook_{name} FOR EACH ROW EXECUTE FUNCTION gradebook_log_change('{how}')"
                    )
                    cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_truncate_change ON gradebook_{name}")
                    cursor.execute(
                        f"CREATE TRIGGER gradebook_{name}_truncate_change AFTER TRUNCATE ON gradebook_{name} "
                        "FOR EACH STATEMENT EXECUTE FUNCTION gradebook_log_change('everyone')"
                    )
            if logged:
                # A restored dump's entries carry another server's transaction ids (maybe ones this
                # server has not reached: never "committed" in a snapshot): dropped, and a change
                # for everyone logged in their place, so no kept table is updated past them.
                cursor.execute(f"DELETE FROM {LOG}")
                cursor.execute(f"INSERT INTO {LOG} (student_pk, tag) VALUES (NULL, txid_current())")


LogMark = tuple[int, int] | str  # how far the change log went (_State)


@dataclass(frozen=True)
class _State:
    """What was read with the version: ``mark``, how far the change log went (None: no entry, or
    no log): on SQLite (the newest entry's id, its tag), on PostgreSQL the snapshot, as text; and
    ``changed``, the students written since the mark asked for (``_state``)."""

    version: int
    mark: LogMark | None
    changed: set[int] | None = None


def _state(book: Gradebook, since: LogMark | None = None) -> _State | None:
    """The grades' version now and the change log's mark, in one query; None where no value may be
    kept. With ``since`` (an earlier mark), in the same query, the students (pks) written since it
    and committed by now: ``changed`` None where that is not known for sure: everyone's (a rubric
    edit, a result of no submission, the log pruned), or the mark's own entry rolled back since."""
    from django.db import DatabaseError, connections

    connection = connections[book.alias]
    if connection.vendor == "postgresql":
        # A transaction that has written sees its own writes but not yet their version (bumped at
        # commit): what it computes must not be kept under the version before them. The changes
        # since a snapshot: every transaction not committed in it, whatever its entries' ids (a
        # writer that began before another may commit after it); one in progress then, or begun
        # since, has an id from the snapshot's oldest on.
        sql = (
            f"SELECT value, txid_current_if_assigned() IS NULL, txid_current_snapshot()::text, "
            f"ARRAY(SELECT DISTINCT coalesce(student_pk, -1) FROM {LOG} "
            "WHERE tag >= txid_snapshot_xmin(%s::txid_snapshot) AND NOT txid_visible_in_snapshot(tag, %s::txid_snapshot)) "
            f"FROM {TABLE} WHERE id = 1"
        )
        params: list[Any] = [since, since] if isinstance(since, str) else [None, None]
    elif connection.vendor == "sqlite":
        # SQLite has one writer at a time: entries' ids are in commit order. The mark's own entry
        # must still be there with its tag (not pruned; not rolled back, its id given again since).
        newest, tag = since if isinstance(since, tuple) else (None, None)
        sql = (
            f"SELECT value, 1, (SELECT id || ':' || tag FROM {LOG} ORDER BY id DESC LIMIT 1), "
            f"(SELECT group_concat(pk) FROM (SELECT DISTINCT coalesce(student_pk, -1) AS pk FROM {LOG} WHERE id > %s)), "
            f"EXISTS (SELECT 1 FROM {LOG} WHERE id = %s AND tag = %s) FROM {TABLE} WHERE id = 1"
        )
        params = [newest, newest, tag]
    else:
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
    except DatabaseError:  # a gradebook older than the tables: computed each time
        return None
    if row is None or not row[1]:
        return None
    mark: LogMark | None = row[2]
    changed: set[int] | None = None
    if connection.vendor == "sqlite":
        if row[2] is not None:
            entry, entry_tag = str(row[2]).split(":")
            mark = (int(entry), int(entry_tag))
        if since is not None and row[4]:
            changed = {int(pk) for pk in str(row[3]).split(",")} if row[3] is not None else set()
    elif since is not None:
        changed = {int(pk) for pk in row[3]}
    if changed is not None and -1 in changed:  # everyone's
        changed = None
    return _State(int(row[0]), mark, changed)


def data_version(book: Gradebook) -> int | None:
    """The grades' version now (one query), or None where no value may be kept."""
    state = _state(book)
    return None if state is None else state.version


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


class _Table:
    """A value kept with the change log's mark read with its version: the base the next version's
    value is updated from."""

    __slots__ = ("mark", "value")

    def __init__(self, mark: LogMark, value: Any):
        self.mark, self.value = mark, value


_bases = _Kept()


def updated(book: Gradebook, key: Hashable, compute: Callable[[], T], update: Callable[[T, set[int]], T]) -> T:
    """``cached``, and where nothing is kept for the current version, the value kept for an earlier
    one updated for only the students written since (``update(value, student pks)``: a new value,
    the old one left as it was, shared), when the change log says which for sure and they are few;
    else computed anew. ``update`` must give what ``compute`` would for those students."""
    base = _bases.get((book.alias, book.where, key))
    state = _state(book, None if base is _MISSING else base.mark)
    if state is None:
        return compute()
    full = (book.alias, book.where, state.version, key)
    found = _kept.get(full)
    if found is not _MISSING:
        return found
    value: Any = _MISSING
    if base is not _MISSING and state.changed is not None and len(state.changed) <= MOST_CHANGED:
        # The base was computed after its mark was read: every write committed by then is in it,
        # every write after is in the log since the mark, and those students are read now.
        value = update(base.value, state.changed) if state.changed else base.value
    if value is _MISSING:
        value = compute()
    _kept.put(full, value)
    if state.mark is not None:
        _bases.put((book.alias, book.where, key), _Table(state.mark, value))
    return value


def _drop_triggers(cursor: Any, vendor: str, kind: str) -> None:
    """Drop the triggers of one kind ("version" or "change") on every tracked table."""
    for name in TRACKED:
        if vendor == "sqlite":
            for event in ("insert", "update", "delete"):
                cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_{event}_{kind}")
        elif vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_{kind} ON gradebook_{name}")
            cursor.execute(f"DROP TRIGGER IF EXISTS gradebook_{name}_truncate_{kind} ON gradebook_{name}")


def uninstall_changes(connection: Any) -> None:
    """Drop the change log's triggers (its migration's reverse, before its table goes), and put back
    the version's function without the log."""
    with connection.cursor() as cursor:
        _drop_triggers(cursor, connection.vendor, "change")
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER IF EXISTS gradebook_datachange_prune")
        elif connection.vendor == "postgresql":
            cursor.execute("DROP FUNCTION IF EXISTS gradebook_log_change()")
            cursor.execute(_POSTGRES_BUMP)


def uninstall(connection: Any) -> None:
    """Drop the triggers (the migration's reverse, before its table goes)."""
    uninstall_changes(connection)
    with connection.cursor() as cursor:
        _drop_triggers(cursor, connection.vendor, "version")
        if connection.vendor == "postgresql":
            cursor.execute("DROP FUNCTION IF EXISTS gradebook_bump_version()")


def forget() -> None:
    """Drop every kept value (tests that compare a computed value with a kept one)."""
    _kept.clear()
    _bases.clear()
