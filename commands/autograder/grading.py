"""``autograder grade``, ``release``, ``doctor``, ``verify`` and ``check``: an assignment's
submissions graded in the sandbox, its student version, this machine's fitness to grade, the
fairness of its hidden suite, and a student's own check of the public tests."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from course.wording import plural, shown_score
from untrusted.text import one_line

from ..common import AUTOGRADER, console, err_console, gradebook_options, number, shown

if TYPE_CHECKING:
    from rich.table import Table

    from autograder.assignment import Question
    from autograder.batch import BatchResult

STATUS_STYLE = {
    "passed": "green",
    "partial": "yellow",
    "failed": "red",
    "error": "red",
    "timeout": "red",
    "manual": "blue",
    "not_graded": "magenta",
}


def add_commands(commands: argparse._SubParsersAction) -> None:
    for add in (_add_grade, _add_release, _add_doctor, _add_verify, _add_check):
        add(commands)


def _add_grade(commands: argparse._SubParsersAction) -> None:
    grade = commands.add_parser(
        "grade",
        help="grade submissions in the sandbox",
        description="Grade notebooks and .py files against the assignment's hidden tests, each in a sandboxed "
        "worker. Writes DIR/<student>.json, DIR/<student>.feedback.txt, DIR/<student>.gradescope.json, "
        "DIR/grades.csv and the gradebook. Exit 0 when every submission was graded, 1 when some could not be "
        "read or run, 2 for a usage error.",
    )
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
        type=number(int, 1, "a whole number of at least 1"),
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
        "--timeout",
        type=number(float, 0.001, "a positive number of seconds"),
        metavar="SECONDS",
        help="time limit per call (default: the assignment's, 10 s)",
    )
    grade.add_argument(
        "--memory",
        type=number(int, 64, "a whole number of MiB, at least 64"),
        metavar="MIB",
        help="memory limit per worker (default 2048 MiB)",
    )
    gradebook_options(grade, "the SQLite gradebook file (default DIR/gradebook.db)")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded with the same hash")
    grade.add_argument(
        "--question",
        metavar="ID",
        help="regrade this question alone (after a fix to its hidden tests): its result replaces the recorded one, "
        "the other questions' results stand (implies --force)",
    )
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


def _grade(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from autograder.assignment import find_assignment
    from autograder.batch import GradeOptions
    from gradebook.grading import grade_paths

    assignment = find_assignment(args.assignment, args.course)
    options = GradeOptions(
        reference=args.reference,
        timeout=args.timeout,
        memory_mib=args.memory,
        unsafe_no_sandbox=args.unsafe_no_sandbox,
        force=args.force,
        jobs=args.jobs,
        question=args.question,
    )
    err = err_console()
    if args.unsafe_no_sandbox:
        err.print("[bold red]warning:[/] --unsafe-no-sandbox: student code runs without isolation")
    with Progress(
        TextColumn("grading"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)
        run = grade_paths(
            assignment,
            args.submissions,
            args.out,
            options,
            gradebook=args.gradebook,
            database_url=args.database_url,
            scheduler=args.scheduler,
            on_found=lambda count: progress.update(task, total=count),
            on_result=lambda submission, report: progress.update(
                task, advance=1, description=shown(submission.student)
            ),
            on_refused=lambda line: err.print(
                f"{AUTOGRADER}: {shown(line)}"
            ),  # through the bar's console: it stays whole
        )
    result = run.batch
    console().print(_summary(assignment.questions, result))
    for student in run.not_on_roster:
        err.print(f"warning: {shown(student)} is not on the roster (autograder roster import)")
    for skipped in run.skipped_files:
        err.print(f"skipped: {shown(str(skipped.path))}: {shown(skipped.reason)}")
    if result.skipped:
        err.print(f"skipped {len(result.skipped)} already graded (same hash); --force regrades them")
    for report in result.reports:
        if not report.ran:
            err.print(f"{shown(report.student)}: could not be read or run: {shown('; '.join(report.errors))}")
        own = report.own_values
        if own is not None and not own.matches:  # another student's notebook, or edited
            names = shown(", ".join(own.differing))
            err.print(f"{shown(report.student)}: the notebook's values are not theirs ({names})")
    for student in result.failed:
        err.print(f"{shown(student)}: the grader failed on this submission; it will be regraded on the next run")
    return 0 if result.all_ran else 1


def _summary(questions: list[Question], result: BatchResult) -> Table:
    from rich.table import Table

    table = Table(title=f"{len(result.reports)} graded, {len(result.skipped)} skipped, {len(result.failed)} failed")
    table.add_column("student")
    for question in questions:
        table.add_column(question.id, justify="center")
    table.add_column("score", justify="right")
    for report in sorted(result.reports, key=lambda r: r.student):
        cells = [f"[{STATUS_STYLE[q.status]}]{q.status}[/]" for q in report.questions]
        table.add_row(shown(report.student), *cells, f"{shown_score(report.score)} / {shown_score(report.max_score)}")
    return table


def _add_release(commands: argparse._SubParsersAction) -> None:
    release = commands.add_parser(
        "release",
        help="write the student version of an assignment",
        description="Write the student notebook: solutions replaced by stubs, hidden tests removed, outputs "
        "cleared, test cells locked (nbgrader's preprocessors).",
    )
    release.add_argument("assignment", metavar="ASSIGNMENT")
    release.add_argument("--out", type=Path, required=True, metavar="DIR")
    release.set_defaults(handler=_release)


def _release(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from autograder.release import release

    print(one_line(str(release(find_assignment(args.assignment, args.course), args.out))))
    return 0


def _add_doctor(commands: argparse._SubParsersAction) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="say whether this machine can grade the course, and with what",
        description="Check what the sandbox needs (bubblewrap, user namespaces, seccomp, the course's packages, "
        "control groups), then start it with the course's packages and report what it sees inside. Exit 0 when "
        "the course can be graded here, 1 otherwise.",
    )
    doctor.add_argument("--unsafe-no-sandbox", action="store_true", help="check the unsafe runner instead")
    doctor.set_defaults(handler=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    from autograder.sandbox.doctor import diagnose_course

    findings = diagnose_course(args.course, args.unsafe_no_sandbox)
    for finding in findings:
        print(f"{'ok  ' if finding.ok else 'FAIL'} {finding.what}: {one_line(finding.detail)}")
    return 0 if all(finding.ok for finding in findings) else 1


def _add_verify(commands: argparse._SubParsersAction) -> None:
    verify = commands.add_parser(
        "verify",
        help="check that the hidden suite gives every known submission its verdict, whatever the secret",
        description="Grade each submission of the assignment's known/verdicts.toml in the sandbox under several secrets "
        "(a fair suite gives each one verdict under all), those expected to pass again with tolerances divided by --margin; "
        "list each verdict that differs with its secret (replay it with --secret), and each mutant of the solution (one "
        "small change) the hidden tests pass. Exit 0 when every verdict holds, 1 otherwise.",
    )
    verify.add_argument("assignment", metavar="ASSIGNMENT", help="an assignment of the course, by name, or its folder")
    verify.add_argument(
        "--secrets",
        type=number(int, 1, "a whole number of at least 1"),
        default=10,
        metavar="N",
        help="fresh random secrets to grade under (default 10)",
    )
    verify.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="SECRET",
        help="grade under this secret instead (repeat for several): replays one that --secrets found",
    )
    verify.add_argument(
        "--margin",
        type=number(float, 1, "a number of at least 1"),
        default=4.0,
        metavar="F",
        help="tolerances divided by F for submissions expected to pass (default 4; 1 skips it)",
    )
    verify.add_argument("--reference", default="auto", metavar="NAME", help="as for grade (default auto)")
    verify.add_argument("--unsafe-no-sandbox", action="store_true", help="run the known submissions without it")
    verify.set_defaults(handler=_verify)


def _verify(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from autograder.assignment import find_assignment
    from autograder.verify import verify_assignment

    assignment = find_assignment(args.assignment, args.course)
    err = err_console()
    with Progress(
        TextColumn("verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)
        result = verify_assignment(
            assignment,
            args.secret,
            args.secrets,
            args.margin,
            args.reference,
            args.unsafe_no_sandbox,
            on_start=lambda total: progress.update(task, total=total),
            on_grading=lambda file: progress.update(task, advance=1, description=shown(file)),
        )
    print(
        f"{result.assignment}: {plural(len(result.files), 'known submission')}, {plural(len(result.secrets), 'secret')}, "
        f"{plural(result.gradings, 'grading')} (margin {result.margin:g})"
    )
    for line in result.fault_lines():
        print(one_line(line))
    for file in result.files:
        findings = result.findings(file)
        place = f" ({one_line(result.places[file])})" if findings and file in result.places else ""
        print(f"{'ok  ' if not findings else 'FAIL'} {one_line(file)}{place}")
        for found in findings:
            under = f" with tolerances divided by {found.margin:g}" if found.margin > 1 else ""
            print(
                f"     {found.question}: expected {found.expected}, got {found.got}{under} under {found.secrets} of "
                f"{plural(len(result.secrets), 'secret')} (first: {one_line(found.first_secret)}): "
                f"{one_line(found.first_check)[:200]}"
            )
    for file in result.unlisted:
        print(f"skip {one_line(file)}: not in known/verdicts.toml, so not graded")
    for (file, other, question), count in result.alike_pairs().items():
        print(
            f"alike {one_line(file)} and {one_line(other)} on {question}: their answers cannot be told apart on the "
            f"hidden inputs under {count} of {plural(len(result.secrets), 'secret')}: neither is named there unless the questions "
            "each gets wrong tell them apart (give them one sentence, or add a check that separates them)"
        )
    print("".join(f"{one_line(line)}\n" for question in result.mutation for line in question.lines()), end="")
    if result.holds:
        print("every verdict holds")
        return 0
    for line in result.fault_summary():
        print(line)
    if result.verdicts_wrong:
        differ = "differs" if result.verdicts_wrong == 1 else "differ"
        print(f"{plural(result.verdicts_wrong, 'verdict')} {differ} from {one_line(result.verdicts_from)}")
    if result.rules_broken:
        broken = "is" if result.rules_broken == 1 else "are"
        print(f"{plural(result.rules_broken, 'feedback rule')} of {one_line(result.verdicts_from)} {broken} broken")
    if result.mistakes_unnamed:
        print(
            f"{plural(result.mistakes_unnamed, 'time')} a known mistake's sentence was not the first thing its "
            "feedback says"
        )
    return 1


def _add_check(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser(
        "check",
        help="run a notebook's public tests, unsandboxed (a student's tool, on their own machine)",
        description="Run a notebook and its public tests, quickly and WITHOUT the sandbox, and say which "
        "questions pass. The notebook's code runs with your rights and can read and change whatever you "
        "can: this is the student's own tool, for their own notebook on their own machine; staff grade "
        "with `autograder grade`. It refuses to run as root, or where hidden tests are in reach: when the "
        "notebook or the folder it is started from is in a course or an assignment, or holds one a few "
        "folders down; --allow-unsandboxed runs it anyway. On a master notebook it checks the solution instead, in the "
        "sandbox: each public test cell, named by its cell. Exit 0 when all pass, 1 otherwise, 2 when there is no "
        "public test to run.",
    )
    check.add_argument("notebook", type=Path, metavar="NOTEBOOK")
    check.add_argument("--question", metavar="ID", help="only this question's public tests")
    check.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="run even as root or beside hidden tests (only for a notebook whose code you trust)",
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from autograder.authoring.origin import is_master
    from autograder.errors import SubmissionError
    from autograder.public_tests import check_notebook, refusal, unsafe_place

    if is_master(args.notebook):
        return _check_master(args)

    unsafe = None if args.allow_unsandboxed else unsafe_place(args.notebook)
    if unsafe:
        raise refusal(args.notebook, unsafe)
    results = check_notebook(args.notebook, args.question, allow_unsandboxed=args.allow_unsandboxed)
    if not results:  # "0 of 0 questions pass" would read as a pass
        raise SubmissionError(f"{args.notebook}: no public tests to run (nbgrader's graded code cells)")
    for result in results:
        mark = "\u2713" if result.passed else "\u2717"
        print(f"{mark} {result.question}" + ("" if result.passed else f": {one_line(result.message)}"))
    passed = sum(result.passed for result in results)
    print(f"{passed} of {plural(len(results), 'question')} pass their public tests")
    return 0 if passed == len(results) else 1


def _check_master(args: argparse.Namespace) -> int:
    """A master notebook: its solution against its public tests, in the sandbox (--allow-unsandboxed: without)."""
    from autograder.authoring.assign import check_master
    from autograder.sandbox.runners import make_runner
    from course.folder import course_or_none

    course = course_or_none(args.course)
    runner = make_runner(args.allow_unsandboxed, *([tuple(course.sandbox.packages)] if course else []))
    results = [r for r in check_master(args.notebook, runner) if args.question in (None, r.question)]
    for result in results:
        mark = "\u2713" if result.passed else "\u2717"
        print(f"{mark} {result.question}: {one_line(result.message)}")
    passed = sum(result.passed for result in results)
    print(f"the solution passes {passed} of {plural(len(results), 'public test')}")
    return 0 if results and passed == len(results) else 1
