"""The ``autograder`` command: parses arguments, calls one library function, formats the result.

Its subcommands live by group, each defined beside its handler: ``authoring`` (new, assign, fetch),
``grading`` (grade, release,
doctor, verify, check), ``gradebook`` (marks, reports, history, stats, roster, grades, similarity,
extend), ``store`` (gradebook upgrade, backup, restore), ``service`` (serve, worker, links,
accounts, login, submit) and ``platforms`` (lti, export, gradescope-run).

Exit codes: ``grade`` 0 when every submission was graded, 1 when some could not be read or run;
``check`` 0 when the public tests pass, 1 when some fail; ``verify`` 0 when every known submission
gets its verdict under every secret, 1 when some do not; 2 for a usage error or bad input (one
line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .. import common
from . import authoring, gradebook, grading, platforms, service, store
from .service import _password

# Each command imports what it needs when it runs (numpy, pytest, pydantic, nbgrader, rich's tables):
# `autograder --help` and `--version` load none of them and start at once.

PROG = common.AUTOGRADER
__all__ = ["PROG", "build_parser", "main", "_password"]


def main(argv: Sequence[str] | None = None) -> int:
    return common.run(PROG, build_parser, argv, "interrupted; everything graded so far is in the gradebook")


def build_parser() -> argparse.ArgumentParser:
    parser = common.parser(
        PROG,
        "Release and grade a course's assignments. The course is the course.toml in the working directory or "
        "above it, or --course DIR; an assignment is named as course.toml lists it, or given by path.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for group in (authoring, grading, gradebook, store, service, platforms):
        group.add_commands(commands)
    return parser
