"""Benchmark: the staff's pages at course scale, 200 students and then 2,000, side by side.

    python benchmarks/pages.py [--sizes 200 2000] [--runs 5] [--database-url URL]

Writes a course's grades straight into a fresh gradebook (tests/course_data.py: two graded
submissions per student, hand marks on the written question), then asks for each staff page
through Django's test client in this process, signed in as a teaching assistant (an instructor for
the roster), and prints Markdown for docs/benchmarks.md: each page's median time over --runs with
nothing written in between (wall and this process's CPU), the first request's after a write of one
student's name and after one student's new graded submission, their database queries, and how each
grows from the first size to the last.
The database is SQLite in a temporary folder unless --database-url names an empty PostgreSQL one.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GRADED = "sequences-and-attention"
HAND = "attention-not-explanation"
PAGES = {
    "gradebook": f"/staff/gradebook/{GRADED}/",
    "gradebook, by score": f"/staff/gradebook/{GRADED}/?sort=score",
    "gradebook, by score, page 10": f"/staff/gradebook/{GRADED}/?sort=score&page=10",
    "gradebook, below 5": f"/staff/gradebook/{GRADED}/?below=5",
    "gradebook, awaiting hand grading": f"/staff/gradebook/{HAND}/?show=hand",
    "statistics": f"/staff/statistics/{GRADED}/",
    "statistics chart (overview.png)": f"/staff/statistics/{GRADED}/overview.png",
    "statistics chart (questions.png)": f"/staff/statistics/{GRADED}/questions.png",
    "hand grading": f"/staff/marking/{HAND}/",
    "roster": "/staff/roster/",
}


def setup(database_url: str | None) -> None:
    from service.settings import configure

    state = Path(tempfile.mkdtemp(prefix="gradewright-pages-benchmark-"))
    atexit.register(shutil.rmtree, state, ignore_errors=True)  # its gradebook: 30 MB a run
    configure(ROOT, database_url=database_url, state=state)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)


def _analyzed() -> None:
    """PostgreSQL's planner statistics of the tables just seeded, as autovacuum takes them a minute
    after a bulk load (before them, the latest submissions' subquery is planned as one row and a
    page waits 0.4 s on the server for it)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for table in ("student", "submission", "result", "mark", "assignment"):
                cursor.execute(f"ANALYZE gradebook_{table}")


def staff_clients():
    from django.contrib.auth.models import User
    from django.test import Client

    from service.accounts.models import Member

    clients = {}
    for role in (Member.TA, Member.INSTRUCTOR):
        user = User.objects.create_user(f"bench-{role}")
        Member.objects.create(user=user, role=role)
        clients[role] = Client()
        clients[role].force_login(user)
    return clients


def _changed() -> None:
    """A write to the grades (one student's name, to itself): the next request computes anew."""
    from django.db.models import F

    from gradebook.models import Student

    Student.objects.filter(pk=Student.objects.order_by("pk").values("pk")[:1]).update(name=F("name"))


def _graded(n: int) -> None:
    """A write as a deadline night makes them: one student's new graded submission (the ``n``-th
    student's, recorded as grading records it: a submission and a result per question)."""
    from datetime import UTC, datetime

    from autograder.reports.model import QuestionResult, Report
    from gradebook.grading import record_report
    from gradebook.models import Student
    from service.core.access import assignments, book

    spec = assignments()[GRADED]
    student = Student.objects.order_by("pk")[n % Student.objects.count()]
    questions = [
        QuestionResult(id=q.id, title=q.title, score=q.points, max_score=q.points, status="passed", feedback="")
        for q in spec.questions
    ]
    now = datetime.now(UTC).isoformat()
    report = Report(
        student=student.student_id,
        assignment=spec.name,
        score=sum(q.score for q in questions),
        max_score=spec.max_score,
        questions=questions,
        submission="",
        sha256=f"bench-{n}-{now}",
        reference="numpy",
        sandbox="bench",
        graded_at=now,
        grader_version="bench",
        submitted_at=now,
    )
    gradebook = book()
    gradebook.run(lambda: record_report(gradebook, gradebook.sync_assignment(spec), report))


