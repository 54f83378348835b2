"""The ``autograder`` command: parses arguments, calls one library function, formats the result.

Exit codes: ``grade`` 0 when every submission was graded, 1 when some could not be read or run;
``check`` 0 when the public tests pass, 1 when some fail; ``verify`` 0 when every known submission
gets its verdict under every secret, 1 when some do not; 2 for a usage error or bad input (one
line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import AutograderError
from autograder.version import grader_version
from course.errors import CourseError
from gradebook.errors import GradebookError
from service.errors import ServiceError
from untrusted.text import one_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from autograder.batch import BatchResult

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
    except (AutograderError, GradebookError, ServiceError, CourseError) as exc:
        print(f"{PROG}: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say, and nothing to flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
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
    _gradebook_options(grade, default="DIR/gradebook.db")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded with the same hash")
    grade.add_argument(
        "--question", metavar="ID",
        help="regrade this question alone (after a fix to its hidden tests): its result replaces the recorded one, "
        "the other questions' results stand (implies --force)",
    )  # fmt: skip
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

    verify = commands.add_parser(
        "verify", help="check that the hidden suite gives every known submission its verdict, whatever the secret",
        description="Grade every submission listed in the assignment's known/verdicts.toml, in the sandbox, under "
        "several secrets (inputs are drawn from the secret: a fair suite gives each the same verdict under all of "
        "them), and those expected to pass again with every tolerance divided by --margin. Lists every verdict that "
        "differs, with the secret that produced it (replay it with --secret). Exit 0 when every verdict holds, 1 "
        "otherwise.",
    )  # fmt: skip
    verify.add_argument("assignment", metavar="ASSIGNMENT", help="an assignment of the course, by name, or its folder")
    verify.add_argument(
        "--secrets", type=_number(int, 1, "a whole number of at least 1"), default=10, metavar="N",
        help="fresh random secrets to grade under (default 10)",
    )  # fmt: skip
    verify.add_argument(
        "--secret", action="append", default=[], metavar="SECRET",
        help="grade under this secret instead (repeat for several): replays one that --secrets found",
    )  # fmt: skip
    verify.add_argument(
        "--margin", type=_number(float, 1, "a number of at least 1"), default=4.0, metavar="F",
        help="tolerances divided by F for submissions expected to pass (default 4; 1 skips it)",
    )  # fmt: skip
    verify.add_argument("--reference", default="auto", metavar="NAME", help="as for grade (default auto)")
    verify.add_argument("--unsafe-no-sandbox", action="store_true", help="run the known submissions without it")
    verify.set_defaults(handler=_verify)

    check = commands.add_parser(
        "check", help="run a notebook's public tests (for students)",
        description="Run a notebook and its public tests, quickly and without the sandbox, and say which "
        "questions pass. Exit 0 when all pass, 1 otherwise.",
    )  # fmt: skip
    check.add_argument("notebook", type=Path, metavar="NOTEBOOK")
    check.add_argument("--question", metavar="ID", help="only this question's public tests")
    check.set_defaults(handler=_check)
    _gradebook_commands(commands)
    _service_commands(commands)
    _gradescope_commands(commands)
    return parser


def _gradescope_commands(commands) -> None:
    export = commands.add_parser("export", help="an assignment for another grading platform",
                                 description="An assignment for another grading platform.")  # fmt: skip
    export_what = export.add_subparsers(title="platform", metavar="PLATFORM", required=True)
    gradescope = export_what.add_parser(
        "gradescope", help="Gradescope's autograder zip",
        description="Write the zip Gradescope's autograder takes (setup.sh, run_autograder, this project, the "
        "assignment's hidden suite, references and the grader's secret): Gradescope then grades with these "
        "suites and gets the same verdicts. Choose Gradescope's Ubuntu 24.04 base image.",
    )  # fmt: skip
    gradescope.add_argument("assignment", metavar="ASSIGNMENT")
    gradescope.add_argument("--out", type=Path, required=True, metavar="FILE", help="e.g. autograder.zip")
    gradescope.set_defaults(handler=_export_gradescope)
    run = commands.add_parser(
        "gradescope-run", help="grade one submission as Gradescope's run_autograder does",
        description="Grade the submission in ROOT/submission into ROOT/results/results.json, in Gradescope's "
        "format (what the exported bundle's run_autograder calls).",
    )  # fmt: skip
    run.add_argument("assignment", metavar="ASSIGNMENT")
    run.add_argument("--root", type=Path, default=Path("/autograder"), metavar="ROOT", help="default /autograder")
    run.set_defaults(handler=_gradescope_run)


def _export_gradescope(args: argparse.Namespace) -> int:
    import autograder
    from autograder.gradescope import export_bundle
    from course.folder import find_course

    project = Path(autograder.__file__).resolve().parent.parent
    if not (project / "pyproject.toml").is_file():
        raise AutograderError(f"{project}: export gradescope needs the project's source (pip install -e .)")
    assignment = _assignment(args)
    try:
        title = find_course(args.course).title
    except CourseError:
        title = assignment.title
    path = export_bundle(assignment, project, title, args.out)
    print(f"{one_line(str(path))}: Gradescope autograder for {assignment.name}")
    return 0


def _gradescope_run(args: argparse.Namespace) -> int:
    from autograder.gradescope import run_in_gradescope

    print(one_line(str(run_in_gradescope(_assignment(args), args.root))))
    return 0


def _service_commands(commands) -> None:
    """The grading service, and its clients."""
    serve = commands.add_parser(
        "serve", help="run the grading service for the course",
        description="Serve the course's site (students hand in notebooks and read their feedback) with N grading "
        "workers. Its state is in <course>/.gradewright/, its database the gradebook there (or "
        "$AUTOGRADER_DATABASE_URL). The first start makes a demo instructor and prints the password once.",
    )  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=_number(int, 1, "a port number"), default=8000, help="default 8000")
    serve.add_argument("--workers", type=_number(int, 0, "a whole number"), default=1, metavar="N",
                       help="grading workers to start with the site (default 1)")  # fmt: skip
    serve.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    serve.add_argument("--demo", action="store_true",
                       help="serve a demo course with a dozen graded students (its own gradebook, never the course's)")  # fmt: skip
    serve.set_defaults(handler=_serve)

    worker = commands.add_parser(
        "worker", help="grade the service's queued submissions",
        description="Grade queued submissions one at a time, in the sandbox, until stopped (or, with --once, until "
        "the queue is empty). Start any number, on any machine sharing the database and the course folder.",
    )  # fmt: skip
    worker.add_argument("--once", action="store_true", help="stop when the queue is empty")
    worker.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="grade on a Dask cluster, as grade does (default: $DASK_SCHEDULER_ADDRESS, else here)",
    )  # fmt: skip
    worker.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    worker.add_argument("--unsafe-no-sandbox", action="store_true", help=argparse.SUPPRESS)
    worker.set_defaults(handler=_worker)

    links = commands.add_parser(
        "links", help="one-time sign-in links for the roster's students",
        description="Make an account for every student on the service's roster (autograder roster import "
        "--gradebook <course>/.gradewright/gradebook.db) and write a CSV of one-time links (student_id, name, "
        "email, link) to mail them; a student sets a password there. Links last 14 days; running it again "
        "makes new ones.",
    )  # fmt: skip
    links.add_argument("--server", required=True, metavar="URL", help="the service's address as students reach it")
    links.add_argument("--out", type=Path, required=True, metavar="FILE")
    links.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    links.set_defaults(handler=_links)

    accounts = commands.add_parser(
        "accounts", help="the service's accounts: list them, set a password",
        description="The grading service's accounts (the demo ones made on first start, the students' from "
        "autograder links or their course platform's launches).",
    )  # fmt: skip
    accounts_commands = accounts.add_subparsers(dest="accounts_command", required=True, metavar="COMMAND")
    list_accounts = accounts_commands.add_parser(
        "list", help="every account, its role and its student", description="Every account of the service: "
        "username, role, the roster's student it hands in as, when it last signed in.",
    )  # fmt: skip
    list_accounts.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    list_accounts.set_defaults(handler=_accounts_list)
    password = accounts_commands.add_parser(
        "password", help="set a new password for an account",
        description="Set a new password for USER, asked twice on the terminal (or read from standard input with "
        "--password-stdin). The account's API tokens and open sessions end.",
    )  # fmt: skip
    password.add_argument("username", metavar="USER")
    password.add_argument("--password-stdin", action="store_true", help="read the password from standard input (scripts)")
    password.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    password.set_defaults(handler=_accounts_password)

    lti = commands.add_parser(
        "lti", help="the service inside Canvas, Moodle or any LTI 1.3 platform",
        description="Register a course platform (LTI 1.3), and send the current scores to its grade columns.",
    )  # fmt: skip
    lti_commands = lti.add_subparsers(dest="lti_command", required=True, metavar="COMMAND")
    add_platform = lti_commands.add_parser(
        "add-platform", help="register a platform and print the addresses to give it",
        description="Register the platform (what its page for the tool shows: issuer, client id, deployment ids, "
        "endpoints), or update the registration of the same issuer and client id, and print the tool's addresses "
        "for the platform's form. The tool's key is made on first need.",
    )  # fmt: skip
    add_platform.add_argument("--name", required=True, help="a name for it (shown to the instructor)")
    add_platform.add_argument("--issuer", required=True, metavar="URL", help="the platform's issuer (iss)")
    add_platform.add_argument("--client-id", required=True, metavar="ID")
    add_platform.add_argument("--deployment-id", required=True, action="append", metavar="ID",
                              help="a deployment id (repeat for several)")  # fmt: skip
    add_platform.add_argument("--auth-url", required=True, metavar="URL", help="its OIDC authorization endpoint")
    add_platform.add_argument("--token-url", required=True, metavar="URL", help="its OAuth2 access token endpoint")
    add_platform.add_argument("--keyset-url", required=True, metavar="URL", help="its public keyset (JWKS)")
    add_platform.add_argument(
        "--server", required=True, metavar="URL", help="the service's address, as the platform reaches it"
    )
    add_platform.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    add_platform.set_defaults(handler=_lti_add_platform)
    send_scores = lti_commands.add_parser(
        "send-scores", help="send the scores waiting for the platforms now, and list what could not be sent",
        description="Scores go to the platforms' grade columns from an outbox, which every running `autograder "
        "worker` sends with retries. This sends the outbox now, failed scores too, and prints each score that "
        "could not be sent, one line each (exit 1 if any). With an ASSIGNMENT, every student's current score on it "
        "(after marks and the late policy) is put in the outbox first.",
    )  # fmt: skip
    send_scores.add_argument("assignment", metavar="ASSIGNMENT", nargs="?")
    send_scores.add_argument("--database-url", metavar="URL", help="the database (default: $AUTOGRADER_DATABASE_URL)")
    send_scores.set_defaults(handler=_lti_send_scores)

    login = commands.add_parser(
        "login", help="sign in to a grading service from this machine",
        description="Ask the service for a token (your username and password) and keep it in "
        "~/.config/gradewright/servers.json for autograder submit.",
    )  # fmt: skip
    login.add_argument("--server", required=True, metavar="URL")
    login.add_argument("--username", metavar="NAME", help="(asked when not given)")
    login.add_argument("--password-stdin", action="store_true", help="read the password from standard input (scripts)")
    login.set_defaults(handler=_login)

    submit = commands.add_parser(
        "submit", help="hand in a notebook to a grading service and print its feedback",
        description="Upload a notebook (or .py file) to the service and, unless --no-wait, print its feedback when "
        "it is graded. Exit 0 when graded, 1 when the grader failed on it, 2 when it was refused.",
    )  # fmt: skip
    submit.add_argument("notebook", type=Path, metavar="NOTEBOOK")
    submit.add_argument("--assignment", required=True, metavar="NAME")
    submit.add_argument("--server", metavar="URL", help="(default: the server of the last autograder login)")
    submit.add_argument("--no-wait", action="store_true", help="only hand it in")
    submit.set_defaults(handler=_submit)


def _course_root(args: argparse.Namespace) -> Path:
    from course.folder import find_course

    return find_course(args.course).root


def _serve(args: argparse.Namespace) -> int:
    from service.server import serve

    serve(_course_root(args), args.host, args.port, args.workers, args.database_url, demo=args.demo)
    return 0


def _worker(args: argparse.Namespace) -> int:
    from autograder.batch import GradeOptions
    from course.folder import find_course
    from service.server import prepare

    course = find_course(args.course)
    prepare(course.root, args.database_url)
    from autograder.cluster import GradingNeeds
    from autograder.distributed import dask_executor, scheduler_address
    from service.settings import state_folder
    from service.worker import run_worker

    address = scheduler_address(args.scheduler)
    options = GradeOptions(jobs=1, unsafe_no_sandbox=args.unsafe_no_sandbox)
    needs = GradingNeeds.here(course.sandbox.packages, args.unsafe_no_sandbox, [course.root])
    with dask_executor(address, needs, on_refused=_said) if address else nullcontext() as executor:
        graded = run_worker(course, state_folder(course.root), options, once=args.once, executor=executor)
    if args.once:
        print(f"{graded} submissions graded")
    return 0


def _said(line: str) -> None:
    """A warning from a library while the command goes on (a Dask worker left out), on stderr."""
    print(f"{PROG}: {one_line(line)}", file=sys.stderr, flush=True)


def _links(args: argparse.Namespace) -> int:
    from service.server import prepare

    prepare(_course_root(args), args.database_url)
    from service.accounts import sign_in_links

    count = sign_in_links(args.server, args.out)
    print(f"{one_line(str(args.out))}: {count} sign-in links")
    return 0


def _lti_add_platform(args: argparse.Namespace) -> int:
    from service.server import prepare

    prepare(_course_root(args), args.database_url)
    from service.lti.platforms import add_platform, platform_settings, tool_addresses

    registration = add_platform(platform_settings(
        name=args.name, issuer=args.issuer, client_id=args.client_id, deployment_ids=args.deployment_id,
        auth_url=args.auth_url, token_url=args.token_url, keyset_url=args.keyset_url,
    ))  # fmt: skip
    addresses = tool_addresses(args.server, registration)
    print(f"{one_line(registration.name)}: registered; give the platform these addresses:")
    print(f"  login initiation:  {addresses.login}")
    print(f"  redirect / launch: {addresses.launch}")
    print(f"  deep linking:      {addresses.deep_linking}")
    print(f"  public keyset:     {addresses.jwks}")
    return 0


def _lti_send_scores(args: argparse.Namespace) -> int:
    from autograder.assignment import course_assignment
    from course.folder import find_course
    from service.server import prepare

    course = find_course(args.course)
    prepare(course.root, args.database_url)
    from service.lti.outbox import send_now

    outcome = send_now(course_assignment(course, args.assignment) if args.assignment else None)
    for problem in outcome.failed + outcome.waiting:
        print(one_line(problem), file=sys.stderr)
    print(f"{outcome.sent} scores sent, {len(outcome.failed) + len(outcome.waiting)} could not be sent")
    return 1 if outcome.failed or outcome.waiting else 0


def _login(args: argparse.Namespace) -> int:
    from service.client import login

    username = args.username or _asked("username: ", "--username NAME")
    password = _password(args.password_stdin, confirm=False)
    path = login(args.server, username, password)
    print(f"logged in to {one_line(args.server)}; the token is kept in {path}")
    return 0


def _asked(prompt: str, option: str) -> str:
    """A line typed at the terminal; without one (a script, a notebook cell), the option to use."""
    if not sys.stdin.isatty():
        raise ServiceError(f"no terminal to ask on; pass {option}")
    return input(prompt)


def _password(from_stdin: bool, confirm: bool) -> str:
    import getpass

    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    if not sys.stdin.isatty():
        raise ServiceError("no terminal to ask for the password on; pipe it with --password-stdin")
    password = getpass.getpass("password: ")
    if confirm and getpass.getpass("the same again: ") != password:
        raise ServiceError("the two passwords differ; nothing changed")
    return password


def _accounts_list(args: argparse.Namespace) -> int:
    from service.server import prepare

    prepare(_course_root(args), args.database_url, demo=False)
    from rich.console import Console
    from rich.table import Table

    from service.accounts import list_accounts

    accounts = list_accounts()
    table = Table(title=f"{len(accounts)} accounts")
    for column in ("username", "role", "student", "name", "last signed in"):
        table.add_column(column)
    for account in accounts:
        seen = account.last_login.strftime("%-d %b %Y, %H:%M UTC") if account.last_login else "never"
        table.add_row(*(one_line(text) for text in (account.username, account.role + ("" if account.active else " (disabled)"),
                      account.student_id or "", account.name, seen)), )  # fmt: skip
    Console(highlight=False, soft_wrap=True).print(table)
    return 0


def _accounts_password(args: argparse.Namespace) -> int:
    from service.server import prepare

    prepare(_course_root(args), args.database_url, demo=False)
    from service.accounts import set_password

    set_password(args.username, _password(args.password_stdin, confirm=True))
    print(f"{one_line(args.username)}: password set; its API tokens and sessions ended")
    return 0


def _submit(args: argparse.Namespace) -> int:
    from service.client import submit

    job = submit(args.server, args.notebook, args.assignment, wait=not args.no_wait)
    print(f"submission {job['id']}: {job['state']} ({one_line(job['server'] + job['page'])})")
    report = job.get("report")
    if report:
        if report.get("score") is not None:
            print(f"score: {report['score']:g} / {report['max_score']:g}")
        else:
            print(f"the hidden tests' results are {report['hidden_results']}")
        for question in report["questions"]:
            score = "" if question["score"] is None else f"{question['score']:g} / {question['max_score']:g} "
            print(f"  {question['id']}: {score}{question['status']}")
            for line in (question.get("feedback") or "").splitlines():
                print(f"      {one_line(line)}")
    return {"graded": 0, "failed": 1}.get(job["state"], 0)


def _gradebook_commands(commands) -> None:
    """Commands on the gradebook. Each reads --gradebook PATH (default ./gradebook.db: the one
    ``grade --out DIR`` wrote is DIR/gradebook.db) or the database $AUTOGRADER_DATABASE_URL names."""
    marks = commands.add_parser(
        "marks", help="hand-graded questions: a sheet to fill in, and its marks recorded",
        description="Marks for the questions graded by hand (manual = true), through a spreadsheet.",
    )  # fmt: skip
    marks_what = marks.add_subparsers(title="what", metavar="WHAT", required=True)
    export = marks_what.add_parser(
        "export", help="write the marks sheet",
        description="Write one row per student and hand-graded question of their latest submission, with the "
        "answer to read, the mark given so far and its status (unmarked, marked, answer changed since marked), "
        "and empty score and comment columns to fill in.",
    )  # fmt: skip
    export.add_argument("assignment", metavar="ASSIGNMENT")
    export.add_argument("--out", type=Path, required=True, metavar="FILE", help="the CSV file to write")
    _gradebook_options(export)
    export.set_defaults(handler=_marks_export)
    load = marks_what.add_parser(
        "import", help="record a filled-in marks sheet",
        description="Record the score and comment of every row that has a score. Rows with an unknown student "
        "or question, or a score outside 0..points, are listed by row number and the others recorded (exit 1). "
        "A sheet of another assignment changes nothing (exit 2).",
    )  # fmt: skip
    load.add_argument("assignment", metavar="ASSIGNMENT")
    load.add_argument("sheet", type=Path, metavar="FILE")
    load.add_argument("--reports", type=Path, metavar="DIR", help="then rewrite every student's reports in DIR")
    _gradebook_options(load)
    load.set_defaults(handler=_marks_import)

    reports = commands.add_parser(
        "reports", help="rewrite every student's reports from the gradebook",
        description="Write each student's current reports (json, feedback.txt, gradescope.json) and grades.csv "
        "into DIR: their latest submission, the marks given by hand, the late penalty.",
    )  # fmt: skip
    reports.add_argument("assignment", metavar="ASSIGNMENT")
    reports.add_argument("--out", type=Path, required=True, metavar="DIR")
    _gradebook_options(reports)
    reports.set_defaults(handler=_reports)

    history = commands.add_parser(
        "history", help="every submission of a student",
        description="Every submission of a student (to one assignment, or to all of the course's), with its "
        "time, hash and scores; * marks the one their grade comes from.",
    )  # fmt: skip
    history.add_argument("student", metavar="STUDENT")
    history.add_argument("assignment", nargs="?", metavar="ASSIGNMENT")
    _gradebook_options(history)
    history.set_defaults(handler=_history)

    stats = commands.add_parser(
        "stats", help="per question statistics of an assignment",
        description="Per question: mean score, share of full marks, share of zero, the checks failed most "
        "often (by test name). Writes DIR/questions.csv, DIR/questions.png and DIR/overview.png (the distribution "
        "of final scores, and when submissions arrived around the due time).",
    )  # fmt: skip
    stats.add_argument("assignment", metavar="ASSIGNMENT")
    stats.add_argument("--out", type=Path, required=True, metavar="DIR")
    _gradebook_options(stats)
    stats.set_defaults(handler=_stats)

    roster = commands.add_parser("roster", help="the course's students", description="The course's students.")
    roster_what = roster.add_subparsers(title="what", metavar="WHAT", required=True)
    roster_import = roster_what.add_parser(
        "import", help="add or update students from a CSV file",
        description="Columns student_id,name,email and optionally canvas_id, moodle_id, sis_id. student_id is the "
        "name a student's submissions are filed under; canvas_id and moodle_id map a Canvas or Moodle download to "
        "them. Repeated ids change nothing (exit 2).",
    )  # fmt: skip
    roster_import.add_argument("roster", type=Path, metavar="ROSTER.csv")
    _gradebook_options(roster_import)
    roster_import.set_defaults(handler=_roster_import)

    grades = commands.add_parser("grades", help="grades out to course platforms", description="Grade files.")
    grades_what = grades.add_subparsers(title="what", metavar="WHAT", required=True)
    grades_export = grades_what.add_parser(
        "export", help="write the file a course platform imports",
        description="One row per student (on the roster or with a submission) and one column per assignment: the "
        "final score (marks included, late penalty taken off). canvas: Canvas's gradebook import CSV (a column is "
        "'Title (id)' where assignment.toml sets canvas_assignment_id, else matched by title); moodle: Moodle's grade "
        "import CSV (ID number, Email address: the warnings say which to map by); csv: plain.",
    )  # fmt: skip
    grades_export.add_argument("assignments", nargs="+", metavar="ASSIGNMENT")
    grades_export.add_argument("--format", choices=["canvas", "moodle", "csv"], required=True)
    grades_export.add_argument("--out", type=Path, required=True, metavar="FILE")
    grades_export.add_argument(
        "--missing", choices=["empty", "zero", "skip"], default="empty",
        help="a student with no submission: an empty cell (default; Moodle clears the grade it has), zero, or skip "
        "(no row for a student who handed in none of these assignments: the platform keeps what it has)",
    )  # fmt: skip
    _gradebook_options(grades_export)
    grades_export.set_defaults(handler=_grades_export)

    similar = commands.add_parser(
        "similarity", help="pairs of students whose code is alike",
        description="Compare the students' latest submissions (copydetect's winnowing, offline; the released "
        "notebook's starter code left out; only pairs that share a fingerprint are compared) and list the pairs "
        "sharing more than the threshold of their code: a report for your judgement, never a penalty. The report "
        "is kept in the gradebook: the staff's similarity page shows it. --out writes it as HTML, the shared "
        "regions highlighted side by side; --student compares one student's latest submission with the rest.",
    )  # fmt: skip
    similar.add_argument("assignment", metavar="ASSIGNMENT")
    similar.add_argument("--threshold", type=_number(float, 0.0, "a share between 0 and 1"), default=0.5,
                         metavar="SHARE", help="default 0.5")  # fmt: skip
    similar.add_argument("--out", type=Path, metavar="FILE", help="also write the pairs side by side as HTML")
    similar.add_argument("--student", metavar="STUDENT", help="only this student's latest submission against the rest "
                         "(not kept)")  # fmt: skip
    _gradebook_options(similar)
    similar.set_defaults(handler=_similarity)

    extend = commands.add_parser(
        "extend", help="give a student more time",
        description="Record an extension: the student's submissions are late only after --until.",
    )  # fmt: skip
    extend.add_argument("student", metavar="STUDENT")
    extend.add_argument("assignment", metavar="ASSIGNMENT")
    extend.add_argument("--until", required=True, type=_moment, metavar="TIME",
                        help="ISO 8601 with a time zone, e.g. 2026-12-08T23:59:00+01:00")  # fmt: skip
    _gradebook_options(extend)
    extend.set_defaults(handler=_extend)

    gradebook = commands.add_parser("gradebook", help="the gradebook itself", description="The gradebook itself.")
    gradebook_what = gradebook.add_subparsers(title="what", metavar="WHAT", required=True)
    upgrade = gradebook_what.add_parser(
        "upgrade", help="convert a gradebook of the older format",
        description="Convert a gradebook.db of the older format (tables submissions and grades) in place, every "
        "row kept; the old file stays beside it as gradebook.db.old.",
    )  # fmt: skip
    upgrade.add_argument("--gradebook", type=Path, default=Path("gradebook.db"), metavar="PATH")
    upgrade.set_defaults(handler=_gradebook_upgrade)
    backup = gradebook_what.add_parser(
        "backup", help="write a consistent copy of the gradebook and the service's state to one file",
        description="Write FILE (a .tar.gz, readable by you only: it holds the grades and the service's secret key): "
        "the gradebook (SQLite's online backup, or pg_dump for PostgreSQL), safe while the service, workers and "
        "graders run, and the service's state folder (<course>/.gradewright/: uploads, reports, released notebooks, "
        "the secret key). The gradebook: --database-url or $AUTOGRADER_DATABASE_URL, else --gradebook, else the "
        "state folder's gradebook.db, else ./gradebook.db.",
    )  # fmt: skip
    backup.add_argument("file", type=Path, metavar="FILE")
    _gradebook_options(backup, default="<course>/.gradewright/gradebook.db, else ./gradebook.db")
    _state_options(backup)
    backup.set_defaults(handler=_gradebook_backup)
    restore = gradebook_what.add_parser(
        "restore", help="bring a course's gradebook and state back from a backup",
        description="Restore FILE (written by gradebook backup): the gradebook into --gradebook PATH (default: where "
        "the service keeps it, <course>/.gradewright/gradebook.db, when it was there) or into the empty database "
        "--database-url names, and the service's state folder into <course>/.gradewright/; then bring the gradebook "
        "up to this version's tables. Refuses to replace a gradebook, database or state folder that holds anything, "
        "unless --force (a file or folder there is kept, renamed; a database's tables are replaced). Stop the "
        "service and its workers first.",
    )  # fmt: skip
    restore.add_argument("file", type=Path, metavar="FILE")
    _gradebook_options(restore, default="<course>/.gradewright/gradebook.db when the backup's was there")
    _state_options(restore)
    restore.add_argument("--force", action="store_true", help="replace what is there (a file or folder is kept, renamed)")
    restore.set_defaults(handler=_gradebook_restore)


def _state_options(command: argparse.ArgumentParser) -> None:
    place = command.add_mutually_exclusive_group()
    place.add_argument("--state", type=Path, metavar="DIR",
                       help="the service's state folder (default <course>/.gradewright/)")  # fmt: skip
    place.add_argument("--no-state", action="store_true", help="the gradebook alone, without the state folder")


def _moment(text: str):
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone; add one, as in 2026-12-08T23:59:00+01:00")
    return moment


def _book(args: argparse.Namespace, create: bool = False):
    """The gradebook a command names; one that does not exist is created only by a command that writes."""
    from gradebook.book import Gradebook
    from gradebook.database import database_url

    path = args.gradebook or Path("gradebook.db")
    if not database_url(args.database_url) and not create and not path.is_file():
        raise GradebookError(
            f"{path}: no gradebook here; pass --gradebook PATH (grade --out DIR writes DIR/gradebook.db)"
        )
    return Gradebook.open(path, args.database_url)


def _problems(problems) -> None:
    for problem in problems:
        print(f"{PROG}: {one_line(str(problem))}", file=sys.stderr)


def _marks_export(args: argparse.Namespace) -> int:
    from gradebook.marks import export_marks

    assignment = _assignment(args)
    with _book(args) as book:
        rows = export_marks(book, assignment, args.out)
    print(f"{one_line(str(args.out))}: {rows} answers to mark")
    return 0


def _marks_import(args: argparse.Namespace) -> int:
    from gradebook.marks import import_marks
    from gradebook.reports import write_current_reports

    assignment = _assignment(args)
    with _book(args) as book:
        result = import_marks(book, assignment, args.sheet)
        if args.reports:
            write_current_reports(book, assignment, args.reports)
    _problems(result.problems)
    print(f"{result.recorded} marks recorded, {result.unchanged} rows without a score, "
          f"{len(result.problems)} rows refused")  # fmt: skip
    return 1 if result.problems else 0


def _reports(args: argparse.Namespace) -> int:
    from gradebook.reports import write_current_reports

    assignment = _assignment(args)
    with _book(args) as book:
        count = write_current_reports(book, assignment, args.out)
    print(f"{count} students' reports written to {one_line(str(args.out))}")
    return 0


def _history(args: argparse.Namespace) -> int:
    from rich.table import Table

    from gradebook.history import history

    specs = [_assignment(args)] if args.assignment else _course_assignments(args)
    with _book(args) as book:
        entries = history(book, args.student, specs)
    table = Table(title=f"{_shown(args.student)}: {len(entries)} submission{'' if len(entries) == 1 else 's'}")
    for column in ("", "assignment", "submitted", "sha256", "score", "late", "final"):
        table.add_column(column)
    for entry in entries:
        table.add_row(
            "*" if entry.current else "", entry.assignment, entry.submitted_at, entry.sha256[:12],
            f"{entry.score:g} / {entry.max_score:g}", f"-{entry.late_penalty:g}" if entry.late_penalty else "",
            f"{entry.final_score:g}",
        )  # fmt: skip
    _console().print(table)
    return 0


def _course_assignments(args: argparse.Namespace) -> list:
    from autograder.assignment import course_assignments
    from course.folder import find_course

    return course_assignments(find_course(args.course))


def _stats(args: argparse.Namespace) -> int:
    from rich.table import Table

    from gradebook.stats import write_statistics

    assignment = _assignment(args)
    with _book(args) as book:
        stats = write_statistics(book, assignment, args.out)
    mean = "none" if stats.mean_score is None else f"{stats.mean_score:.2f}"
    table = Table(title=f"{assignment.name}: {stats.students} students, mean {mean} / {stats.max_score:g}")
    for column in ("question", "mean", "full", "zero", "most failed checks"):
        table.add_column(column)
    for q in stats.questions:
        table.add_row(
            q.question, "" if q.mean is None else f"{q.mean:.2f} / {q.points:g}", _percent(q.share_full),
            _percent(q.share_zero), _shown("; ".join(f"{name} ({count})" for name, count in q.most_failed)),
        )  # fmt: skip
    _console().print(table)
    print(", ".join(one_line(str(args.out / name)) for name in ("questions.csv", "questions.png", "overview.png")))
    return 0


def _percent(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def _roster_import(args: argparse.Namespace) -> int:
    from gradebook.roster import import_roster

    with _book(args, create=True) as book:
        result = import_roster(book, args.roster)
    _problems(result.problems)
    print(f"{result.added} students added, {result.updated} updated, {len(result.problems)} rows refused")
    return 1 if result.problems else 0


def _grades_export(args: argparse.Namespace) -> int:
    from gradebook.exports import export_grades

    specs = []
    for name in args.assignments:
        args.assignment = name
        specs.append(_assignment(args))
    with _book(args) as book:
        path, table = export_grades(book, specs, args.format, args.out, args.missing)
    print(f"{one_line(str(path))}: {len(table.students)} students, {len(specs)} assignments")
    for warning in table.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    return 0


def _similarity(args: argparse.Namespace) -> int:
    from rich.table import Table

    from gradebook.book import who
    from gradebook.similarity import run_now, similar_to, write_html

    assignment = _assignment(args)
    threshold = min(args.threshold, 1.0)
    with _book(args) as book:
        if args.student:
            report = similar_to(book, assignment, args.student, threshold)
        else:
            with _progress_bar("pairs compared") as progress:
                report = run_now(book, assignment, threshold, who(), progress)
    table = Table(title=f"{assignment.name}: {report.compared} submissions compared, {len(report.pairs)} pairs "
                        f"above {args.threshold:.0%}")  # fmt: skip
    for column in ("student", "shares with", "of theirs", "of the other's"):
        table.add_column(column)
    for pair in report.pairs:
        table.add_row(_shown(pair.first), _shown(pair.second), f"{pair.first_share:.0%}", f"{pair.second_share:.0%}")
    _console().print(table)
    for student in report.unreadable:
        print(f"{PROG}: {one_line(student)}: the latest submission cannot be read; left out", file=sys.stderr)
    if args.out:
        print(one_line(str(write_html(report, args.out))))
    return 0


@contextmanager
def _progress_bar(unit: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal (none in a pipe or a log)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(unit, total=None)

        def said(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield said


def _extend(args: argparse.Namespace) -> int:
    from gradebook.extensions import extend

    assignment = _assignment(args)
    with _book(args) as book:
        extend(book, args.student, assignment, args.until)
    print(f"{_shown(args.student)}: {assignment.name} due {args.until.isoformat()}")
    return 0


def _gradebook_upgrade(args: argparse.Namespace) -> int:
    from gradebook.legacy import upgrade

    result = upgrade(args.gradebook)
    print(f"{one_line(str(args.gradebook))}: {result.submissions} submissions converted; "
          f"the old file is {one_line(str(result.kept_as))}")  # fmt: skip
    return 0


def _state_folder(args: argparse.Namespace, must_exist: bool) -> Path | None:
    """--state, else the course's .gradewright/ (for a backup: where there is one), else None."""
    from course.folder import find_course
    from service.settings import STATE_FOLDER

    if args.no_state:
        return None
    if args.state is not None:
        return args.state
    try:
        folder = find_course(args.course).root / STATE_FOLDER
    except CourseError:
        if args.course is not None:
            raise
        return None
    return folder if folder.is_dir() or not must_exist else None


