"""``autograder marks groups`` and ``course exam marks groups``: a hand-graded question's answers in
the groups the marking page offers (gradebook.marking.groups), as a JSON list of groups, each a list
of student ids, largest first; or one line per group."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from course.wording import plural
from gradebook.marking.groups import DEFAULT_THRESHOLD, AnswerGroup
from untrusted.text import one_line

from .common import database_option, gradebook_options, number, open_book, open_service

DESCRIPTION = (
    "The answers gathered as the marking page's groups (Mark by groups): the same once case, spacing and "
    "punctuation are set aside, then near-duplicates whose similarity reaches the threshold; largest first."
)


def _common(command: argparse.ArgumentParser) -> None:
    command.add_argument("question", metavar="QUESTION")
    command.add_argument(
        "--threshold",
        type=number(float, 0, "a number from 0 to 1"),
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help=f"the similarity (0 to 1) an answer needs to join a group (default {DEFAULT_THRESHOLD:g}; 1: identical only)",
    )
    command.add_argument("--json", action="store_true", help="print a JSON list of groups, each a list of student ids")


def add_assignment_groups(marks_what: argparse._SubParsersAction) -> None:
    groups = marks_what.add_parser("groups", help="a question's answers in groups", description=DESCRIPTION)
    groups.add_argument("assignment", metavar="ASSIGNMENT")
    _common(groups)
    gradebook_options(groups, "the SQLite gradebook file (default ./gradebook.db)")
    groups.set_defaults(handler=_assignment_groups)


def add_exam_groups(marks_what: argparse._SubParsersAction) -> None:
    groups = marks_what.add_parser(
        "groups",
        help="an open question's answers typed online, in groups",
        description=DESCRIPTION + " The answers are those typed in the exam taken online, read from the site's "
        "database (an answer on a paper sheet has no text here: a group of its own).",
    )
    groups.add_argument("exam", type=Path, metavar="DIR")
    _common(groups)
    database_option(groups)
    groups.set_defaults(handler=_exam_groups)


def _assignment_groups(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from gradebook.marking.groups import assignment_groups

    spec = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book:
        found = assignment_groups(book, spec, args.question, args.threshold)
    return _print(found, args.json)


def _exam_groups(args: argparse.Namespace) -> int:
    open_service(args)
    from service.marking.groups import exam_groups

    return _print(exam_groups(args.exam, args.question, args.threshold), args.json)


def _print(groups: list[AnswerGroup], as_json: bool) -> int:
    if as_json:
        print(json.dumps([group.members for group in groups]))
        return 0
    for n, group in enumerate(groups, start=1):
        members = one_line(" ".join(group.members))
        print(f"group {n}: {plural(len(group), 'answer')}: {members}")
    return 0
