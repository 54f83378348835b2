"""``autograder grades publish`` and ``unpublish``: the staff publish an assignment's grades (or one
hand-graded question's marks) when they have reviewed them, or undo it (gradebook.publishing)."""

from __future__ import annotations

import argparse

from ..common import gradebook_options, shown


def add_publish(grades_what: argparse._SubParsersAction) -> None:
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

    from ..common import open_book

    (spec,) = find_assignments([args.assignment], args.course)
    with open_book(args, create=False) as book:
        publish(book, spec, args.question, args.published, args.reason)
    what = f"question {shown(args.question)}'s marks" if args.question else "grades"
    print(f"{spec.name}: {what} {'published' if args.published else 'unpublished'}")
    return 0
