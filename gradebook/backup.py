"""``autograder gradebook backup|restore``: a course's grades and the service's state in one file.

The backup is a gzipped tar holding

    manifest.json        what it holds: format, database kind, when, the grader's version, counts
    gradebook.sqlite3    an SQLite gradebook, copied with SQLite's online backup API, or
    gradebook.pgdump     a PostgreSQL database, dumped by ``pg_dump --format=custom``
    state/...            the service's state folder (uploads, reports, released notebooks, the
                         secret key), less the SQLite gradebook when it lives there

Both copies are consistent while graders, workers and the service write: SQLite's backup reads one
snapshot (in WAL mode a reader never waits for a writer), and ``pg_dump`` runs in the snapshot the
manifest's counts were taken in. The database is copied first and the state folder after it: a
hand-in's file is stored before its row is committed (service/handin/uploads.py), so every file the copied
rows name is in the copy; files newer than the database copy come along and are harmless.

The secret key is included, so that sessions, sign-in links and the tool's signatures survive a
restore: the backup is as secret as the state folder, and is written readable by its owner only.

Restore refuses to replace a gradebook or a state folder that holds anything unless ``force``
(then what was there is moved aside, never deleted), reads the archive as hostile (only its own
names, no absolute paths, no ``..``, no links or special files at all, on every Python it runs on),
checks the copy (``integrity_check``) and brings it up to today's tables (the gradebook's
migrations; the service migrates its own tables when it starts).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from copy import copy as shallow_copy
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from autograder.version import grader_version

from .book import Gradebook
from .database import database_url, setup_django
from .errors import BadFile, GradebookError, GradebookUnavailable

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_MEMBER = "gradebook.sqlite3"
POSTGRES_MEMBER = "gradebook.pgdump"
STATE_MEMBER = "state"
SQLITE_SIBLINGS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database, never copied as files
COMMAND_SECONDS = 3600  # pg_dump or pg_restore of a course's database: minutes at most; past this, it hangs


class Counts(BaseModel):
    """Rows of the gradebook's main tables, in the copy."""

    students: int
    submissions: int
    results: int
    marks: int


class Manifest(BaseModel):
    format: int
    database: Literal["sqlite", "postgresql"]
    created_at: datetime
    grader_version: str
    counts: Counts
    gradebook_in_state: bool  # the SQLite gradebook was the state folder's gradebook.db
    state: bool
    pg_dump_version: str = ""


class Backup(BaseModel):
    out: Path
    manifest: Manifest
    state_files: int


class Restored(BaseModel):
    manifest: Manifest
    counts: Counts  # in the restored gradebook, after its migrations
    gradebook: str  # where it went (a path, or the database URL without its password)
    state: Path | None
    moved_aside: list[Path]


# Backing up.


def backup(out: Path, gradebook: Path | None, url: str | None, state: Path | None) -> Backup:
    """Write the backup of the gradebook (the SQLite file ``gradebook``, or the database ``url``
    names) and of the state folder ``state`` (None: none) to ``out``. Without either, the gradebook
    is the state folder's gradebook.db where there is one (the service's), else ./gradebook.db."""
    url = database_url(url)
    if gradebook is None and not url:
        inside = state / "gradebook.db" if state is not None else None
        gradebook = inside if inside is not None and inside.is_file() else Path("gradebook.db")
    if state is not None and not state.is_dir():
        raise GradebookError(f"{state}: no such state folder")
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="gradewright-backup-", dir=out.parent) as work:
        folder = Path(work)
        excluded: set[Path] = set()
        if url:
            dump = folder / POSTGRES_MEMBER
            counts, version = _dump_postgres(url, dump)
            manifest_kind: Literal["sqlite", "postgresql"] = "postgresql"
            in_state = False
        else:
            if gradebook is None or not gradebook.is_file():
                raise GradebookError(f"{gradebook}: no gradebook here; pass --gradebook PATH or --database-url URL")
            dump = folder / SQLITE_MEMBER
            counts = _copy_sqlite(gradebook, dump)
            version, manifest_kind = "", "sqlite"
            source = gradebook.resolve()
            excluded = {source, *(source.with_name(source.name + suffix) for suffix in SQLITE_SIBLINGS)}
            in_state = state is not None and source.parent == state.resolve()
        manifest = Manifest(
            format=FORMAT,
            database=manifest_kind,
            created_at=datetime.now(UTC),
            grader_version=grader_version(),
            counts=counts,
            gradebook_in_state=in_state,
            state=state is not None,
            pg_dump_version=version,
        )
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # grades and the secret key
        try:
            with os.fdopen(descriptor, "wb") as handle, tarfile.open(fileobj=handle, mode="w:gz") as archive:
                _add_bytes(archive, MANIFEST, manifest.model_dump_json(indent=2).encode() + b"\n")
                archive.add(dump, arcname=dump.name, filter=_owners_only)  # pg_dump writes it 0644
                files = _add_state(archive, state, excluded) if state is not None else 0
            os.replace(partial, out)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise GradebookError(f"{out}: cannot write the backup ({exc.strerror or exc})") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return Backup(out=out, manifest=manifest, state_files=files)


