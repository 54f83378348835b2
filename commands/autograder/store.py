"""``autograder gradebook``: the gradebook itself (upgrade from the older format, backup and
restore, with the service's state folder)."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.wording import plural
from untrusted.text import one_line

from ..common import gradebook_options


def add_commands(commands: argparse._SubParsersAction) -> None:
    gradebook = commands.add_parser("gradebook", help="the gradebook itself", description="The gradebook itself.")
    gradebook_what = gradebook.add_subparsers(title="what", metavar="WHAT", required=True)
    for add in (_add_upgrade, _add_backup, _add_restore):
        add(gradebook_what)


def _add_upgrade(gradebook_what: argparse._SubParsersAction) -> None:
    upgrade = gradebook_what.add_parser(
        "upgrade",
        help="convert a gradebook of the older format",
        description="Convert a gradebook.db of the older format (tables submissions and grades) in place, every "
        "row kept; the old file stays beside it as gradebook.db.old.",
    )
    upgrade.add_argument("--gradebook", type=Path, default=Path("gradebook.db"), metavar="PATH")
    upgrade.set_defaults(handler=_upgrade)


def _upgrade(args: argparse.Namespace) -> int:
    from gradebook.legacy import upgrade

    result = upgrade(args.gradebook)
    print(
        f"{one_line(str(args.gradebook))}: {plural(result.submissions, 'submission')} converted; "
        f"the old file is {one_line(str(result.kept_as))}"
    )
    return 0


def _state_options(command: argparse.ArgumentParser) -> None:
    place = command.add_mutually_exclusive_group()
    place.add_argument(
        "--state", type=Path, metavar="DIR", help="the service's state folder (default <course>/.gradewright/)"
    )
    place.add_argument("--no-state", action="store_true", help="the gradebook alone, without the state folder")


def _state_folder(args: argparse.Namespace, must_exist: bool) -> Path | None:
    """--state, else the course's .gradewright/ (for a backup: where there is one), else None."""
    from service.settings import course_state_folder

    if args.no_state:
        return None
    if args.state is not None:
        return args.state
    return course_state_folder(args.course, must_exist)


def _add_backup(gradebook_what: argparse._SubParsersAction) -> None:
    backup = gradebook_what.add_parser(
        "backup",
        help="write a consistent copy of the gradebook and the service's state to one file",
        description="Write FILE (a .tar.gz, readable by you only: it holds the grades and the service's secret key): "
        "the gradebook (SQLite's online backup, or pg_dump for PostgreSQL), safe while the service, workers and "
        "graders run, and the service's state folder (<course>/.gradewright/: uploads, reports, released notebooks, "
        "the secret key). The gradebook: --database-url or $GRADEWRIGHT_DATABASE_URL, else --gradebook, else the "
        "state folder's gradebook.db, else ./gradebook.db.",
    )
    backup.add_argument("file", type=Path, metavar="FILE")
    gradebook_options(
        backup, "the SQLite gradebook file (default <course>/.gradewright/gradebook.db, else ./gradebook.db)"
    )
    _state_options(backup)
    backup.set_defaults(handler=_backup)


def _backup(args: argparse.Namespace) -> int:
    from gradebook.backup import backup

    state = _state_folder(args, must_exist=True)
    made = backup(args.file, args.gradebook, args.database_url, state)
    counts = made.manifest.counts
    print(
        f"{one_line(str(made.out))}: {plural(counts.submissions, 'submission')} ({plural(counts.results, 'result')}), "
        f"{plural(counts.marks, 'mark')}, {plural(counts.students, 'student')}"
        + (
            f"; the state folder {one_line(str(state))}, {plural(made.state_files, 'file')}"
            if state is not None
            else "; no state folder"
        )
    )
    return 0


def _add_restore(gradebook_what: argparse._SubParsersAction) -> None:
    restore = gradebook_what.add_parser(
        "restore",
        help="bring a course's gradebook and state back from a backup",
        description="Restore FILE (written by gradebook backup): the gradebook into --gradebook PATH (default: where "
        "the service keeps it, <course>/.gradewright/gradebook.db, when it was there) or into the empty database "
        "--database-url names, and the service's state folder into <course>/.gradewright/; then bring the gradebook "
        "up to this version's tables. Refuses to replace a gradebook, database or state folder that holds anything, "
        "unless --force (a file or folder there is kept, renamed; a database's tables are replaced). Stop the "
        "service and its workers first.",
    )
    restore.add_argument("file", type=Path, metavar="FILE")
    gradebook_options(
        restore, "the SQLite gradebook file (default <course>/.gradewright/gradebook.db when the backup's was there)"
    )
    _state_options(restore)
    restore.add_argument(
        "--force", action="store_true", help="replace what is there (a file or folder is kept, renamed)"
    )
    restore.set_defaults(handler=_restore)


def _restore(args: argparse.Namespace) -> int:
    from gradebook.backup import restore

    restored = restore(
        args.file,
        args.gradebook,
        args.database_url,
        _state_folder(args, must_exist=False),
        force=args.force,
        skip_state=args.no_state,
    )
    counts, made = restored.counts, restored.manifest
    print(
        f"{one_line(restored.gradebook)}: {plural(counts.submissions, 'submission')} ({plural(counts.results, 'result')}), "
        f"{plural(counts.marks, 'mark')}, {plural(counts.students, 'student')}, from the backup of "
        f"{made.created_at:%Y-%m-%d %H:%M:%S} UTC ({one_line(made.grader_version)})"
    )
    if restored.state is not None:
        print(f"{one_line(str(restored.state))}: the service's state folder")
    for path in restored.moved_aside:
        print(f"kept what was there as {one_line(str(path))}")
    return 0