def _gradebook_backup(args: argparse.Namespace) -> int:
    from gradebook.backup import backup
    from gradebook.database import database_url

    state = _state_folder(args, must_exist=True)
    gradebook = args.gradebook
    if gradebook is None and not database_url(args.database_url):
        inside = state / "gradebook.db" if state is not None else None
        gradebook = inside if inside is not None and inside.is_file() else Path("gradebook.db")
    made = backup(args.file, gradebook, args.database_url, state)
    counts = made.manifest.counts
    print(f"{one_line(str(made.out))}: {counts.submissions} submissions ({counts.results} results), "
          f"{counts.marks} marks, {counts.students} students"
          + (f"; the state folder {one_line(str(state))}, {made.state_files} files" if state is not None else "; "
             "no state folder"))  # fmt: skip
    return 0


def _gradebook_restore(args: argparse.Namespace) -> int:
    from gradebook.backup import restore

    restored = restore(args.file, args.gradebook, args.database_url, _state_folder(args, must_exist=False),
                       force=args.force, skip_state=args.no_state)  # fmt: skip
    counts, made = restored.counts, restored.manifest
    print(f"{one_line(restored.gradebook)}: {counts.submissions} submissions ({counts.results} results), "
          f"{counts.marks} marks, {counts.students} students, from the backup of "
          f"{made.created_at:%Y-%m-%d %H:%M:%S} UTC ({one_line(made.grader_version)})")  # fmt: skip
    if restored.state is not None:
        print(f"{one_line(str(restored.state))}: the service's state folder")
    for path in restored.moved_aside:
        print(f"kept what was there as {one_line(str(path))}")
    return 0