def _copy_sqlite(gradebook: Path, copy: Path) -> Counts:
    """A consistent copy of a live SQLite gradebook, as one self-contained file."""
    try:
        # Read-only: a backup never changes the gradebook, not even its journal mode.
        source = sqlite3.connect(f"file:{gradebook.absolute()}?mode=ro", uri=True, timeout=30)
        try:
            target = sqlite3.connect(copy)
            try:
                source.backup(target)  # all pages in one step: one snapshot, however busy the writers
                target.execute("PRAGMA journal_mode=DELETE")  # the copy stands alone, without a -wal file
                return _checked_counts(target, str(gradebook))
            finally:
                target.close()
        finally:
            source.close()
    except sqlite3.DatabaseError as exc:
        raise GradebookUnavailable(f"{gradebook}: cannot be copied ({exc}); is it a gradebook?") from None


def _checked_counts(connection: sqlite3.Connection, where: str) -> Counts:
    (verdict,) = connection.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        raise GradebookUnavailable(f"{where}: the copy of the gradebook is damaged (integrity_check: {verdict})")
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"django_migrations", *_tables().values()} <= tables:
        raise GradebookUnavailable(f"{where}: not a gradebook (its tables are not the gradebook's)")
    return Counts(
        **{
            what: connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
            for what, table in _tables().items()
        }
    )


def _tables() -> dict[str, str]:
    setup_django()
    from django.db.models import Model

    from .models import Mark, Result, Student, Submission

    models: dict[str, type[Model]] = {"students": Student, "submissions": Submission, "results": Result, "marks": Mark}
    return {what: model._meta.db_table for what, model in models.items()}


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o600, int(datetime.now(UTC).timestamp())
    archive.addfile(info, io.BytesIO(data))


