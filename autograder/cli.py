"""The ``autograder`` command: parses arguments, calls one library function, formats the result.

Exit codes: ``grade`` 0 when every submission was graded, 1 when some could not be read or run;
``check`` 0 when the public tests pass, 1 when some fail; 2 for a usage error or bad input (one
line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from untrusted.text import one_line

from .errors import AutograderError
from .version import grader_version

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from .batch import BatchResult

# Each command imports what it needs when it runs (numpy, pytest, pydantic, nbgrader, rich's tables):
# `autograder --help` and `--version` load none of them and start at once.

PROG = "autograder"
STATUS_STYLE = {
    "passed": "green",
    "partial": "yellow",
    "failed": "red",
    "error": "red",
    "timeout": "red",
    "manual": "blue",
    "not_graded": "magenta",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    received: list[int] = []
    previous = _on_termination(received)
    try:
        return args.handler(args)
    except AutograderError as exc:
        print(f"{PROG}: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Every grading process and sandbox has been ended by now (the batch kills them on its way out).
        print(f"{PROG}: interrupted; everything graded so far is in the gradebook", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        print(f"{PROG}: internal error ({type(exc).__name__}: {one_line(str(exc))}); please report it", file=sys.stderr)
        return 2
    finally:
        _restore(previous)


def _on_termination(received: list[int]) -> dict[int, object]:
    """SIGTERM (what ``kill`` and ``timeout`` send) and SIGINT stop the command the way Ctrl-C does:
    as a KeyboardInterrupt, which ends the batch's processes before the command exits."""

    def interrupt(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous: dict[int, object] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            previous[signum] = signal.signal(signum, interrupt)
        except ValueError:  # not the main thread (the command called from a library): leave them be
            break
    return previous


def _restore(previous: dict[int, object]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)  # type: ignore[arg-type]


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line naming the option, with a pointer to --help."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _number(kind: Callable[[str], float], least: float, what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not value >= least or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Release and grade a course's assignments. The course is the course.toml in the working "
        "directory or above it, or --course DIR; an assignment is named as course.toml lists it, or given by path.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {grader_version()}")
    parser.add_argument(
        "--course", type=Path, metavar="DIR", help="the course's folder (default: the course.toml here or above)"
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    grade = commands.add_parser(
        "grade", help="grade submissions in the sandbox",
        description="Grade notebooks and .py files against the assignment's hidden tests, each in a sandboxed "
        "worker. Writes DIR/<student>.json, DIR/<student>.feedback.txt, DIR/<student>.gradescope.json, "
        "DIR/grades.csv and the gradebook. Exit 0 when every submission was graded, 1 when some could not be "
        "read or run, 2 for a usage error.",
    )  # fmt: skip
    grade.add_argument("assignment", metavar="ASSIGNMENT", help="an assignment of the course, by name, or its folder")
    grade.add_argument(
        "submissions",
        nargs="+",
        type=Path,
        metavar="SUBMISSION",
        help=".ipynb or .py files, or folders of them (nbgrader's submitted/<student>/ layout too)",
    )
    grade.add_argument("--out", type=Path, required=True, metavar="DIR", help="where the reports go")
    grade.add_argument(
        "--jobs",
        type=_number(int, 1, "a whole number of at least 1"),
        default=os.cpu_count() or 1,
        metavar="N",
        help="submissions graded at once (default: the number of cores)",
    )
    grade.add_argument(
        "--reference",
        default="auto",
        metavar="NAME",
        help="a reference the assignment names (references in assignment.toml); auto (the default) is torch "
        "on a GPU, the first named elsewhere (numpy for the shipped course)",
    )
    grade.add_argument(
        "--timeout", type=_number(float, 0.001, "a positive number of seconds"), metavar="SECONDS",
        help="time limit per call (default: the assignment's, 10 s)",
    )  # fmt: skip
    grade.add_argument(
        "--memory", type=_number(int, 64, "a whole number of MiB, at least 64"), metavar="MIB",
        help="memory limit per worker (default 2048 MiB)",
    )  # fmt: skip
    grade.add_argument("--gradebook", type=Path, metavar="PATH", help="the SQLite gradebook (default DIR/gradebook.db)")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded with the same hash")
    grade.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, else a local pool)",
    )
    grade.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run student code without the sandbox (only where the sandbox cannot start)",
    )
    grade.set_defaults(handler=_grade)

    release_command = commands.add_parser(
        "release", help="write the student version of an assignment",
        description="Write the student notebook: solutions replaced by stubs, hidden tests removed, outputs "
        "cleared, test cells locked (nbgrader's preprocessors).",
    )  # fmt: skip
    release_command.add_argument("assignment", metavar="ASSIGNMENT")
    release_command.add_argument("--out", type=Path, required=True, metavar="DIR")
    release_command.set_defaults(handler=_release)

    doctor = commands.add_parser(
        "doctor", help="say whether this machine can grade the course, and with what",
        description="Check what the sandbox needs (bubblewrap, user namespaces, seccomp, the course's packages, "
        "control groups), then start it with the course's packages and report what it sees inside. Exit 0 when "
        "the course can be graded here, 1 otherwise.",
    )  # fmt: skip
    doctor.add_argument("--unsafe-no-sandbox", action="store_true", help="check the unsafe runner instead")
    doctor.set_defaults(handler=_doctor)

    check = commands.add_parser(
        "check", help="run a notebook's public tests (for students)",
        description="Run a notebook and its public tests, quickly and without the sandbox, and say which "
        "questions pass. Exit 0 when all pass, 1 otherwise.",
    )  # fmt: skip
    check.add_argument("notebook", type=Path, metavar="NOTEBOOK")
    check.add_argument("--question", metavar="ID", help="only this question's public tests")
    check.set_defaults(handler=_check)
    return parser


