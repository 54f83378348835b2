"""``course exam``: build a paper exam's variants (from the lessons' checks, or a definition's zones),
grade its answer sheets, and its open questions' marks in the gradebook. Each command parses, calls
one library function and prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from course.errors import Problem
from course.wording import plural
from untrusted.text import one_line

from . import common
from .common import gradebook_options, open_book
from .groups import add_exam_groups

PROG = common.COURSE


def add_exam(commands: argparse._SubParsersAction) -> None:
    exam = commands.add_parser(
        "exam",
        help="build exams from the check questions and grade them",
        description="Per-student exam variants built from the lessons' check questions.",
    )
    exam_what = exam.add_subparsers(title="what", metavar="WHAT", required=True)
    build = exam_what.add_parser(
        "build",
        help="a variant per student on the roster",
        description="Write DIR/<student_id>.md, .html (math as MathML, renders offline) and .sheet.html (the "
        "printable answer sheet), DIR/key.json and "
        "DIR/responses-template.csv. Question and option order come from (seed, student id): the same inputs "
        "give the same variants on any machine.",
    )
    build.add_argument("--roster", required=True, type=Path, metavar="ROSTER.csv", help="columns student_id,name,email")
    build.add_argument("--out", required=True, type=Path, metavar="DIR")
    build.add_argument("--seed", type=int, default=0, metavar="N")
    build.add_argument("--questions", type=int, metavar="K", help="questions per variant (default: all)")
    build.add_argument(
        "--definition",
        type=Path,
        metavar="EXAM.toml",
        help="the exam's zones (TOML or JSON): each student's own draw of N questions from each zone's pool, "
        "points per zone, alternatives, generated questions drawn per student",
    )
    build.add_argument(
        "--statistics",
        type=Path,
        metavar="ITEMS.csv",
        help="an earlier grading's items.csv: the zones that ask for balance draw one question per band of difficulty",
    )
    build.add_argument(
        "--lessons",
        type=Path,
        action="append",
        metavar="PATH",
        help="lessons to draw from (default: the course's lessons)",
    )
    build.add_argument("--no-shuffle", action="store_true", help="every variant in the lessons' order")
    build.add_argument(
        "--open",
        type=int,
        metavar="N",
        dest="open_questions",
        help="add N self-check questions, graded by hand, the same number for every student (default 0)",
    )
    build.add_argument("--include-open", action="store_true", help="add all the self-check questions (--open all)")
    build.add_argument("--force", action="store_true", help="replace an exam already built in DIR")
    build.add_argument("--title", help="the exam's title (default: from course.toml)")
    build.set_defaults(handler=_exam_build)
    grade = exam_what.add_parser(
        "grade",
        help="grade the answer sheets of an exam",
        description="Grade RESPONSES.csv (student_id and q1..qK, letters as printed on each student's variant, "
        "blank when unanswered) against DIR/key.json. Writes RESULTS/scores.csv, RESULTS/feedback/<student_id>.md, "
        "RESULTS/items.csv and RESULTS/items.png. Bad rows are reported with their row number; good rows are graded.",
    )
    grade.add_argument("exam", type=Path, metavar="DIR")
    grade.add_argument("responses", type=Path, metavar="RESPONSES.csv")
    grade.add_argument("--out", required=True, type=Path, metavar="RESULTS")
    _gradebook_options(grade, "count the open questions' marks from this gradebook and record the results there")
    grade.set_defaults(handler=_exam_grade)
    marks = exam_what.add_parser(
        "marks",
        help="the open questions, marked by hand through a spreadsheet",
        description="Marks for an exam's open questions (answered on the paper sheet), kept in the gradebook: "
        "each is worth 1 point, like a check question, and counts in scores.csv when the exam is graded with "
        "--gradebook.",
    )
    marks_what = marks.add_subparsers(title="what", metavar="WHAT", required=True)
    marks_export = marks_what.add_parser(
        "export",
        help="write the marks sheet",
        description="One row per student and open question, with the question, the mark given so far, and empty "
        "score and comment columns.",
    )
    marks_export.add_argument("exam", type=Path, metavar="DIR")
    marks_export.add_argument("--out", required=True, type=Path, metavar="FILE")
    _gradebook_options(marks_export)
    marks_export.set_defaults(handler=_exam_marks_export)
    marks_import = marks_what.add_parser(
        "import",
        help="record a filled-in marks sheet",
        description="Record every row with a score (0..1). Bad rows are listed by row number and the others "
        "recorded (exit 1); a sheet of another exam changes nothing (exit 2).",
    )
    marks_import.add_argument("exam", type=Path, metavar="DIR")
    marks_import.add_argument("sheet", type=Path, metavar="FILE")
    _gradebook_options(marks_import)
    marks_import.set_defaults(handler=_exam_marks_import)
    add_exam_groups(marks_what)


def _exam_build(args: argparse.Namespace) -> int:
    from course.exams import build_exam
    from course.folder import course_or_none, lesson_paths

    lessons = lesson_paths(args.lessons, args.course)
    course = course_or_none(args.course)
    result = build_exam(
        args.roster,
        args.out,
        seed=args.seed,
        questions=args.questions,
        lessons=lessons,
        shuffle=not args.no_shuffle,
        include_open=args.include_open,
        open_questions=args.open_questions,
        force=args.force,
        title=args.title,
        course_title=course.exam_title() if course else None,
        definition=args.definition,
        statistics=args.statistics,
    )
    _print_problems(result.problems, sys.stderr)
    print(f"{args.out}: {plural(result.students, 'variant')} of {plural(result.questions, 'question')}")
    return 2 if result.problems else 0


def _exam_grade(args: argparse.Namespace) -> int:
    from gradebook.exams import grade_exam_with_marks

    result = grade_exam_with_marks(args.exam, args.responses, args.out, args.gradebook, args.database_url)
    _print_problems(result.problems, sys.stderr)
    print(f"{args.out}: {plural(result.graded, 'student')} graded")
    return 2 if any(p.severity == "error" for p in result.problems) else 0


def _gradebook_options(
    command: argparse.ArgumentParser,
    what: str = "the gradebook (default: the course's, <course>/.gradewright/gradebook.db; outside a course ./gradebook.db)",
) -> None:
    gradebook_options(command, what)


def _book(args: argparse.Namespace):
    """The gradebook a command names (made when there is none yet: exam marks may come first)."""
    return open_book(args, create=True)


def _exam_marks_export(args: argparse.Namespace) -> int:
    from gradebook.exams import export_exam_marks

    with _book(args) as book:
        rows = export_exam_marks(book, args.exam, args.out)
    print(f"{one_line(str(args.out))}: {plural(rows, 'open answer')} to mark")
    return 0


def _exam_marks_import(args: argparse.Namespace) -> int:
    from gradebook.exams import import_exam_marks

    with _book(args) as book:
        result = import_exam_marks(book, args.exam, args.sheet)
    common.problems(PROG, result.problems)
    print(
        f"{plural(result.recorded, 'mark')} recorded, {plural(result.unchanged, 'row')} without a score, "
        f"{plural(len(result.problems), 'row')} refused"
    )
    return 1 if result.problems else 0


def _print_problems(problems: list[Problem], stream: TextIO) -> None:
    for problem in problems:
        print(problem, file=stream)
