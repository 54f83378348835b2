"""``autograder new`` and ``assign``: an assignment written in one master notebook, and the folder
the grader reads written from it; ``fetch``: a student's own notebook of it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course.wording import plural
from untrusted.text import one_line

from ..common import AUTOGRADER


def add_commands(commands: argparse._SubParsersAction) -> None:
    new = commands.add_parser(
        "new",
        help="write a master notebook to start an assignment from",
        description="Write assignments/NAME/NAME.master.ipynb (under the course's root, or --out DIR): an assignment "
        "in one notebook, with one question of each kind (a function, a function that uses it, a written answer), "
        "which assign, verify and grade accept as it stands.",
    )
    new.add_argument("name", metavar="NAME", help="the assignment's name: lowercase words joined by -")
    new.add_argument("--title", help="its title (default: from the name)")
    new.add_argument("--out", type=Path, metavar="DIR", help="the folder to write it in (default assignments/NAME)")
    new.set_defaults(handler=_new)
    assign = commands.add_parser(
        "assign",
        help="write an assignment's folder from its master notebook",
        description="Read a master notebook and write the assignment's folder: assignment.toml, the source notebook, "
        "hidden/test_*.py, the reference, known/ with verdicts.toml; and list the folder in course.toml. Files edited "
        "by hand since assign wrote them are named and nothing is written (--force replaces them). Exit 0 when "
        "written, 2 otherwise. The solution is run (unsandboxed: your own code) against its public tests first, and a "
        "solution that fails one is refused. Saved outputs are left out of the student's notebook, with a warning.",
    )
    assign.add_argument("notebook", type=Path, metavar="NOTEBOOK", help="the master notebook")
    assign.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="the assignment's folder (default: the notebook's folder when it has the assignment's name, else a "
        "folder of that name beside it)",
    )
    assign.add_argument("--force", action="store_true", help="replace files edited by hand")
    assign.set_defaults(handler=_assign)
    fetch = commands.add_parser(
        "fetch",
        help="write a student's own notebook of an assignment",
        description="Write STUDENT's notebook of the assignment into DIR: the released notebook, with the values drawn "
        "for that student (the assignment's [parameters]) in its cell tagged parameters. The same student always "
        "gets the same values; the grader draws them again from the student's id. With several --student, each "
        "student's goes into DIR/STUDENT/. A notebook there already is kept (exit 2, nothing written) unless "
        "--overwrite. An assignment without parameters gives the released notebook.",
    )
    fetch.add_argument("assignment", metavar="ASSIGNMENT")
    fetch.add_argument(
        "--student",
        required=True,
        action="append",
        metavar="STUDENT",
        help="the student's id, as grading names them (again for more students)",
    )
    fetch.add_argument("--out", type=Path, required=True, metavar="DIR")
    fetch.add_argument("--overwrite", action="store_true", help="replace a notebook there already")
    fetch.set_defaults(handler=_fetch)


def _new(args: argparse.Namespace) -> int:
    from autograder.authoring.template import new_master
    from course.folder import course_or_none

    course = course_or_none(args.course)
    folder = args.out or (course.root if course else Path.cwd()) / "assignments" / args.name
    path = new_master(args.name, folder, args.title)
    print(one_line(str(path)))
    print(f"next: edit it, then {AUTOGRADER} assign {one_line(str(path))}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from autograder.release import release_copies, student_folder

    students = list(dict.fromkeys(args.student))  # each once, in the order given
    folders = [args.out] if len(students) == 1 else [student_folder(args.out, student) for student in students]
    assignment = find_assignment(args.assignment, args.course)
    copies = list(zip(folders, students, strict=True))
    for path in release_copies(assignment, copies, overwrite=args.overwrite):
        print(one_line(str(path)))
    return 0


def _assign(args: argparse.Namespace) -> int:
    from autograder.authoring.assign import AssignRefused, assign
    from course.folder import COURSE_FILE, course_or_none

    course = course_or_none(args.course)
    try:
        done = assign(args.notebook, args.out, course.root / COURSE_FILE if course else None, args.force)
    except AssignRefused as refused:
        for problem in refused.problems:
            print(f"{AUTOGRADER}: {one_line(problem)}", file=sys.stderr)
        print(f"{AUTOGRADER}: nothing written", file=sys.stderr)
        return 2
    for rel in done.written:
        print(f"wrote {one_line(str(done.folder / rel))}")
    for rel in done.removed:
        print(f"removed {one_line(str(done.folder / rel))} (the master no longer writes it)")
    if done.unchanged:
        print(f"{plural(len(done.unchanged), 'file')} already up to date")
    if done.registered:
        print(f"listed {one_line(str(done.folder))} in {one_line(str(done.registered))}")
    for warning in done.warnings:
        print(f"{AUTOGRADER}: warning: {one_line(warning)}", file=sys.stderr)
    return 0
