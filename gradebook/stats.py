"""An assignment's statistics over each student's current grade: per question mean, share of full
marks, share of zero, the checks failed most often (by test name: never a hidden input), and a
chart, ``questions.png``, in the style of the exam's ``items.png``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from course.wording import plural, shown_score
from untrusted import spreadsheet

from .book import Gradebook
from .grades import current_grades

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
    without the reports' detail, the failed checks found in the database (``failed_checks``). Without ``arrivals``,
    not when each submission came (only the overview chart shows it). Kept per version of the
    grades, as the grade table is (``gradebook.versions``); the first request after a write
    computes it from the grade table and the failed checks, both updated for the students written
    since. What it returns is shared: read only."""
    from .versions import cached

    key = ("statistics", spec.name, spec.model_dump_json(), arrivals)
    return book.run(lambda: cached(book, key, lambda: _statistics(book, spec, arrivals)))


def _statistics(book: Gradebook, spec: AssignmentSpec, arrivals: bool) -> AssignmentStatistics:
    reports = [grade.report for grade in current_grades(book, spec, detail=False) if grade.report is not None]
    failing: dict[str, Counter[str]] = {question.id: Counter() for question in spec.questions}
    for (question_id, test), students in failed_checks(book, spec).items():
        if question_id in failing and students:
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


# The checks failed, found in the database (each check of each latest submission, unpacked from the
# JSON its result keeps): by student, question and test function (a parametrised test's cases once).
_FAILED_SQL = {
    "sqlite": """SELECT l.student_id, r.question_id, CASE WHEN instr(json_extract(t.value, '$.name'), '[') > 0
                   THEN substr(json_extract(t.value, '$.name'), 1, instr(json_extract(t.value, '$.name'), '[') - 1)
                   ELSE json_extract(t.value, '$.name') END AS test
                 FROM ({latest}) l JOIN gradebook_result r ON r.submission_id = l.id, json_each(r.tests) t
                 WHERE json_extract(t.value, '$.status') <> 'passed'
                 GROUP BY l.student_id, r.question_id, test""",
    "postgresql": """SELECT l.student_id, r.question_id, split_part(t.value ->> 'name', '[', 1) AS test
                     FROM ({latest}) l JOIN gradebook_result r ON r.submission_id = l.id
                     CROSS JOIN LATERAL jsonb_array_elements(r.tests) t
                     WHERE t.value ->> 'status' <> 'passed'
                     GROUP BY l.student_id, r.question_id, test""",
}


class _Failed:
    """The checks each student's latest submission fails (by Student pk: (question, test function)
    pairs), and how many students fail each: kept per version of the grades and updated for the
    students a write changed, as the grade table is."""

    __slots__ = ("by_student", "counts")

    def __init__(self, by_student: dict[int, frozenset[tuple[str, str]]], counts: Counter[tuple[str, str]]):
        self.by_student, self.counts = by_student, counts


def failed_checks(book: Gradebook, spec: AssignmentSpec) -> Counter[tuple[str, str]]:
    """Per (question, test function), the students whose latest submission fails it (shared: read
    only)."""
    from .versions import updated

    def computed() -> _Failed:
        by_student = _failed_by_student(book, spec)
        return _Failed(by_student, Counter(pair for pairs in by_student.values() for pair in pairs))

    def update(kept: _Failed, students: set[int]) -> _Failed:
        now = _failed_by_student(book, spec, students)
        counts = kept.counts.copy()  # a new one: the kept one may be in use
        by_student = dict(kept.by_student)
        for pk in students:
            counts.subtract(by_student.pop(pk, frozenset()))
            if pk in now:
                by_student[pk] = now[pk]
                counts.update(now[pk])
        return _Failed(by_student, counts)

    return updated(book, ("failed checks", spec.name), computed, update).counts


def _failed_by_student(
    book: Gradebook, spec: AssignmentSpec, only: set[int] | None = None
) -> dict[int, frozenset[tuple[str, str]]]:
    """(question, test function) pairs failed by each student's submission that counts (with
    ``only``, of those students alone), one query."""
    from django.db import connections

    from .grades import counted_rows
    from .models import Result

    latest = counted_rows(book, spec).select_related(None)
    if only is not None:
        latest = latest.filter(student_id__in=only)
    connection = connections[book.alias]
    sql = _FAILED_SQL.get(connection.vendor)
    found: dict[int, set[tuple[str, str]]] = {}
    if sql is not None:
        # Compiled for the gradebook's own connection: `sql_with_params()` compiles for "default", which
        # the commands leave unconfigured (`autograder stats` failed there).
        inner, params = latest.values("id", "student_id").query.get_compiler(using=book.alias).as_sql()
        with connection.cursor() as cursor:
            cursor.execute(sql.format(latest=inner), params)
            for student, question, test in cursor.fetchall():
                found.setdefault(student, set()).add((question, test))
    else:  # another database: the same, found here
        rows = book.objects(Result).filter(submission__in=latest.values("id"))
        for student, question, tests in rows.values_list("submission__student_id", "question_id", "tests"):
            for t in tests:
                if t["status"] != "passed":
                    found.setdefault(student, set()).add((question, t["name"].split("[")[0]))
    return {student: frozenset(pairs) for student, pairs in found.items()}


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
                    shown_score(q.points),
                    q.students,
                    shown_score(q.mean),
                    shown_score(q.share_full),
                    shown_score(q.share_zero),
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
    figure.suptitle(f"{stats.assignment}: {plural(stats.students, 'student')}")
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
    figure.suptitle(
        f"{stats.assignment}: {plural(stats.students, 'student')}, {plural(len(stats.arrivals_hours), 'submission')}"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None}, format="png")
    plt.close(figure)
