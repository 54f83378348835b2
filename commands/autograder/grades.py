"""``autograder grades``: ``export`` (the file a course platform imports), ``count`` (the submission
that counts), and ``publish`` and ``unpublish``: the staff publish an assignment's grades (or one
hand-graded question's marks) when they have reviewed them, or undo it (gradebook.publishing)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from course.wording import plural
from gradebook.formats import GRADE_FORMATS, MISSING
from untrusted.text import one_line

from ..common import gradebook_options as _options
from ..common import open_book, shown
from .counting import add_count

if TYPE_CHECKING:
    from gradebook.publishing import PublicationEntry


def gradebook_options(command: argparse.ArgumentParser, gradebook_help: str | None = None) -> None:
    _options(
        command,
        gradebook_help
        or "the SQLite gradebook file (default: the course's, <course>/.gradewright/gradebook.db; outside a course "
        "./gradebook.db)",
    )


def _add_publish(grades_what: argparse._SubParsersAction) -> None:
    for name, published in (("publish", True), ("unpublish", False)):
        command = grades_what.add_parser(
            name,
            help="publish an assignment's grades" if published else "undo publishing an assignment's grades",
            description=(
                "Publish the assignment's grades (--question: one hand-graded question's marks): its students then "
                "see the checks shown after_published and their hand marks, grade files write its scores and LTI "
                "sends them as FullyGraded. Kept with who and --reason in the history."
                if published
                else "Undo publishing: the students see again only what the visibility allows before publishing, "
                "and grade files leave the assignment out unless asked. Kept with who and --reason in the history."
            ),
        )
        command.add_argument("assignment", metavar="ASSIGNMENT")
        command.add_argument("--question", metavar="ID", help="a hand-graded question's marks alone")
        command.add_argument("--reason", default="", metavar="TEXT", help="why, kept with it")
        gradebook_options(command, "the SQLite gradebook file (default: the course's)")
        command.set_defaults(handler=_publish, published=published)


def _publish(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignments
    from gradebook.publishing import publish

    (spec,) = find_assignments([args.assignment], args.course)
    with open_book(args, create=False) as book:
        publish(book, spec, args.question, args.published, args.reason)
    what = f"question {shown(args.question)}'s marks" if args.question else "grades"
    print(f"{spec.name}: {what} {'published' if args.published else 'unpublished'}")
    return 0


def print_publications(published: list[PublicationEntry]) -> None:
    """The staff's publishing of grades and its undoing, under ``autograder history``'s table."""
    for entry in published:
        what = f"question {shown(entry.question)}'s marks" if entry.question else "grades"
        done = "published" if entry.published else "unpublished"
        why = f": {one_line(entry.reason)}" if entry.reason else ""
        print(f"{entry.at} {shown(entry.assignment)}: {what} {done} by {shown(entry.by) or 'someone'}{why}")


def add_grades(commands: argparse._SubParsersAction) -> None:
    grades = commands.add_parser("grades", help="grades out to course platforms", description="Grade files.")
    grades_what = grades.add_subparsers(title="what", metavar="WHAT", required=True)
    grades_export = grades_what.add_parser(
        "export",
        help="write the file a course platform imports",
        description="One row per student (on the roster or with a submission) and one column per assignment: the "
        "final score (marks included, late penalty taken off). canvas: Canvas's gradebook import CSV (a column is "
        "'Title (id)' where assignment.toml sets canvas_assignment_id, else matched by title); moodle: Moodle's grade "
        "import CSV (ID number, Email address: the warnings say which to map by); csv: plain.",
    )
    grades_export.add_argument("assignments", nargs="+", metavar="ASSIGNMENT")
    grades_export.add_argument("--format", choices=list(GRADE_FORMATS), required=True)
    grades_export.add_argument("--out", type=Path, required=True, metavar="FILE")
    grades_export.add_argument(
        "--missing",
        choices=list(MISSING),
        default="empty",
        help="a student with no submission: an empty cell (default; Moodle clears the grade it has), zero, or skip "
        "(no row for a student who handed in none of these assignments: the platform keeps what it has)",
    )
    grades_export.add_argument(
        "--unpublished",
        action="store_true",
        help="write the scores of assignments whose grades are not published too (default: leave them out)",
    )
    gradebook_options(grades_export)
    grades_export.set_defaults(handler=_grades_export)
    add_count(grades_what)
    _add_publish(grades_what)


def _grades_export(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignments
    from gradebook.exports import export_grades

    specs = find_assignments(args.assignments, args.course)
    with open_book(args, create=False) as book:
        path, table = export_grades(book, specs, args.format, args.out, args.missing, args.unpublished)
    print(
        f"{one_line(str(path))}: {plural(len(table.students), 'student')}, {plural(len(specs) - len(table.held), 'assignment')}"
    )
    for name in table.held:
        print(f"left out: {name}: its grades are not published (autograder grades publish, or --unpublished)")
    for warning in table.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    return 0
