"""``autograder grades count``: make any of a student's submissions the one that counts for their
grade, or undo that choice, with why (gradebook.counting.choose); ``autograder history`` shows each
choice with who and why."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from untrusted.text import one_line

from ..common import gradebook_options, open_book, shown

if TYPE_CHECKING:
    from gradebook.history import ChoiceEntry


def add_count(grades_what: argparse._SubParsersAction) -> None:
    count = grades_what.add_parser(
        "count",
        help="choose the submission that counts for a student's grade, or undo the choice",
        description="Make one of a student's submissions (its id, as `autograder history` lists them) the one their "
        "grade on the assignment is, whatever the assignment's rule (counts in assignment.toml) says; or, with "
        "--undo, let the rule decide again. Each is kept with who made it and --reason, and shown in the history.",
    )
    count.add_argument("student", metavar="STUDENT")
    count.add_argument("assignment", metavar="ASSIGNMENT")
    which = count.add_mutually_exclusive_group(required=True)
    which.add_argument("--submission", type=int, metavar="ID", help="the submission that counts from now on")
    which.add_argument("--undo", action="store_true", help="undo the choice: the assignment's rule decides again")
    count.add_argument("--reason", required=True, metavar="TEXT", help="why, kept with the choice")
    gradebook_options(count, "the SQLite gradebook file (default: the course's)")
    count.set_defaults(handler=_count)


def _count(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignments
    from gradebook.counting import choose
    from gradebook.grades import COUNTS_HELP

    (spec,) = find_assignments([args.assignment], args.course)
    with open_book(args, create=False) as book:
        choice = choose(book, spec, args.student, None if args.undo else args.submission, args.reason)
    if choice.submission_id is None:
        print(f"{shown(args.student)} on {spec.name}: the choice is undone; {COUNTS_HELP[spec.counts]}")
    else:
        print(f"{shown(args.student)} on {spec.name}: submission {choice.submission_id} is the one that counts now")
    return 0


def print_choices(chosen: list[ChoiceEntry]) -> None:
    """The staff's choices of the submission that counts, under ``autograder history``'s table."""
    for choice in chosen:
        what = (
            f"submission {choice.submission} made the one that counts"
            if choice.submission is not None
            else "choice undone: the rule decides"
        )
        by = shown(choice.chosen_by) or "someone"
        print(f"{choice.chosen_at} {shown(choice.assignment)}: {what} by {by}: {one_line(choice.reason)}")