def _gradebook_options(command: argparse.ArgumentParser, default: str = "./gradebook.db") -> None:
    command.add_argument(
        "--gradebook", type=Path, metavar="PATH", help=f"the SQLite gradebook file (default {default})"
    )
    command.add_argument(
        "--database-url", metavar="URL",
        help="the gradebook's database instead, e.g. postgresql://user@host/db (default: $AUTOGRADER_DATABASE_URL)",
    )  # fmt: skip


def _grade(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from autograder.batch import GradeOptions
    from autograder.cluster import GradingNeeds
    from autograder.distributed import dask_executor, scheduler_address
    from autograder.submissions import find_submissions
    from gradebook.grading import grade_into_gradebook

    assignment = _assignment(args)
    discovery = find_submissions(args.submissions, preferred=assignment.released_notebook)
    submissions = discovery.submissions
    options = GradeOptions(
        reference=args.reference, timeout=args.timeout, memory_mib=args.memory,
        unsafe_no_sandbox=args.unsafe_no_sandbox, force=args.force, jobs=args.jobs, question=args.question,
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
        needs = GradingNeeds.here(assignment.sandbox_packages, args.unsafe_no_sandbox, [assignment.folder])
        with dask_executor(address, needs, on_refused=_said_on(err)) if address else nullcontext() as executor:
            run = grade_into_gradebook(
                assignment, submissions, args.out, options, gradebook=args.gradebook,
                database_url=args.database_url, executor=executor,
                on_result=lambda submission, report: progress.update(
                    task, advance=1, description=_shown(submission.student)
                ),
            )  # fmt: skip
    result = run.batch
    _console().print(_summary(assignment.questions, result))
    for student in run.not_on_roster:
        err.print(f"warning: {_shown(student)} is not on the roster (autograder roster import)")
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


def _said_on(err: Console) -> Callable[[str], None]:
    """``_said`` through the command's console (it keeps the progress bar whole)."""
    return lambda line: err.print(f"{PROG}: {_shown(line)}")


def _shown(text: str) -> str:
    """Student-controlled text for the terminal: control characters and rich markup escaped."""
    from rich.markup import escape

    return escape(one_line(text))


def _release(args: argparse.Namespace) -> int:
    from autograder.release import release

    path = release(_assignment(args), args.out)
    print(one_line(str(path)))
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from autograder.sandbox.doctor import diagnose
    from course.errors import CourseError
    from course.folder import find_course

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
    from autograder.assignment import MANIFEST, course_assignment, load_assignment
    from course.errors import CourseError
    from course.folder import find_course

    try:
        course = find_course(args.course)
    except CourseError as exc:
        if (Path(args.assignment) / MANIFEST).is_file() and not args.course:
            return load_assignment(args.assignment)  # an assignment outside any course: the default packages
        raise AutograderError(f"{args.assignment}: {exc}") from None
    return course_assignment(course, args.assignment)


def _verify(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from autograder.batch import GradeOptions, load_reference, prepare_sandbox, resolve_reference
    from autograder.sandbox.runners import make_runner
    from autograder.verify import fresh_secrets, gradings_needed, known_verdicts, verify_known

    assignment = _assignment(args)
    options = GradeOptions(reference=args.reference, unsafe_no_sandbox=args.unsafe_no_sandbox)
    prepare_sandbox(assignment, options)
    secrets = args.secret or fresh_secrets(args.secrets)
    verdicts = known_verdicts(assignment)
    total = gradings_needed(verdicts, len(secrets), args.margin)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with Progress(TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  console=err, transient=True, disable=not err.is_terminal) as progress:  # fmt: skip
        task = progress.add_task("", total=total)
        result = verify_known(
            assignment, verdicts, secrets, make_runner(args.unsafe_no_sandbox, tuple(assignment.sandbox_packages)),
            load_reference(assignment, resolve_reference(args.reference, assignment)), options.limits(assignment),
            args.margin, on_grading=lambda file: progress.update(task, advance=1, description=_shown(file)),
        )  # fmt: skip
    print(f"{result.assignment}: {len(result.files)} known submissions, {len(result.secrets)} secrets, "
          f"{result.gradings} gradings (margin {result.margin:g})")  # fmt: skip
    for file in result.files:
        wrong = [d for d in result.disagreements if d.file == file]
        print(f"{'ok  ' if not wrong else 'FAIL'} {one_line(file)}")
        groups: dict[tuple, list] = {}
        for d in wrong:  # one line per kind of difference, with the first secret that showed it
            groups.setdefault((d.question, d.expected, d.got, d.margin), []).append(d)
        for (question, expected, got, margin), found in groups.items():
            under = f" with tolerances divided by {margin:g}" if margin > 1 else ""
            checks = [line[2:] for line in found[0].feedback.splitlines() if line.startswith("- ")]
            print(f"     {question}: expected {expected}, got {got}{under} under {len(found)} of "
                  f"{len(result.secrets)} secrets (first: {one_line(found[0].secret)}): "
                  f"{one_line(checks[0] if checks else found[0].feedback)[:200]}")  # fmt: skip
    for file in result.unlisted:
        print(f"skip {one_line(file)}: not in known/verdicts.toml, so not graded")
    if result.disagreements:
        verdicts_wrong = sum(d.kind == "verdict" for d in result.disagreements)
        rules_broken = len(result.disagreements) - verdicts_wrong
        if verdicts_wrong:
            print(f"{verdicts_wrong} verdicts differ from known/verdicts.toml")
        if rules_broken:
            print(f"{rules_broken} feedback rules of known/verdicts.toml are broken")
        return 1
    print("every verdict holds")
    return 0


def _check(args: argparse.Namespace) -> int:
    from autograder.public_tests import check_notebook

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
