"""The ``course`` command: parses arguments, calls one library function, formats the result.

Exit codes: 0 success, 2 bad input or a usage error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from rich.console import Console

from .catalog import DEFAULT_FOLDER, Catalog, load_catalog, load_folder
from .errors import CourseError, Problem
from .render import lesson_text, lessons_table

PROG = "course"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CourseError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        print(f"{PROG}: internal error ({type(exc).__name__}: {exc}); please report it", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Lessons of Module 10, Sequences and attention: check, list and show them."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    validate = commands.add_parser(
        "validate",
        help="check lesson files and folders; one line per problem",
        description="Check lesson files and folders. Prints FILE: WHERE: WHAT for each problem "
        "(a JSON pointer for JSON, a line number for Markdown and text); exit 0 when all are valid, 2 otherwise.",
    )
    validate.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a lesson file or a folder of them")
    validate.set_defaults(handler=_validate)

    lessons = commands.add_parser(
        "lessons", help="list the lessons in a folder", description="List the lessons found in a folder as a table."
    )
    lessons.add_argument(
        "folder",
        nargs="?",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="FOLDER",
        help=f"the folder to list (default: {DEFAULT_FOLDER}/)",
    )
    lessons.set_defaults(handler=_lessons)

    show = commands.add_parser(
        "show",
        help="print one lesson as text, or as JSON",
        description="Print one lesson, found by its slug, as readable text or (with --json) as its model.",
    )
    show.add_argument("slug", metavar="SLUG", help="the lesson's slug, as `course lessons` lists it")
    show.add_argument("--json", action="store_true", help="print the lesson's model as JSON")
    show.add_argument(
        "--lessons",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="FOLDER",
        help=f"where to look for lessons (default: {DEFAULT_FOLDER}/)",
    )
    show.set_defaults(handler=_show)
    return parser


def _validate(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.paths)
    _print_problems(catalog.problems, sys.stdout)
    counts = [
        (catalog.files, "file"),
        (len(catalog.lessons), "lesson"),
        (len(catalog.errors), "error"),
        (len(catalog.warnings), "warning"),
    ]
    (files, lessons, errors, warnings) = [_plural(n, word) for n, word in counts]
    print(f"{files}: {lessons}, {errors}, {warnings}", file=sys.stderr)
    return 2 if catalog.errors else 0


def _lessons(args: argparse.Namespace) -> int:
    catalog = load_folder(args.folder)
    if catalog.lessons:
        _console().print(lessons_table(catalog))
    else:
        print(f"no lessons in {args.folder}", file=sys.stderr)
    _print_problems(catalog.problems, sys.stderr)
    return 2 if catalog.errors else 0


def _show(args: argparse.Namespace) -> int:
    catalog: Catalog = load_folder(args.lessons)
    lesson = catalog.lesson(args.slug)
    sys.stdout.write(lesson.model_dump_json(indent=2) + "\n" if args.json else lesson_text(lesson))
    return 0


def _print_problems(problems: list[Problem], stream) -> None:
    for problem in problems:
        print(problem, file=stream)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _console() -> Console:
    # A pipe gets a wide table rather than rich's 80-column default, so nothing is cut.
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)


def _version() -> str:
    try:
        return version("module10-autograder")
    except PackageNotFoundError:
        return "unknown"
