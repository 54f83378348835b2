"""What both commands share: ``run`` (the ``main()`` of ``course`` and of ``autograder``), the
parser class, the argument types and options more than one command takes, the gradebook a command
names, the console, and the one tuple of errors a user may see.

Light on purpose: ``--help`` and ``--version`` import this and nothing heavy (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import AutograderError
from autograder.version import grader_version
from course.errors import CourseError
from gradebook.errors import GradebookError
from service.errors import ServiceError
from untrusted.errors import UntrustedError
from untrusted.text import for_terminal, one_line

if TYPE_CHECKING:
    from rich.console import Console

    from course.folder import CourseFolder
    from gradebook.book import Gradebook

AUTOGRADER, COURSE = "autograder", "course"  # the commands' names, as their messages begin

# What a user may see as one line and exit 2: each package's error tree (``errors.py``). The
# notebook client's (``gradewright``) is not here: no command calls it, and it would load httpx at
# every start.
USER_ERRORS: tuple[type[Exception], ...] = (AutograderError, CourseError, GradebookError, ServiceError, UntrustedError)


def run(
    prog: str, build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str] | None, interrupted: str
) -> int:
    """A command's ``main()``: parse, call the handler, and turn whatever goes wrong into one line on
    stderr and an exit code (2 bad input, 0 a closed pipe, 128 + the signal when interrupted)."""
    args = build_parser().parse_args(argv)
    received: list[int] = []
    previous = _on_termination(received)
    try:
        return args.handler(args)
    except USER_ERRORS as exc:
        print(f"{prog}: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say, and nothing to flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        # Every grading process and sandbox has been ended by now (the batch kills them on its way out).
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    except Exception as exc:  # a bug of ours: still one line, never a traceback (the site's JSON log keeps it)
        from service.core.logs import crashed

        if not crashed(prog, exc):
            print(
                f"{prog}: internal error ({type(exc).__name__}: {one_line(str(exc))}); please report it",
                file=sys.stderr,
            )
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


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A command's parser with what both take: --version and --course."""
    made = OneLineParser(prog=prog, description=description)
    made.add_argument("--version", action="version", version=f"%(prog)s {grader_version()}")
    made.add_argument(
        "--course", type=Path, metavar="DIR", help="the course's folder (default: the course.toml here or above)"
    )
    return made


def number(kind: Callable[[str], float], least: float, what: str) -> Callable[[str], float]:
    """An argument type: a number of ``kind`` of at least ``least`` (never NaN or infinite)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not value >= least or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    return parse


def gradebook_options(command: argparse.ArgumentParser, gradebook_help: str) -> None:
    """--gradebook PATH and --database-url URL: the gradebook a command reads or writes."""
    command.add_argument("--gradebook", type=Path, metavar="PATH", help=gradebook_help)
    command.add_argument(
        "--database-url",
        metavar="URL",
        help="the gradebook's database instead, e.g. postgresql://user@host/db (default: $GRADEWRIGHT_DATABASE_URL)",
    )


def database_option(command: argparse.ArgumentParser) -> None:
    """--database-url URL: the service's database."""
    command.add_argument("--database-url", metavar="URL", help="the database (default: $GRADEWRIGHT_DATABASE_URL)")


def open_book(args: argparse.Namespace, create: bool) -> Gradebook:
    """The gradebook a command names (--gradebook, or --database-url), else the course's own (the
    site's, in a course folder) or ./gradebook.db outside any; one that does not exist is made only
    with ``create`` (a command that writes first)."""
    from gradebook.book import Gradebook
    from gradebook.database import database_url
    from service.settings import course_gradebook

    url = database_url(args.database_url)
    path = args.gradebook or (Path("gradebook.db") if url else course_gradebook(args.course, create))
    if not url and not create and not path.is_file():
        raise GradebookError(
            f"{path}: no gradebook here; pass --gradebook PATH (grade --out DIR writes DIR/gradebook.db)"
        )
    return Gradebook.open(path, args.database_url)


def open_service(args: argparse.Namespace) -> CourseFolder:
    """The course a service command names, its site's settings made and its database brought up to
    date, before the service's models are used. Never the demo accounts: only ``autograder serve``
    makes them, where their passwords are shown."""
    from course.folder import find_course
    from service.setup import prepare

    course = find_course(args.course)
    prepare(course.root, args.database_url, demo=False)
    return course


def console() -> Console:
    """Standard output's console: a pipe gets a wide table rather than rich's 80-column default, so
    nothing is cut."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)


def err_console() -> Console:
    """Standard error's console: one message, one line."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def shown(text: str) -> str:
    """Student-controlled text for a Rich table or message (untrusted.text's one rule)."""
    return for_terminal(text)


def said(prog: str) -> Callable[[str], None]:
    """A warning from a library while the command goes on (a Dask worker left out), on stderr."""

    def say(line: str) -> None:
        print(f"{prog}: {one_line(line)}", file=sys.stderr, flush=True)

    return say


def problems(prog: str, found: Sequence[object]) -> None:
    """The rows a command refused, one line each on stderr."""
    for problem in found:
        print(f"{prog}: {one_line(str(problem))}", file=sys.stderr)


@contextmanager
def progress_bar(unit: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal (none in a pipe or a log)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(unit, total=None)

        def done_of(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield done_of
