"""An assignment's statistics over each student's current grade: per question mean, share of full
marks, share of zero, the checks failed most often (by test name: never a hidden input), and a
chart, ``questions.png``, in the style of the exam's ``items.png``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from untrusted import spreadsheet

from .book import Gradebook
from .grades import current_grades
from .reports import number

MOST_FAILED = 3  # checks listed per question


class QuestionStatistics(BaseModel):
    question: str
    points: float
    students: int
    mean: float | None
    share_full: float | None
    share_zero: float | None
    most_failed: list[tuple[str, int]]  # (test name, students failing it)


class AssignmentStatistics(BaseModel):
    assignment: str
    students: int
    mean_score: float | None
    max_score: float
    questions: list[QuestionStatistics]
    final_scores: list[float] = []  # each student's, for the distribution
    # When every submission arrived, in hours from the due time (negative: early), or from the first
    # submission when the assignment has no due time.
    arrivals_hours: list[float] = []
    due: str | None = None


def statistics(book: Gradebook, spec: AssignmentSpec, arrivals: bool = True) -> AssignmentStatistics:
    """A fixed number of queries, whatever the number of students: the scores from ``current_grades``
    without the reports' detail, the failed checks counted in the database. Without ``arrivals``,
    not when each submission came (only the overview chart shows it). Kept per version of the
    grades, as the grade table is (``gradebook.versions``); what it returns is shared: read only."""
    from .versions import cached

    key = ("statistics", spec.name, spec.model_dump_json(), arrivals)
    return book.run(lambda: cached(book, key, lambda: _statistics(book, spec, arrivals)))


def _statistics(book: Gradebook, spec: AssignmentSpec, arrivals: bool) -> AssignmentStatistics:
    reports = [grade.report for grade in current_grades(book, spec, detail=False) if grade.report is not None]
    failing: dict[str, Counter[str]] = {question.id: Counter() for question in spec.questions}
    for question_id, test, students in _failed_checks(book, spec):
        if question_id in failing:
            failing[question_id][test] += students
    questions = []
    for question in spec.questions:
        results = [next(q for q in report.questions if q.id == question.id) for report in reports]
        scores = [result.score for result in results]
        questions.append(
            QuestionStatistics(
                question=question.id,
                points=question.points,
                students=len(scores),
                mean=sum(scores) / len(scores) if scores else None,
                share_full=_share(scores, lambda s, full=question.points: s >= full),
                share_zero=_share(scores, lambda s: s == 0),
                most_failed=sorted(failing[question.id].items(), key=lambda item: (-item[1], item[0]))[:MOST_FAILED],
            )
        )
    finals = [report.final_score for report in reports]
    return AssignmentStatistics(
        assignment=spec.name,
        students=len(reports),
        mean_score=sum(finals) / len(finals) if finals else None,
        max_score=spec.max_score,
        questions=questions,
        final_scores=finals,
        arrivals_hours=_arrivals(book, spec) if arrivals else [],
        due=spec.due.isoformat() if spec.due else None,
    )


# The checks failed, counted in the database (each check of each latest submission, unpacked from
# the JSON its result keeps): by test function, a parametrised test's cases once per student.
_FAILED_SQL = {
    "sqlite": """SELECT r.question_id, CASE WHEN instr(json_extract(t.value, '$.name'), '[') > 0
                   THEN substr(json_extract(t.value, '$.name'), 1, instr(json_extract(t.value, '$.name'), '[') - 1)
                   ELSE json_extract(t.value, '$.name') END AS test, COUNT(DISTINCT r.id)
                 FROM gradebook_result r, json_each(r.tests) t
                 WHERE r.submission_id IN ({latest}) AND json_extract(t.value, '$.status') <> 'passed'
                 GROUP BY r.question_id, test""",
    "postgresql": """SELECT r.question_id, split_part(t.value ->> 'name', '[', 1) AS test, COUNT(DISTINCT r.id)
                     FROM gradebook_result r CROSS JOIN LATERAL jsonb_array_elements(r.tests) t
                     WHERE r.submission_id IN ({latest}) AND t.value ->> 'status' <> 'passed'
                     GROUP BY r.question_id, test""",
}


def _failed_checks(book: Gradebook, spec: AssignmentSpec) -> list[tuple[str, str, int]]:
    """(question, test function, students failing it) over each student's latest submission."""
    from django.db import connections

    from .grades import latest_rows
    from .models import Result

    latest = latest_rows(book, spec.name).select_related(None).values("id")
    connection = connections[book.alias]
    sql = _FAILED_SQL.get(connection.vendor)
    if sql is not None:
        inner, params = latest.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(sql.format(latest=inner), params)
            return [(question, test, count) for question, test, count in cursor.fetchall()]
    counts: Counter[tuple[str, str]] = Counter()  # another database: the same, counted here
    for question_id, tests in book.objects(Result).filter(submission__in=latest).values_list("question_id", "tests"):
        counts.update({(question_id, t["name"].split("[")[0]) for t in tests if t["status"] != "passed"})
    return [(question, test, count) for (question, test), count in counts.items()]