def measure(clients, runs: int) -> dict[str, tuple[float, ...]]:
    """Per page: (median seconds, median CPU seconds of this process, queries) of --runs requests
    with nothing written in between (the kept grade table and statistics), the same of the first
    request after a write of one student's name (to itself), and of the first after one student's
    new graded submission (the kept table updated for that student; a chart drawn anew). SQLite runs in this process,
    so its CPU time is the request's whole cost, whatever else the machine is doing; the wall time
    is what a user waits."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from service.accounts.models import Member

    for label, url in PAGES.items():  # once after the seeding (a write of every student): computed anew
        clients[Member.INSTRUCTOR if label == "roster" else Member.TA].get(url)
    figures = {}
    for label, url in PAGES.items():
        client = clients[Member.INSTRUCTOR if label == "roster" else Member.TA]
        times, cpu, queries = [], [], []
        _changed()
        for _ in range(runs + 1):
            connection.queries_log.clear()  # a full log (9,000) would make the capture read 0
            with CaptureQueriesContext(connection) as captured:
                began, began_cpu = time.perf_counter(), time.process_time()
                answer = client.get(url)
                times.append(time.perf_counter() - began)
                cpu.append(time.process_time() - began_cpu)
            if answer.status_code != 200:
                raise SystemExit(f"{url}: answered {answer.status_code}")
            queries.append(len(captured))
        _graded(len(figures))
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as captured:
            began, began_cpu = time.perf_counter(), time.process_time()
            answer = client.get(url)
            graded = (time.perf_counter() - began, time.process_time() - began_cpu, len(captured))
        if answer.status_code != 200:
            raise SystemExit(f"{url}: answered {answer.status_code}")
        figures[label] = (
            statistics.median(times[1:]),
            statistics.median(cpu[1:]),
            queries[-1],
            times[0],
            cpu[0],
            queries[0],
            *graded,
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    setup(args.database_url)
    from service.core.access import assignments
    from tests.course_data import seed

    clients = staff_clients()
    results = {}
    seeded = 0
    for size in sorted(args.sizes):
        began = time.perf_counter()
        for name in (GRADED, HAND):
            seed(assignments()[name], size - seeded, prefix=f"s{size}-", accounts=name == GRADED)
        made = time.perf_counter() - began
        _analyzed()
        seeded = size
        results[size] = measure(clients, args.runs)
        print(f"{size} students seeded in {made:.1f} s", file=sys.stderr)
    small, large = min(results), max(results)
    print(
        f"Staff pages, {os.cpu_count()} cores, {'PostgreSQL' if args.database_url else 'SQLite'}; the median of "
        f"{args.runs} requests (a chart's first: drawn anew), and the database queries:\n"
    )
    print("Nothing written since the last request (the kept table): median wall, median CPU, queries\n")
    print(f"| page | {small} students | {large} students | CPU, {small} | CPU, {large} | growth (CPU) | queries |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label in PAGES:
        (t1, c1, q1, *_), (t2, c2, q2, *_) = results[small][label], results[large][label]
        queries = f"{q1} and {q2}" if q1 != q2 else f"{q1} at both"
        print(
            f"| {label} | {t1:.3f} s | {t2:.3f} s | {c1:.3f} s | {c2:.3f} s | {c2 / max(c1, 1e-9):.1f} times "
            f"| {queries} |"
        )
    for title, first in (
        ("a write of one student's name (to itself)", 3),
        ("one student's new graded submission", 6),
    ):
        print(f"\nThe first request after {title} (a chart drawn anew): wall, CPU, queries\n")
        print(f"| page | {small} students | {large} students | CPU, {small} | CPU, {large} | growth (CPU) | queries |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for label in PAGES:
            f1, d1, q1 = results[small][label][first : first + 3]
            f2, d2, q2 = results[large][label][first : first + 3]
            queries = f"{q1} and {q2}" if q1 != q2 else f"{q1} at both"
            print(
                f"| {label} | {f1:.3f} s | {f2:.3f} s | {d1:.3f} s | {d2:.3f} s | {d2 / max(d1, 1e-9):.1f} times "
                f"| {queries} |"
            )


if __name__ == "__main__":
    main()