def _grade(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .batch import GradeOptions, grade_batch
    from .distributed import dask_executor, scheduler_address
    from .submissions import find_submissions

    assignment = _assignment(args)
    discovery = find_submissions(args.submissions, preferred=assignment.released_notebook)
    submissions = discovery.submissions
    options = GradeOptions(
        reference=args.reference, timeout=args.timeout, memory_mib=args.memory,
        unsafe_no_sandbox=args.unsafe_no_sandbox, force=args.force, jobs=args.jobs,
    )  # fmt: skip
    err = Console(stderr=True, highlight=False, soft_wrap=True)  # one message, one line
    if args.unsafe_no_sandbox:
        err.print("[bold red]warning:[/] --unsafe-no-sandbox: student code runs without isolation")
    with Progress(
        TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
        console=err, transient=True, disable=not err.is_terminal,
    ) as progress:  # fmt: skip
        task = progress.add_task("", total=len(submissions))
        address = scheduler_address(args.scheduler)
        with dask_executor(address) if address else nullcontext() as executor:
            result = grade_batch(
                assignment, submissions, args.out, options, gradebook_path=args.gradebook, executor=executor,
                on_result=lambda submission, report: progress.update(
                    task, advance=1, description=_shown(submission.student)
                ),
            )  # fmt: skip
    _console().print(_summary(assignment.questions, result))
    for skipped in discovery.skipped:
        err.print(f"skipped: {_shown(str(skipped.path))}: {skipped.reason}")
    if result.skipped:
        err.print(f"skipped {len(result.skipped)} already graded (same hash); --force regrades them")
    for report in result.reports:
        if not report.ran:
            err.print(f"{_shown(report.student)}: could not be read or run: {_shown('; '.join(report.errors))}")
    for student in result.failed:
        err.print(f"{_shown(student)}: the grader failed on this submission; it will be regraded on the next run")
    return 0 if result.all_ran else 1


def _shown(text: str) -> str:
    """Student-controlled text for the terminal: control characters and rich markup escaped."""
    from rich.markup import escape

    return escape(one_line(text))


def _release(args: argparse.Namespace) -> int:
    from .release import release

    path = release(_assignment(args), args.out)
    print(one_line(str(path)))
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from course.errors import CourseError
    from course.folder import find_course

    from .sandbox.doctor import diagnose

    try:
        packages = tuple(find_course(args.course).sandbox.packages)
    except CourseError:
        if args.course:
            raise
        packages = ("numpy", "matplotlib")
    findings = diagnose(packages, args.unsafe_no_sandbox)
    for finding in findings:
        print(f"{'ok  ' if finding.ok else 'FAIL'} {finding.what}: {one_line(finding.detail)}")
    return 0 if all(finding.ok for finding in findings) else 1


def _assignment(args: argparse.Namespace):
    """The assignment a command names: a folder holding assignment.toml, else an assignment of the
    course (course.toml here or above, or --course) by name; with the course's sandbox packages."""
    from course.errors import CourseError
    from course.folder import find_course

    from .assignment import MANIFEST, load_assignment

    given = Path(args.assignment)
    try:
        course = find_course(args.course)
    except CourseError as exc:
        if (given / MANIFEST).is_file() and not args.course:
            return load_assignment(given)  # an assignment outside any course: the default packages
        raise AutograderError(f"{args.assignment}: {exc}") from None
    folders = course.assignment_folders
    if (given / MANIFEST).is_file():
        assignment = load_assignment(given)
    elif args.assignment in folders:
        assignment = load_assignment(folders[args.assignment])
    else:
        known = ", ".join(sorted(folders)) or "none"
        raise AutograderError(f"{args.assignment}: no such assignment in the course; its assignments: {known}")
    return assignment.in_course(course.sandbox.packages, course.defaults.limits, course.root / "course.toml")


def _check(args: argparse.Namespace) -> int:
    from .public_tests import check_notebook

    results = check_notebook(args.notebook, args.question)
    for result in results:
        mark = "\u2713" if result.passed else "\u2717"
        print(f"{mark} {result.question}" + ("" if result.passed else f": {one_line(result.message)}"))
    passed = sum(result.passed for result in results)
    print(f"{passed} of {len(results)} questions pass their public tests")
    return 0 if passed == len(results) else 1


def _summary(questions, result: BatchResult) -> Table:
    from rich.table import Table

    table = Table(title=f"{len(result.reports)} graded, {len(result.skipped)} skipped, {len(result.failed)} failed")
    table.add_column("student")
    for question in questions:
        table.add_column(question.id, justify="center")
    table.add_column("score", justify="right")
    for report in sorted(result.reports, key=lambda r: r.student):
        cells = [f"[{STATUS_STYLE[q.status]}]{q.status}[/]" for q in report.questions]
        table.add_row(_shown(report.student), *cells, f"{report.score:g} / {report.max_score:g}")
    return table


def _console() -> Console:
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)