def _owners_only(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """The database's member as the archive stores it: readable by whoever restores it only."""
    info.mode = 0o600
    return info


def _add_state(archive: tarfile.TarFile, state: Path, excluded: set[Path]) -> int:
    """The state folder's folders and files (links and sockets left out). Each file is read whole
    before it is written: one rewritten while the backup runs goes in as one version of it."""
    count = 0
    root = state.resolve()
    for folder, names, files in os.walk(root):
        here = Path(folder)
        inside = here.relative_to(root).as_posix()
        name_here = STATE_MEMBER if inside == "." else f"{STATE_MEMBER}/{inside}"
        info = tarfile.TarInfo(name_here)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o700, int(here.stat().st_mtime)
        archive.addfile(info)
        names[:] = sorted(name for name in names if not (here / name).is_symlink())
        for name in sorted(files):
            path = here / name
            if path in excluded or path.is_symlink() or not path.is_file():
                continue
            try:
                data = path.read_bytes()
                status = path.stat()
            except FileNotFoundError:  # removed (or renamed into place) while the backup ran
                continue
            except OSError as exc:
                raise GradebookError(f"{path}: cannot be read for the backup ({exc.strerror})") from None
            info = tarfile.TarInfo(f"{name_here}/{name}")
            info.size, info.mode, info.mtime = len(data), (status.st_mode & 0o700) or 0o600, int(status.st_mtime)
            archive.addfile(info, io.BytesIO(data))
            count += 1
    return count


# PostgreSQL, through its own tools.


def _postgres(url: str) -> tuple[dict[str, str], dict[str, Any], str]:
    """(libpq's environment, psycopg's arguments, what to call it) for the database ``url`` names:
    the password goes by environment, never on a command line that ``ps`` shows."""
    import dj_database_url

    from .database import _without_password

    try:
        config = dj_database_url.parse(url)
    except (ValueError, KeyError) as exc:
        raise GradebookUnavailable(f"not a database URL ({exc})") from None
    where = _without_password(url)
    if "postgresql" not in str(config.get("ENGINE", "")):
        raise GradebookError(f"{where}: backups are of SQLite and PostgreSQL gradebooks only")
    given = {
        "PGHOST": config.get("HOST"),
        "PGPORT": config.get("PORT"),
        "PGUSER": config.get("USER"),
        "PGPASSWORD": config.get("PASSWORD"),
        "PGDATABASE": config.get("NAME"),
        "PGSSLMODE": (config.get("OPTIONS") or {}).get("sslmode"),
    }
    environment = {key: str(value) for key, value in given.items() if value}
    arguments = {
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "dbname": config.get("NAME"),
        "sslmode": (config.get("OPTIONS") or {}).get("sslmode"),
    }
    return environment, {key: value for key, value in arguments.items() if value}, where


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise GradebookUnavailable(
            f"{name} is not installed: a PostgreSQL gradebook is backed up and restored with PostgreSQL's own "
            f"tools (Debian: apt install postgresql-client)"
        )
    return found


def _run_tool(command: list[str], environment: dict[str, str], where: str) -> str:
    name = Path(command[0]).name
    try:
        done = subprocess.run(
            command, env={**os.environ, **environment}, capture_output=True, text=True, timeout=COMMAND_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise GradebookUnavailable(f"{where}: {name} did not finish in {COMMAND_SECONDS} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        said = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "no message")
        hint = ""
        if "version" in said.lower():
            hint = "; use PostgreSQL's tools of the server's version or newer (Debian: apt install postgresql-client-N)"
        raise GradebookUnavailable(f"{where}: {name} failed: {' '.join(said.split())[:300]}{hint}")
    return done.stdout


def _dump_postgres(url: str, out: Path) -> tuple[Counts, str]:
    """``pg_dump --format=custom`` of the whole database (the service's tables too), in the same
    snapshot as the counts it returns, and pg_dump's version."""
    import psycopg

    environment, arguments, where = _postgres(url)
    pg_dump = _tool("pg_dump")
    version = _run_tool([pg_dump, "--version"], environment, where).strip()
    try:
        with psycopg.connect(**arguments, connect_timeout=30, autocommit=True) as connection:
            # A repeatable-read transaction exports its snapshot; pg_dump reads in it, while it stays open.
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            snapshot = connection.execute("SELECT pg_export_snapshot()").fetchone()
            tables = {
                row[0]
                for row in connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            }
            if not {"django_migrations", *_tables().values()} <= tables:
                raise GradebookUnavailable(f"{where}: not a gradebook (its tables are not the gradebook's)")
            counts = Counts(
                **{
                    what: _one(connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone())
                    for what, table in _tables().items()
                }
            )
            _run_tool([pg_dump, "--format=custom", f"--snapshot={_one(snapshot)}", f"--file={out}"], environment, where)
            connection.execute("COMMIT")
    except psycopg.Error as exc:
        raise GradebookUnavailable(
            f"{where}: cannot reach the gradebook's database ({' '.join(str(exc).split())[:200]})"
        ) from None
    return counts, version


def _one(row: tuple[Any, ...] | None) -> Any:
    if row is None:  # an aggregate, or pg_export_snapshot(): one row from any PostgreSQL
        raise GradebookUnavailable("the database server answered no row where PostgreSQL always gives one")
    return row[0]


# Restoring.


def read_manifest(archive_path: Path) -> Manifest:
    with _opened(archive_path) as archive:
        return _manifest(archive, archive_path)


def restore(
    archive_path: Path,
    gradebook: Path | None,
    url: str | None,
    state: Path | None,
    force: bool = False,
    skip_state: bool = False,
) -> Restored:
    """Bring the backup at ``archive_path`` back: its database into the SQLite file ``gradebook``
    (None: the state folder's gradebook.db, if the backup's gradebook was there) or into the empty
    database ``url`` names, its state folder to ``state`` (unless ``skip_state``)."""
    url = database_url(url)
    with _opened(archive_path) as archive:
        manifest = _manifest(archive, archive_path)
        if manifest.database == "postgresql" and not url:
            raise GradebookError(
                f"{archive_path}: holds a PostgreSQL database; restore it with --database-url URL (an empty database)"
            )
        if manifest.database == "sqlite" and url:
            raise GradebookError(
                f"{archive_path}: holds an SQLite gradebook; restore it with --gradebook PATH (and no "
                "--database-url or GRADEWRIGHT_DATABASE_URL)"
            )
        if skip_state:
            state = None
        elif manifest.state and state is None:
            raise GradebookError(
                f"{archive_path}: holds the service's state folder; say where it goes (--course DIR "
                "or --state DIR), or leave it out (--no-state)"
            )
        if manifest.database == "sqlite" and gradebook is None:
            if not (manifest.gradebook_in_state and state is not None):
                raise GradebookError(f"{archive_path}: say where the gradebook goes (--gradebook PATH)")
            gradebook = state / "gradebook.db"
        moved: list[Path] = []
        if state is not None and manifest.state:
            _refuse_occupied(state, force, "state folder", ignore={gradebook} if gradebook else set())
        if gradebook is not None:
            if gradebook.exists() and gradebook.stat().st_size > 0 and not force:
                raise GradebookError(
                    f"{gradebook}: a gradebook is there already; pass --force to replace it "
                    "(it is kept beside, renamed)"
                )
        elif url is not None:
            _refuse_full_database(url, force)
        else:  # the backup's database is SQLite's or PostgreSQL's: the checks above leave a gradebook or a URL
            raise GradebookError(
                f"{archive_path}: say where the gradebook goes (--gradebook PATH or --database-url URL)"
            )
        # Extracted beside the state folder (or the gradebook), on its file system: moved into place, not copied.
        placed = state if state is not None and manifest.state else gradebook or archive_path
        base = placed.absolute().parent
        base.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".gradewright-restore-", dir=base) as work:
            folder = Path(work)
            _extract(archive, folder, archive_path)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            if gradebook is not None:
                copy = folder / SQLITE_MEMBER
                if not copy.is_file():
                    raise BadFile(f"{archive_path}: the gradebook's copy is missing; nothing was restored")
                counts = _prepare_sqlite(copy, archive_path)
            if state is not None and manifest.state:
                extracted = folder / STATE_MEMBER
                if not extracted.is_dir():
                    raise BadFile(f"{archive_path}: the state folder is missing; nothing was restored")
                state = state.absolute()
                if state.is_dir() and not any(state.iterdir()):
                    state.rmdir()  # an empty folder: nothing to keep
                if state.exists():
                    aside = state.with_name(f"{state.name}.replaced-{stamp}")
                    os.replace(state, aside)
                    moved.append(aside)
                os.replace(extracted, state)
                for folder_name, _, _ in os.walk(state):  # the service's own folders are its owner's only
                    os.chmod(folder_name, 0o700)
            if gradebook is not None:
                gradebook = gradebook.absolute()
                gradebook.parent.mkdir(parents=True, exist_ok=True)
                for suffix in ("", *SQLITE_SIBLINGS):
                    old = Path(str(gradebook) + suffix)
                    if old.exists():
                        aside = Path(f"{gradebook}.replaced-{stamp}{suffix}")
                        os.replace(old, aside)
                        if not suffix:
                            moved.append(aside)
                shutil.move(copy, gradebook)  # a rename, unless the gradebook is on another file system
                os.chmod(gradebook, 0o600)  # password hashes, LTI keys and grades: its owner's only
                where = str(gradebook)
            elif url is not None:  # (the one or the other, as checked before extracting)
                counts, where = _restore_postgres(url, folder / POSTGRES_MEMBER, force, archive_path)
    return Restored(
        manifest=manifest,
        counts=counts,
        gradebook=where,
        state=state if state and manifest.state else None,
        moved_aside=moved,
    )


@contextmanager
def _opened(path: Path) -> Iterator[tarfile.TarFile]:
    if not path.is_file():
        raise GradebookError(f"{path}: no such backup")
    try:
        archive = tarfile.open(path, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BadFile(f"{path}: not a Gradewright backup ({exc}); nothing was restored") from None
    try:
        yield archive
    finally:
        archive.close()


def _manifest(archive: tarfile.TarFile, path: Path) -> Manifest:
    try:
        member = archive.getmember(MANIFEST)
        handle = archive.extractfile(member) if member.isfile() and member.size < 1_000_000 else None
        if handle is None:
            raise KeyError(MANIFEST)
        data = json.loads(handle.read())
    except (KeyError, ValueError, tarfile.TarError, OSError, EOFError):
        raise BadFile(f"{path}: not a Gradewright backup (no readable {MANIFEST}); nothing was restored") from None
    if isinstance(data, dict) and isinstance(data.get("format"), int) and data["format"] > FORMAT:
        raise BadFile(f"{path}: a backup of a newer Gradewright (format {data['format']}); upgrade Gradewright")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        place = ".".join(str(part) for part in first["loc"])
        raise BadFile(f"{path}: {MANIFEST}: {place}: {first['msg']}; nothing was restored") from None


def _extract(archive: tarfile.TarFile, folder: Path, path: Path) -> None:
    """Every member into ``folder``, read as hostile: only folders and plain files, only the
    backup's own names, nothing outside ``folder`` (no absolute paths, no ``..``), no owner or
    special bits (``_checked``, on every Python: tarfile's filters arrived in 3.11.4, and Debian
    12's is 3.11.2); where tarfile has its ``data`` filter, it is applied as well."""
    try:
        members = [_checked(member) for member in archive.getmembers()]
        if hasattr(tarfile, "data_filter"):
            archive.extractall(folder, members=members, filter="data")
        else:  # Python < 3.11.4: what the data filter would refuse, _checked has refused
            archive.extractall(folder, members=members)
    except _Refused as exc:
        raise BadFile(f"{path}: {exc}; nothing was restored") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BadFile(f"{path}: cannot be read whole ({exc}); nothing was restored") from None


class _Refused(Exception):
    """A member a restore refuses (said with the archive's name by ``_extract``)."""


def _checked(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """The member as it may be extracted, or ``_Refused``: a plain file or a folder, under one of
    the backup's own names, relative and without ``..``, extracted as this user's with its
    permission bits only (no setuid, setgid or sticky bit; no write for others)."""
    name = PurePosixPath(member.name)
    if not (member.isfile() or member.isdir()):
        raise _Refused(f"{member.name!r}: links and special files are refused")
    if name.is_absolute():
        raise _Refused(f"member {member.name!r} has an absolute path")
    if ".." in name.parts:
        raise _Refused(f"{member.name!r} would be extracted outside the destination")
    top = name.parts[0] if name.parts else ""
    if top not in (MANIFEST, SQLITE_MEMBER, POSTGRES_MEMBER, STATE_MEMBER):
        raise _Refused(f"{member.name!r}: not a part of a backup")
    safe = shallow_copy(member)
    safe.mode = member.mode & 0o755 | (0o700 if member.isdir() else 0o600)
    safe.uid, safe.gid, safe.uname, safe.gname = os.getuid(), os.getgid(), "", ""
    return safe


def _refuse_occupied(state: Path, force: bool, what: str, ignore: set[Path]) -> None:
    if state.is_file():
        raise GradebookError(f"{state}: a file, not a {what}")
    if state.is_dir() and not force:
        held = [entry for entry in state.iterdir() if entry.absolute() not in {p.absolute() for p in ignore}]
        if held:
            raise GradebookError(
                f"{state}: the {what} holds files already; pass --force to replace it (it is kept beside, renamed)"
            )


def _prepare_sqlite(copy: Path, path: Path) -> Counts:
    """The extracted copy checked, then brought up to today's tables, before it is put in place."""
    try:
        connection = sqlite3.connect(copy)
        try:
            _checked_counts(connection, str(path))
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        raise BadFile(f"{path}: the gradebook's copy cannot be read ({exc}); nothing was restored") from None
    with Gradebook.open(copy):  # migrated where it lies; its later opens, at its new place, are another alias
        pass
    connection = sqlite3.connect(copy)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")  # one file to move; the next open sets WAL again
        return _checked_counts(connection, str(path))
    finally:
        connection.close()


def _refuse_full_database(url: str, force: bool) -> None:
    import psycopg

    _, arguments, where = _postgres(url)
    try:
        with psycopg.connect(**arguments, connect_timeout=30) as connection:
            count = _one(
                connection.execute("SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone()
            )
    except psycopg.Error as exc:
        raise GradebookUnavailable(f"{where}: cannot reach the database ({' '.join(str(exc).split())[:200]})") from None
    if count and not force:
        raise GradebookError(
            f"{where}: the database holds tables already; restore into an empty database "
            "(createdb NAME), or pass --force to replace what the backup holds"
        )


def _restore_postgres(url: str, dump: Path, force: bool, path: Path) -> tuple[Counts, str]:
    if not dump.is_file():
        raise BadFile(f"{path}: the database's dump is missing; nothing was restored")
    environment, _, where = _postgres(url)
    command = [
        _tool("pg_restore"),
        "--no-owner",
        "--no-privileges",
        "--exit-on-error",
        "--single-transaction",
        f"--dbname={environment.get('PGDATABASE', '')}",
    ]
    if force:
        command += ["--clean", "--if-exists"]
    _run_tool([*command, str(dump)], environment, where)
    with Gradebook.open(url=url) as book:  # today's tables: the gradebook's migrations
        from .models import Mark, Result, Student, Submission

        counts = book.run(
            lambda: Counts(
                students=book.objects(Student).count(),
                submissions=book.objects(Submission).count(),
                results=book.objects(Result).count(),
                marks=book.objects(Mark).count(),
            )
        )
    return counts, where