def _arrivals(book: Gradebook, spec: AssignmentSpec) -> list[float]:
    from django.db.models.functions import Coalesce

    from .grades import submissions_in_order

    rows = submissions_in_order(book, spec.name).select_related(None)
    times = list(rows.annotate(at=Coalesce("submitted_at", "graded_at")).values_list("at", flat=True))
    if not times:
        return []
    origin = spec.due or min(times)
    return [(moment - origin).total_seconds() / 3600 for moment in times]


def write_statistics(book: Gradebook, spec: AssignmentSpec, out: Path) -> AssignmentStatistics:
    """``out/questions.csv``, ``out/questions.png`` and ``out/overview.png``."""
    stats = statistics(book, spec)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "questions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(["question", "points", "students", "mean", "share_full", "share_zero", "most_failed_checks"])
        for q in stats.questions:
            failed = "; ".join(f"{name} ({count})" for name, count in q.most_failed)
            writer.writerow(
                [
                    q.question,
                    number(q.points),
                    q.students,
                    number(q.mean),
                    number(q.share_full),
                    number(q.share_zero),
                    failed,
                ]
            )
    chart(out / "questions.png", stats)
    overview_chart(out / "overview.png", stats)
    return stats


def _share(scores: list[float], condition) -> float | None:
    return sum(map(condition, scores)) / len(scores) if scores else None


def chart(path: Path | IO[bytes], stats: AssignmentStatistics) -> None:
    """questions.png, to a file or a stream."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, PercentFormatter

    questions = stats.questions
    labels = [f"{n}. {q.question}" for n, q in enumerate(questions, start=1)]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, max(3, 0.35 * len(questions) + 1)), sharey=True)
    positions = range(len(questions))
    left.barh(positions, [(q.mean or 0) / q.points for q in questions], color="#4c72b0")
    left.set_xlim(0, 1)
    left.set_xlabel("mean score (% of the points)")
    left.xaxis.set_major_formatter(PercentFormatter(1.0))
    left.set_yticks(list(positions), labels)
    left.invert_yaxis()
    right.barh(positions, [q.share_full or 0 for q in questions], color="#55a868", label="full marks")
    right.barh(positions, [-(q.share_zero or 0) for q in questions], color="#c44e52", label="zero")
    right.set_xlim(-1, 1)
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel("students with zero (left) and with full marks (right)")
    right.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{abs(value):.0%}"))  # both sides positive
    right.legend(loc="lower right", fontsize="small")
    figure.suptitle(f"{stats.assignment}: {stats.students} students")
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)


def overview_chart(path: Path | IO[bytes], stats: AssignmentStatistics) -> None:
    """overview.png: the distribution of final scores, and when the submissions arrived."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.hist(
        stats.final_scores,
        bins=min(20, max(5, len(stats.final_scores) // 2 or 5)),
        range=(0, stats.max_score),
        color="#4c72b0",
    )
    left.set_xlabel(f"final score (of {stats.max_score:g})")
    left.set_ylabel("students")
    # Counts are whole numbers of students and submissions: no tick at 2.5 students.
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    # Arrivals in hours over three days or less, in days beyond (a week of hours reads badly).
    hours = stats.arrivals_hours
    in_days = bool(hours) and max(hours) - min(hours) > 72
    unit = "days" if in_days else "hours"
    right.hist([h / 24 for h in hours] if in_days else hours, bins=24, color="#dd8452")
    if stats.due:
        right.axvline(0, color="black", linewidth=1)
        right.set_xlabel(f"{unit} from the due time (the line)")
    else:
        right.set_xlabel(f"{unit} from the first submission")
    right.set_ylabel("submissions")
    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    figure.suptitle(f"{stats.assignment}: {stats.students} students, {len(stats.arrivals_hours)} submissions")
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None}, format="png")
    plt.close(figure)
