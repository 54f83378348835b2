"""The ``course`` command: parses arguments, calls one library function, formats the result.

Exit codes: 0 success, 2 bad input or a usage error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from course.errors import Problem
from course.formats import EXPORT_FORMATS as EXPORTERS
from course.wording import plural

from . import common
from .common import console
from .course_exam import add_exam

# Each command imports what it needs when it runs (jsonschema, lxml, matplotlib, the exporters):
# `course --help` and `course --version` load none of them and start at once.

PROG = common.COURSE


def main(argv: Sequence[str] | None = None) -> int:
    return common.run(PROG, build_parser, argv, "interrupted")


def build_parser() -> argparse.ArgumentParser:
    parser = common.parser(
        PROG,
        "A course's lessons, check questions and exams: check, list, show, export, import, build and grade them. "
        "The course is the course.toml in the working directory or above it, or --course DIR.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for add in (_add_init, _add_validate, _add_lessons, _add_show, _add_export, _add_import, add_exam):
        add(commands)
    return parser


def _add_validate(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser(
        "validate",
        help="check lesson files and folders, and assignments; one line per problem",
        description="Check lesson files and folders, and assignment folders (the manifest, the source notebook's "
        "graded cells and points, the hidden tests' questions, the references' functions, math Jupyter renders). "
        "With no PATH, the course's lessons and every assignment. Prints FILE: WHERE: WHAT for each problem "
        "(a JSON pointer for JSON, a line number for Markdown and text, a cell for notebooks); exit 0 when all are "
        "valid, 2 otherwise.",
    )
    validate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="lesson files or folders, assignment folders (default: the course's lessons and assignments)",
    )
    validate.set_defaults(handler=_validate)


def _validate(args: argparse.Namespace) -> int:
    from autograder.assignment_checks import assignments_problems
    from course.catalog import load_catalog

    folders, found = assignments_problems(args.paths, args.course)
    lessons = [path for path in args.paths if path not in folders]
    catalog = load_catalog(_lesson_paths(args, lessons), item_writing=True) if lessons or not args.paths else None
    problems = [*(catalog.problems if catalog else []), *found]
    _print_problems(problems, sys.stdout)
    errors = sum(problem.severity == "error" for problem in problems)
    files, *rest = [
        plural(n, word)
        for n, word in [
            (catalog.files if catalog else 0, "file"),
            (len(catalog.lessons) if catalog else 0, "lesson"),
            *([(len(folders), "assignment")] if folders else []),  # assignments checked: say how many
            (errors, "error"),
            (len(problems) - errors, "warning"),
        ]
    ]
    print(f"{files}: {', '.join(rest)}", file=sys.stderr)
    return 2 if errors else 0


def _add_init(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init",
        help="write a new course folder",
        description="Write a new course skeleton into DIR: course.toml, one module with an example lesson, and an "
        "example assignment (source notebook, hidden test, reference, known submission) that validates, releases "
        "and grades out of the box.",
    )
    init.add_argument("folder", type=Path, metavar="DIR")
    init.add_argument("--title", default="A new course", help="the course's title")
    init.set_defaults(handler=_init)


def _init(args: argparse.Namespace) -> int:
    from course.folder import init_course

    course = init_course(args.folder, args.title)
    print(
        f"{args.folder}: course {course.title!r} with {plural(len(course.modules), 'module')} and an example assignment"
    )
    print(
        f"next: cd {args.folder} && course validate && autograder grade example assignments/example/known --out graded"
    )
    return 0


def _lesson_paths(args: argparse.Namespace, given: list[Path] | Path | None) -> list[Path]:
    from course.folder import lesson_paths

    return lesson_paths(given, args.course)


def _course_or_none(args: argparse.Namespace):
    from course.folder import course_or_none

    return course_or_none(args.course)


def _add_lessons(commands: argparse._SubParsersAction) -> None:
    lessons = commands.add_parser(
        "lessons", help="list the lessons in a folder", description="List the lessons found in a folder as a table."
    )
    lessons.add_argument(
        "folder", nargs="?", type=Path, metavar="FOLDER", help="the folder to list (default: the course's lessons)"
    )
    lessons.set_defaults(handler=_lessons)


def _lessons(args: argparse.Namespace) -> int:
    from course.catalog import load_lessons
    from course.lesson_text import lessons_table

    folders = _lesson_paths(args, args.folder)
    catalog = load_lessons(folders)
    if catalog.lessons:
        console().print(lessons_table(catalog))
    else:
        print(f"no lessons in {', '.join(map(str, folders))}", file=sys.stderr)
    _print_problems(catalog.problems, sys.stderr)
    return 2 if catalog.errors else 0


def _add_show(commands: argparse._SubParsersAction) -> None:
    show = commands.add_parser(
        "show",
        help="print one lesson as text, or as JSON",
        description="Print one lesson, found by its slug, as readable text or (with --json) as its model.",
    )
    show.add_argument("slug", metavar="SLUG", help="the lesson's slug, as `course lessons` lists it")
    show.add_argument("--json", action="store_true", help="print the lesson's model as JSON")
    show.add_argument("--student", metavar="ID", help="draw generated checks for this student (default: preview)")
    show.add_argument(
        "--lessons", type=Path, metavar="FOLDER", help="where to look for lessons (default: the course's lessons)"
    )
    show.set_defaults(handler=_show)


def _show(args: argparse.Namespace) -> int:
    from course.catalog import load_lessons
    from course.lesson_text import lesson_text

    lesson = load_lessons(_lesson_paths(args, args.lessons)).lesson(args.slug)
    sys.stdout.write(lesson.model_dump_json(indent=2) + "\n" if args.json else lesson_text(lesson, args.student))
    return 0


def _add_export(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export", help="export check questions for course platforms", description="Export content for course platforms."
    )
    export_what = export.add_subparsers(title="what", metavar="WHAT", required=True)
    export_checks_command = export_what.add_parser(
        "checks",
        help="every check question, in a platform's format",
        description="Export every check question of the lessons, with per-option feedback, in one of: "
        f"{', '.join(EXPORTERS)}. The same input always gives byte-identical output.",
    )
    export_checks_command.add_argument(
        "--format", required=True, choices=list(EXPORTERS), metavar="FORMAT", help=f"one of {', '.join(EXPORTERS)}"
    )
    export_checks_command.add_argument(
        "--out", required=True, type=Path, metavar="PATH", help="the file to write (a folder, or a .tar.gz, for olx)"
    )
    export_checks_command.add_argument("--title", help="the export's title (default: from course.toml)")
    export_checks_command.add_argument(
        "--variants",
        type=common.number(int, 1, "a count"),
        default=0,
        metavar="N",
        help="each generated question as a pool of N drawn variants, of which each student gets one (moodle: a "
        "numeric one whose formula it can compute as a calculated question with N drawn sets of values)",
    )
    export_checks_command.add_argument(
        "--olx-unit",
        choices=["course", "library"],
        default="course",
        help="for olx: a whole course (default), or a content library that Studio imports beside an existing "
        "course without replacing its content",
    )
    export_checks_command.add_argument(
        "lessons",
        nargs="*",
        type=Path,
        metavar="LESSON_PATH",
        help="lesson files or folders (default: the course's lessons)",
    )
    export_checks_command.set_defaults(handler=_export_checks)


def _export_checks(args: argparse.Namespace) -> int:
    from course.exports import DEFAULT_TITLE, export_checks

    fmt = "olx-library" if args.format == "olx" and args.olx_unit == "library" else args.format
    course = _course_or_none(args)
    title = args.title or (course.checks_title() if course else DEFAULT_TITLE)
    result = export_checks(_lesson_paths(args, args.lessons), fmt, args.out, title=title, variants=args.variants)
    pools = f", {plural(result.pools, 'pool')} of variants" if result.pools else ""
    print(f"{result.path}: {plural(result.checks, 'check')} from {plural(result.lessons, 'lesson')}{pools} ({fmt})")
    return 0


def _add_import(commands: argparse._SubParsersAction) -> None:
    import_command = commands.add_parser(
        "import",
        help="import check questions from course platforms",
        description="Import content from course platforms.",
    )
    import_what = import_command.add_subparsers(title="what", metavar="WHAT", required=True)
    import_checks_command = import_what.add_parser(
        "checks",
        help="check questions from QTI 2.1, Moodle XML or GIFT into a lesson file",
        description="Read check questions from a QTI 2.1 package or item, a Moodle XML file or a GIFT file "
        "(told apart by content) and write them as a lesson file in the lesson JSON format.",
    )
    import_checks_command.add_argument("file", type=Path, metavar="FILE")
    import_checks_command.add_argument("--out", required=True, type=Path, metavar="LESSON_FILE")
    import_checks_command.set_defaults(handler=_import_checks)


def _import_checks(args: argparse.Namespace) -> int:
    from course.imports import import_checks

    path, count = import_checks(args.file, args.out)
    print(f"{path}: {plural(count, 'check')} imported")
    return 0


def _print_problems(problems: list[Problem], stream: TextIO) -> None:
    for problem in problems:
        print(problem, file=stream)
