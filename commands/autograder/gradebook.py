"""The commands on the gradebook's grades: ``marks`` (hand grading through a sheet), ``reports``,
``history``, ``stats``, ``roster``, ``grades`` (files for course platforms), ``similarity`` and
``extend``. Each reads --gradebook PATH (default: in a course folder the course's own,
<course>/.gradewright/gradebook.db, the site's; elsewhere ./gradebook.db, as ``grade --out DIR``
writes DIR/gradebook.db) or the database $GRADEWRIGHT_DATABASE_URL names."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from course.wording import plural, shown_score
from untrusted.text import one_line

from ..common import AUTOGRADER, console, number, open_book, problems, progress_bar, shown
from ..common import gradebook_options as _options
from ..groups import add_assignment_groups
from .counting import print_choices
from .grades import add_grades, print_publications


def gradebook_options(command: argparse.ArgumentParser) -> None:
    _options(
        command,
        "the SQLite gradebook file (default: the course's, <course>/.gradewright/gradebook.db; outside a course ./gradebook.db)",
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    for add in (
        _add_marks,
        _add_reports,
        _add_history,
        _add_stats,
        _add_roster,
        add_grades,
        _add_similarity,
        _add_extend,
    ):
        add(commands)


def _add_marks(commands: argparse._SubParsersAction) -> None:
    marks = commands.add_parser(
        "marks",
        help="hand-graded questions: a sheet to fill in, and its marks recorded",
        description="Marks for the questions graded by hand (manual = true), through a spreadsheet.",
    )
    marks_what = marks.add_subparsers(title="what", metavar="WHAT", required=True)
    export = marks_what.add_parser(
        "export",
        help="write the marks sheet",
        description="Write one row per student and hand-graded question of their latest submission, with the "
        "answer to read, the mark given so far and its status (unmarked, marked, answer changed since marked), "
        "and empty score and comment columns to fill in.",
    )
    export.add_argument("assignment", metavar="ASSIGNMENT")
    export.add_argument("--out", type=Path, required=True, metavar="FILE", help="the CSV file to write")
    gradebook_options(export)
    export.set_defaults(handler=_marks_export)
    load = marks_what.add_parser(
        "import",
        help="record a filled-in marks sheet",
        description="Record the score and comment of every row that has a score. Rows with an unknown student "
        "or question, or a score outside 0..points, are listed by row number and the others recorded (exit 1). "
        "A sheet of another assignment changes nothing (exit 2).",
    )
    load.add_argument("assignment", metavar="ASSIGNMENT")
    load.add_argument("sheet", type=Path, metavar="FILE")
    load.add_argument("--reports", type=Path, metavar="DIR", help="then rewrite every student's reports in DIR")
    gradebook_options(load)
    load.set_defaults(handler=_marks_import)
    add_assignment_groups(marks_what)


def _marks_export(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from gradebook.marking.marks import export_marks

    assignment = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book:
        rows = export_marks(book, assignment, args.out)
    print(f"{one_line(str(args.out))}: {plural(rows, 'answer')} to mark")
    return 0


def _marks_import(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from gradebook.reports import import_marks_and_reports

    assignment = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book:
        result = import_marks_and_reports(book, assignment, args.sheet, args.reports)
    problems(AUTOGRADER, result.problems)
    print(
        f"{plural(result.recorded, 'mark')} recorded, {plural(result.unchanged, 'row')} without a score, "
        f"{plural(len(result.problems), 'row')} refused"
    )
    return 1 if result.problems else 0


def _add_reports(commands: argparse._SubParsersAction) -> None:
    reports = commands.add_parser(
        "reports",
        help="rewrite every student's reports from the gradebook",
        description="Write each student's current reports (json, feedback.txt, gradescope.json) and grades.csv "
        "into DIR: their latest submission, the marks given by hand, the late penalty.",
    )
    reports.add_argument("assignment", metavar="ASSIGNMENT")
    reports.add_argument("--out", type=Path, required=True, metavar="DIR")
    gradebook_options(reports)
    reports.set_defaults(handler=_reports)


def _reports(args: argparse.Namespace) -> int:
    from autograder.assignment import find_assignment
    from gradebook.reports import write_current_reports

    assignment = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book:
        count = write_current_reports(book, assignment, args.out)
    reports = plural(count, "student's reports", "students' reports")
    print(f"{reports} written to {one_line(str(args.out))}")
    return 0


def _add_history(commands: argparse._SubParsersAction) -> None:
    history = commands.add_parser(
        "history",
        help="every submission of a student",
        description="Every submission of a student (to one assignment, or to all of the course's), with its id, "
        "time, hash and scores; * marks the one their grade comes from; then the staff's choices of it, with why, "
        "and their publishing of the assignments' grades.",
    )
    history.add_argument("student", metavar="STUDENT")
    history.add_argument("assignment", nargs="?", metavar="ASSIGNMENT")
    gradebook_options(history)
    history.set_defaults(handler=_history)


def _history(args: argparse.Namespace) -> int:
    from rich.table import Table

    from autograder.assignment import find_assignments
    from gradebook.history import choices, history
    from gradebook.publishing import publications

    specs = find_assignments([args.assignment] if args.assignment else [], args.course)
    with open_book(args, create=False) as book:
        entries = history(book, args.student, specs)
        chosen = choices(book, args.student, specs)
        published = [entry for spec in specs for entry in publications(book, spec)]
    table = Table(title=f"{shown(args.student)}: {plural(len(entries), 'submission')}")
    for column in ("", "id", "assignment", "submitted", "sha256", "score", "late", "final"):
        table.add_column(column)
    for entry in entries:
        table.add_row(
            "*" if entry.current else "",
            str(entry.id),
            shown(entry.assignment),
            shown(entry.submitted_at),
            entry.sha256[:12],
            f"{shown_score(entry.score)} / {shown_score(entry.max_score)}",
            f"-{shown_score(entry.late_penalty)}" if entry.late_penalty else "",
            shown_score(entry.final_score),
        )
    console().print(table)
    print_choices(chosen)
    print_publications(published)
    return 0


def _add_stats(commands: argparse._SubParsersAction) -> None:
    stats = commands.add_parser(
        "stats",
        help="per question statistics of an assignment",
        description="Per question: mean score, share of full marks, share of zero, the checks failed most "
        "often (by test name). Writes DIR/questions.csv, DIR/questions.png and DIR/overview.png (the distribution "
        "of final scores, and when submissions arrived around the due time).",
    )
    stats.add_argument("assignment", metavar="ASSIGNMENT")
    stats.add_argument("--out", type=Path, required=True, metavar="DIR")
    gradebook_options(stats)
    stats.set_defaults(handler=_stats)


def _stats(args: argparse.Namespace) -> int:
    from rich.table import Table

    from autograder.assignment import find_assignment
    from gradebook.stats import write_statistics

    assignment = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book:
        stats = write_statistics(book, assignment, args.out)
    mean = "none" if stats.mean_score is None else shown_score(stats.mean_score)
    table = Table(
        title=f"{assignment.name}: {plural(stats.students, 'student')}, mean {mean} / {shown_score(stats.max_score)}"
    )
    for column in ("question", "mean", "full", "zero", "most failed checks"):
        table.add_column(column)
    for q in stats.questions:
        table.add_row(
            shown(q.question),
            "" if q.mean is None else f"{shown_score(q.mean)} / {shown_score(q.points)}",
            _percent(q.share_full),
            _percent(q.share_zero),
            shown("; ".join(f"{name} ({count})" for name, count in q.most_failed)),
        )
    console().print(table)
    print(", ".join(one_line(str(args.out / name)) for name in ("questions.csv", "questions.png", "overview.png")))
    return 0


def _percent(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def _add_roster(commands: argparse._SubParsersAction) -> None:
    roster = commands.add_parser("roster", help="the course's students", description="The course's students.")
    roster_what = roster.add_subparsers(title="what", metavar="WHAT", required=True)
    roster_import = roster_what.add_parser(
        "import",
        help="add or update students from a CSV file",
        description="Columns student_id,name,email and optionally canvas_id, moodle_id, sis_id. student_id is the "
        "name a student's submissions are filed under; canvas_id and moodle_id map a Canvas or Moodle download to "
        "them. Repeated ids change nothing (exit 2).",
    )
    roster_import.add_argument("roster", type=Path, metavar="ROSTER.csv")
    gradebook_options(roster_import)
    roster_import.set_defaults(handler=_roster_import)


def _roster_import(args: argparse.Namespace) -> int:
    from gradebook.roster import import_roster

    with open_book(args, create=True) as book:
        result = import_roster(book, args.roster)
    problems(AUTOGRADER, result.problems)
    print(
        f"{plural(result.added, 'student')} added, {result.updated} updated, {plural(len(result.problems), 'row')} refused"
    )
    return 1 if result.problems else 0


def _add_similarity(commands: argparse._SubParsersAction) -> None:
    similar = commands.add_parser(
        "similarity",
        help="pairs of students whose code is alike",
        description="Compare the students' latest submissions (copydetect's winnowing, offline; the released "
        "notebook's starter code left out; only pairs that share a fingerprint are compared) and list the pairs "
        "sharing more than the threshold of their code: a report for your judgement, never a penalty. The report "
        "is kept in the gradebook: the staff's similarity page shows it. --out writes it as HTML, each pair's "
        "matched fragments side by side in matching colours, each linked to its partner; --student compares one "
        "student's latest submission with the rest. For an assignment with values drawn per student, each notebook "
        "that holds values not its student's is named after the table, with the classmate whose values they are.",
    )
    similar.add_argument("assignment", metavar="ASSIGNMENT")
    similar.add_argument(
        "--threshold",
        type=number(float, 0.0, "a share between 0 and 1"),
        default=0.5,
        metavar="SHARE",
        help="default 0.5",
    )
    similar.add_argument("--out", type=Path, metavar="FILE", help="also write the pairs side by side as HTML")
    similar.add_argument(
        "--student", metavar="STUDENT", help="only this student's latest submission against the rest (not kept)"
    )
    gradebook_options(similar)
    similar.set_defaults(handler=_similarity)


def _similarity(args: argparse.Namespace) -> int:
    from rich.table import Table

    from autograder.assignment import find_assignment
    from gradebook.similarity.report import compare, values_lines, write_html

    assignment = find_assignment(args.assignment, args.course)
    with open_book(args, create=False) as book, progress_bar("pairs compared") as progress:
        report = compare(book, assignment, args.threshold, args.student, progress, highlight=bool(args.out))
    table = Table(
        title=f"{assignment.name}: {plural(report.compared, 'submission')} compared, {plural(len(report.pairs), 'pair')} "
        f"above {args.threshold:.0%}"
    )
    for column in ("student", "shares with", "of theirs", "of the other's"):
        table.add_column(column)
    for pair in report.pairs:
        table.add_row(shown(pair.first), shown(pair.second), f"{pair.first_share:.0%}", f"{pair.second_share:.0%}")
    console().print(table)
    for line in values_lines(report):  # a notebook of one's own that is not its student's
        print(one_line(line))
    for student in report.unreadable:
        print(f"{AUTOGRADER}: {one_line(student)}: the latest submission cannot be read; left out", file=sys.stderr)
    if args.out:
        print(one_line(str(write_html(report, args.out))))
    return 0


def _add_extend(commands: argparse._SubParsersAction) -> None:
    extend = commands.add_parser(
        "extend",
        help="give a student more time",
        description="Record an extension. On an assignment, the student's submissions are late only after "
        "--until. On an exam taken online (listed in course.toml), their own terms: --extra-minutes on the time "
        "limit, --until a later close, --attempts in all; what is not given stays as it was.",
    )
    extend.add_argument("student", metavar="STUDENT")
    extend.add_argument("assignment", metavar="ASSIGNMENT_OR_EXAM")
    extend.add_argument(
        "--until", type=_moment, metavar="TIME", help="ISO 8601 with a time zone, e.g. 2026-12-08T23:59:00+01:00"
    )
    extend.add_argument(
        "--extra-minutes",
        type=number(float, 0, "a number of minutes"),
        metavar="N",
        help="an exam: minutes added to its time limit",
    )
    extend.add_argument(
        "--attempts",
        type=number(int, 1, "a whole number"),
        metavar="N",
        help="an exam: the attempts they may take in all (one more grants another)",
    )
    gradebook_options(extend)
    extend.set_defaults(handler=_extend)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone; add one, as in 2026-12-08T23:59:00+01:00")
    return moment


def _extend(args: argparse.Namespace) -> int:
    from gradebook.extensions import grant

    with open_book(args, create=False) as book:
        said = grant(
            book,
            args.student,
            args.assignment,
            course=args.course,
            until=args.until,
            extra_minutes=args.extra_minutes,
            attempts=args.attempts,
        )
    print(f"{shown(args.student)}: {one_line(said)}")
    return 0
