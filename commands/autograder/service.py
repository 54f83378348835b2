"""The grading service and its clients: ``serve``, ``worker``, ``systemd``, ``links``, ``accounts``
(the service's side) and ``login``, ``submit`` (a student's machine)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course.wording import plural, shown_score
from service.errors import ServiceError
from service.server import THREADS
from untrusted.text import for_terminal, one_line

from ..common import AUTOGRADER, database_option, number, open_service, said


def add_commands(commands: argparse._SubParsersAction) -> None:
    for add in (_add_serve, _add_worker, _add_systemd, _add_manage, _add_links, _add_accounts, _add_login, _add_submit):
        add(commands)


def _add_serve(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the grading service for the course",
        description="Serve the course's site (students hand in notebooks and read their feedback) with N grading "
        "workers. Its state is in <course>/.gradewright/, its database the gradebook there (or "
        "$GRADEWRIGHT_DATABASE_URL). The first start makes a demo instructor and prints the password once (not when "
        "a JupyterHub starts it: its users sign in through the hub). Logs, /healthz, /readyz and /metrics: "
        "docs/operators/observability.md.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=number(int, 1, "a port number"), default=8000, help="default 8000")
    serve.add_argument(
        "--workers",
        type=number(int, 0, "a whole number"),
        default=1,
        metavar="N",
        help="grading workers to start with the site (default 1)",
    )
    serve.add_argument(
        "--threads",
        type=number(int, 1, "a whole number of at least 1"),
        default=THREADS,
        metavar="N",
        help=f"requests answered at a time (default {THREADS}; 2 each for several sites on a machine)",
    )
    database_option(serve)
    serve.add_argument(
        "--demo",
        action="store_true",
        help="serve a demo course with a dozen graded students (its own gradebook, never the course's)",
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from course.folder import find_course
    from service.server import serve

    course = find_course(args.course).root
    serve(course, args.host, args.port, args.workers, args.database_url, demo=args.demo, threads=args.threads)
    return 0


def _add_worker(commands: argparse._SubParsersAction) -> None:
    worker = commands.add_parser(
        "worker",
        help="grade the service's queued submissions",
        description="Grade queued submissions one at a time, in the sandbox, until stopped (or, with --once, until "
        "the queue is empty). Start any number, on any machine sharing the database and the course folder.",
    )
    worker.add_argument("--once", action="store_true", help="stop when the queue is empty")
    worker.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, as grade does (default: $DASK_SCHEDULER_ADDRESS, else here)",
    )
    database_option(worker)
    worker.add_argument("--unsafe-no-sandbox", action="store_true", help=argparse.SUPPRESS)
    worker.set_defaults(handler=_worker)


def _worker(args: argparse.Namespace) -> int:
    from course.folder import find_course
    from service.server import work

    graded = work(
        find_course(args.course),
        args.database_url,
        args.once,
        args.scheduler,
        args.unsafe_no_sandbox,
        on_refused=said(AUTOGRADER),
    )
    if args.once:
        print(f"{plural(graded, 'submission')} graded")
    return 0


def _add_systemd(commands: argparse._SubParsersAction) -> None:
    systemd = commands.add_parser(
        "systemd",
        help="write the systemd units that run the course's site on a server",
        description="Write the systemd units for the course (its absolute path) into DIR (/etc/systemd/system on "
        "a server): gradewright.service (the site, autograder serve with no worker of its own), "
        "gradewright-worker@.service (one grading worker per instance: gradewright-worker@1, @2, ...), "
        "gradewright-backup.service and .timer (a backup every night). They run this install's autograder as USER, "
        "with the settings of the environment file, restarted when they stop, and hardened "
        "(docs/operators/install.md).",
    )
    systemd.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write the units")
    systemd.add_argument("--user", default="gradewright", help="the account they run as (default gradewright)")
    systemd.add_argument(
        "--env-file",
        type=Path,
        default=Path("/etc/gradewright/site.env"),
        metavar="FILE",
        help="the site's settings (default /etc/gradewright/site.env)",
    )
    systemd.add_argument(
        "--backups",
        type=Path,
        default=Path("/var/backups/gradewright"),
        metavar="DIR",
        help="where the nightly backups go, kept 14 days (default /var/backups/gradewright)",
    )
    systemd.add_argument("--host", default="127.0.0.1", help="the address the site listens on (default 127.0.0.1)")
    systemd.add_argument("--port", type=number(int, 1, "a port number"), default=8000, help="the site's, default 8000")
    systemd.set_defaults(handler=_systemd)


def _systemd(args: argparse.Namespace) -> int:
    from course.folder import find_course
    from service.operations.units import Install, write_units

    course = find_course(args.course).root.absolute()
    install = Install(course, args.user, args.env_file, args.backups, host=args.host, port=args.port)
    for path in write_units(args.out, install):
        print(one_line(str(path)))
    return 0


def _add_manage(commands: argparse._SubParsersAction) -> None:
    manage = commands.add_parser(
        "manage",
        help="run one of Django's management commands with the site's settings",
        description="Django's management commands (showmigrations, migrate, check --deploy, shell, dbshell, "
        "changepassword, ...) for the course's site, with its settings and database: autograder manage help lists "
        "them. Nothing is migrated first: showmigrations shows the database as it is.",
    )
    database_option(manage)
    manage.add_argument("arguments", nargs=argparse.REMAINDER, metavar="COMMAND [ARGUMENTS]")
    manage.set_defaults(handler=_manage)


def _manage(args: argparse.Namespace) -> int:
    from course.folder import find_course
    from service.settings import manage

    return manage(find_course(args.course).root, args.database_url, args.arguments or ["help"])


def _add_links(commands: argparse._SubParsersAction) -> None:
    links = commands.add_parser(
        "links",
        help="one-time sign-in links for the roster's students",
        description="Make an account for every student on the service's roster (autograder roster import, run in "
        "the course folder) and write a CSV of one-time links (student_id, name, "
        "email, link) to mail them; a student sets a password there. Links last 14 days; running it again "
        "makes new ones.",
    )
    links.add_argument("--server", required=True, metavar="URL", help="the service's address as students reach it")
    links.add_argument("--out", type=Path, required=True, metavar="FILE")
    database_option(links)
    links.set_defaults(handler=_links)


def _links(args: argparse.Namespace) -> int:
    open_service(args)
    from service.accounts.members import sign_in_links

    count = sign_in_links(args.server, args.out)
    print(f"{one_line(str(args.out))}: {plural(count, 'sign-in link')}")
    return 0


def _add_accounts(commands: argparse._SubParsersAction) -> None:
    accounts = commands.add_parser(
        "accounts",
        help="the service's accounts: list them, add staff, set a password, unlock",
        description="The grading service's accounts (the starting ones made on first start, the staff's from "
        "accounts add, the students' from autograder links or their course platform's launches).",
    )
    accounts_commands = accounts.add_subparsers(dest="accounts_command", required=True, metavar="COMMAND")
    list_accounts = accounts_commands.add_parser(
        "list",
        help="every account, its role and its student",
        description="Every account of the service: "
        "username, role, the roster's student it hands in as, when it last signed in.",
    )
    database_option(list_accounts)
    list_accounts.set_defaults(handler=_accounts_list)
    password = accounts_commands.add_parser(
        "password",
        help="set a new password for an account",
        description="Set a new password for USER, asked twice on the terminal (or read from standard input with "
        "--password-stdin). The account's API tokens and open sessions end.",
    )
    password.add_argument("username", metavar="USER")
    password.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input (scripts)"
    )
    database_option(password)
    password.set_defaults(handler=_accounts_password)
    add = accounts_commands.add_parser(
        "add",
        help="make an instructor's or a teaching assistant's account",
        description="Make USER an instructor or a teaching assistant of the course: a new account (its password asked "
        "twice, read with --password-stdin, or with --no-password set later by accounts password), or one that has "
        "no role yet (made by manage createsuperuser, say), or a staff member's whose role changes. A student's "
        "account is never made staff's. The roster's students get theirs from autograder links.",
    )
    add.add_argument("username", metavar="USER")
    add.add_argument("--role", required=True, metavar="ROLE", help="instructor, or ta (a teaching assistant)")
    add.add_argument("--email", default="", help="their address, shown in the console")
    given = add.add_mutually_exclusive_group()
    given.add_argument("--password-stdin", action="store_true", help="read the password from standard input (scripts)")
    given.add_argument("--no-password", action="store_true", help="set none now (accounts password USER later)")
    database_option(add)
    add.set_defaults(handler=_accounts_add)
    unlock = accounts_commands.add_parser(
        "unlock",
        help="let a locked-out account sign in again",
        description="Forget the failed sign-ins that lock USER out (from every address), or with --address those "
        "that lock an address out (for every username). A new password (accounts password) unlocks its account too.",
    )
    unlock.add_argument("username", metavar="USER", nargs="?")
    unlock.add_argument("--address", metavar="IP", help="the address to unlock (a whole class behind one NAT, say)")
    database_option(unlock)
    unlock.set_defaults(handler=_accounts_unlock)


def _accounts_list(args: argparse.Namespace) -> int:
    open_service(args)
    from rich.console import Console
    from rich.table import Table

    from service.accounts.members import list_accounts

    accounts = list_accounts()
    table = Table(title=f"{plural(len(accounts), 'account')}")
    for column in ("username", "role", "student", "name", "last signed in"):
        table.add_column(column)
    for account in accounts:
        seen = account.last_login.strftime("%-d %b %Y, %H:%M UTC") if account.last_login else "never"
        role = account.role + ("" if account.active else " (disabled)")
        table.add_row(
            *(for_terminal(text) for text in (account.username, role, account.student_id or "", account.name, seen))
        )
    Console(highlight=False, soft_wrap=True).print(table)
    return 0


def _accounts_add(args: argparse.Namespace) -> int:
    open_service(args)
    from django.contrib.auth.models import User

    from service.accounts.members import add_staff

    new = not User.objects.filter(username=args.username).exists()
    password = None if args.no_password or not (new or args.password_stdin) else _password(args.password_stdin, True)
    print(f"{one_line(args.username)}: {add_staff(args.username, args.role, password, args.email)}")
    return 0


def _accounts_password(args: argparse.Namespace) -> int:
    open_service(args)
    from service.accounts.members import set_password

    set_password(args.username, _password(args.password_stdin, confirm=True))
    print(f"{one_line(args.username)}: password set; its API tokens and sessions ended")
    return 0


def _accounts_unlock(args: argparse.Namespace) -> int:
    open_service(args)
    from service.accounts.members import unlock

    forgotten = unlock(args.username, args.address)
    who = " and ".join(one_line(name) for name in (args.username, args.address) if name)
    print(f"{who}: unlocked ({plural(forgotten, 'record')} of failed sign-ins forgotten)")
    return 0


def _add_login(commands: argparse._SubParsersAction) -> None:
    login = commands.add_parser(
        "login",
        help="sign in to a grading service from this machine",
        description="Ask the service for a token (your username and password) and keep it in "
        "~/.config/gradewright/servers.json for autograder submit.",
    )
    login.add_argument("--server", required=True, metavar="URL")
    login.add_argument("--username", metavar="NAME", help="(asked when not given)")
    login.add_argument("--password-stdin", action="store_true", help="read the password from standard input (scripts)")
    login.set_defaults(handler=_login)


def _login(args: argparse.Namespace) -> int:
    from service.handin.client import login

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


def _add_submit(commands: argparse._SubParsersAction) -> None:
    submit = commands.add_parser(
        "submit",
        help="hand in a notebook to a grading service and print its feedback",
        description="Upload a notebook (or .py file) to the service and, unless --no-wait, print its feedback when "
        "it is graded. Before it, the service's warnings of a hand-in now (late, or replacing a better or an on-time "
        "grade) are printed and nothing is handed in without --anyway. Exit 0 when graded, 1 when the grader failed "
        "on it or it was not handed in for a warning, 2 when it was refused.",
    )
    submit.add_argument("notebook", type=Path, metavar="NOTEBOOK")
    submit.add_argument("--assignment", required=True, metavar="NAME")
    submit.add_argument("--server", metavar="URL", help="(default: the server of the last autograder login)")
    submit.add_argument("--no-wait", action="store_true", help="only hand it in")
    submit.add_argument(
        "--anyway",
        action="store_true",
        help="hand it in even where the service warns (late, or replacing a better or an on-time grade)",
    )
    submit.set_defaults(handler=_submit)


def _submit(args: argparse.Namespace) -> int:
    from autograder.reports.summary import question_score, score_summary
    from service.errors import HandInWarned
    from service.handin.client import submit

    try:
        job = submit(args.server, args.notebook, args.assignment, wait=not args.no_wait, anyway=args.anyway)
    except HandInWarned as warned:  # told before anything is handed in: exit 1, nothing changed
        for sentence in warned.warnings:
            print(f"warning: {one_line(sentence)}")
        print("nothing was handed in; hand it in all the same with --anyway")
        return 1
    print(f"submission {job['id']}: {job['state']} ({one_line(job['server'] + job['page'])})")
    report = job.get("report")
    if report:
        if report.get("score") is not None:
            print(f"score: {shown_score(report['score'])} / {shown_score(report['max_score'])}")
        elif report.get("visible_summary"):  # what is shown, as such, and what decides the rest
            told = score_summary(report)
            for line in told.lines() if told else []:
                print(one_line(line))
        else:
            print(f"the hidden tests' results are {report['hidden_results']}")
        for question in report["questions"]:
            score = "" if question["score"] is None else f"{question_score(question)} "
            print(f"  {question['id']}: {score}{question['status']}")
            for line in (question.get("feedback") or "").splitlines():
                print(f"      {one_line(line)}")
        if report.get("errors"):  # as the site's page shows them
            print("Problems running your submission:")
            for error in report["errors"]:
                print(f"  {one_line(error)}")
    return {"graded": 0, "failed": 1}.get(job["state"], 0)
