"""The staff's pages hold a large course: their database queries do not grow with it (no query per
student or per submission), long tables page on the server after filtering and sorting the whole
course, and the statistics' charts are drawn once per change of their data.

Each test writes its course straight into the tables (tests/course_data.py) inside a transaction it
rolls back, on a gradebook emptied for it there: it sees only its own students."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from gradebook.models import Student
from service.accounts.models import Member
from service.accounts.views import ROSTER_PAGE
from service.core.access import assignments
from service.grades.views import PER_PAGE

from .course_data import Seeded, seed

pytestmark = pytest.mark.timeout(300)

GRADED = "sequences-and-attention"
HAND = "attention-not-explanation"


@contextmanager
def course_of(count: int, names: tuple[str, ...] = (GRADED, HAND)) -> Iterator[tuple[dict[str, Client], Seeded]]:
    """A course of ``count`` students, each with two graded submissions of each assignment in
    ``names``; a teaching assistant's and an instructor's clients. Undone afterwards."""
    with transaction.atomic():
        Student.objects.all().delete()  # other tests' students: back with the rollback
        seeded = None
        for name in names:
            made = seed(assignments()[name], count, prefix="p-", accounts=name == names[0])
            seeded = seeded or made  # the first assignment's scores
        clients = {}
        for role in (Member.TA, Member.INSTRUCTOR):
            user = User.objects.create_user(f"page-test-{role}")
            Member.objects.create(user=user, role=role)
            clients[role] = Client()
            clients[role].force_login(user)
        assert seeded is not None
        yield clients, seeded
        transaction.set_rollback(True)


def pages(seeded: Seeded) -> dict[str, tuple[str, str]]:
    """Each staff page that reads the whole course: (the role that asks, the address)."""
    from gradebook.models import Submission

    one = seeded.students[3]
    answer = Submission.objects.filter(student__student_id=one, assignment__name=HAND).order_by("-id").first()
    ta = Member.TA
    return {
        "gradebook": (ta, f"/staff/gradebook/{GRADED}/"),
        "gradebook sorted by score": (ta, f"/staff/gradebook/{GRADED}/?sort=score"),
        "gradebook below a score": (ta, f"/staff/gradebook/{GRADED}/?below=6&sort=score"),
        "gradebook awaiting hand grading": (ta, f"/staff/gradebook/{HAND}/?show=hand"),
        "gradebook, second page": (ta, f"/staff/gradebook/{GRADED}/?page=2"),
        "statistics": (ta, f"/staff/statistics/{GRADED}/"),
        "statistics' overview chart": (ta, f"/staff/statistics/{GRADED}/overview.png"),
        "statistics' questions chart": (ta, f"/staff/statistics/{GRADED}/questions.png"),
        "hand grading": (ta, f"/staff/marking/{HAND}/"),
        "hand grading's first answer": (ta, f"/staff/marking/{HAND}/written/"),
        "an answer to mark": (ta, f"/staff/marking/{HAND}/written/{answer.id}/"),
        "a student's history": (ta, f"/staff/students/{one}/"),
        "roster": (Member.INSTRUCTOR, "/staff/roster/"),
    }


def queries_per_page(count: int) -> dict[str, int]:
    with course_of(count) as (clients, seeded):
        counts = {}
        for label, (role, url) in pages(seeded).items():
            with CaptureQueriesContext(connection) as captured:
                answer = clients[role].get(url)
            assert answer.status_code in (200, 302), f"{label} ({url}) answered {answer.status_code}"
            counts[label] = len(captured)
        return counts


def test_each_staff_page_makes_the_same_number_of_queries_for_20_and_60_students():
    small, large = queries_per_page(20), queries_per_page(60)
    grown = {page: (small[page], large[page]) for page in small if small[page] != large[page]}
    assert not grown, "queries that grow with the course (20 students, 60 students): " + "; ".join(
        f"{page}: {a} then {b}" for page, (a, b) in grown.items()
    )


def queries_after_a_write(count: int, monkeypatch) -> dict[str, int]:
    """Per page, the queries of its first request after a write of one student's grade (a regrade
    of their latest result), the page asked for once before; each computation of a grade table on
    the way read that student's rows alone."""
    from gradebook import grades
    from gradebook.models import Result

    recomputed: list = []
    real = grades._current_grades

    def recording(book, spec, everyone, detail, only=None):
        recomputed.append(None if only is None else set(only))
        return real(book, spec, everyone, detail, only)

    with course_of(count) as (clients, seeded):
        counts = {}
        for n, (label, (role, url)) in enumerate(pages(seeded).items()):
            clients[role].get(url)
            one = seeded.students[n % count]
            pk = Student.objects.get(student_id=one).pk
            result = Result.objects.filter(submission__student__student_id=one).order_by("-id").first()
            result.score = result.max_score
            result.save()
            monkeypatch.setattr(grades, "_current_grades", recording)
            with CaptureQueriesContext(connection) as captured:
                answer = clients[role].get(url)
            monkeypatch.setattr(grades, "_current_grades", real)
            assert answer.status_code in (200, 302), f"{label} ({url}) answered {answer.status_code}"
            counts[label] = len(captured)
            assert all(only == {pk} for only in recomputed), f"{label}: recomputed {recomputed}, not {pk}"
            if label.startswith(("gradebook", "statistics", "hand grading")):
                assert recomputed, f"{label}: no grade table read after the write"
            recomputed.clear()
        return counts


def test_the_first_request_after_a_one_student_write_updates_for_that_student_in_fixed_queries(monkeypatch):
    """After a write of one student's grade, each page's first request reads that student's rows
    alone (the kept table updated, not computed anew), in as many queries for 20 students as 60."""
    small, large = queries_after_a_write(20, monkeypatch), queries_after_a_write(60, monkeypatch)
    grown = {page: (small[page], large[page]) for page in small if small[page] != large[page]}
    assert not grown, "queries that grow with the course after a write (20 students, 60): " + "; ".join(
        f"{page}: {a} then {b}" for page, (a, b) in grown.items()
    )


def rows(page: str) -> list[str]:
    """The student ids of a gradebook page's rows, in order."""
    return re.findall(r'<tr><td><a href="/staff/students/([^/"]+)/">', page)


def test_the_pages_show_the_course_filters_sort_and_hand_grading_as_before():
    with course_of(20) as (clients, seeded):
        ta = clients[Member.TA]
        page = ta.get(f"/staff/gradebook/{GRADED}/").content.decode()
        assert rows(page) == seeded.students  # by student id
        one = seeded.students[5]
        assert f"{seeded.scores[one]:g}" in page.split(one, 2)[2].split("</tr>")[0]  # their final score, in their row
        by_score = rows(ta.get(f"/staff/gradebook/{GRADED}/?sort=score").content.decode())
        assert [seeded.scores[s] for s in by_score] == sorted(seeded.scores.values(), reverse=True)
        below = rows(ta.get(f"/staff/gradebook/{GRADED}/?below=6").content.decode())
        assert below == [s for s in seeded.students if seeded.scores[s] < 6] and 0 < len(below) < 20
        assert rows(ta.get(f"/staff/gradebook/{GRADED}/?show=missing").content.decode()) == []
        # Awaiting hand grading: not marked (every odd one), or the answer changed since (every sixth).
        waiting = [s for n, s in enumerate(seeded.students) if n % 2 or n % 6 == 0]
        hand = ta.get(f"/staff/gradebook/{HAND}/?show=hand").content.decode()
        assert rows(hand) == waiting
        assert "1*" in hand.split(seeded.students[0], 2)[2].split("</tr>")[0]  # marked 1, answer changed since
        assert "of 20" not in page  # one page: no pager
        marking = ta.get(f"/staff/marking/{HAND}/").content.decode()
        assert re.search(rf"<td>20</td><td>{len(waiting)}</td>", marking), marking
        stats = ta.get(f"/staff/statistics/{GRADED}/").content.decode()
        assert "20 students" in stats and "test_softmax_3" in stats
        mean = sum(seeded.scores.values()) / 20
        assert f"{mean:.4g}"[:3] in stats


def test_a_course_of_2000_pages_on_the_server_after_filtering_and_sorting_all_of_it():
    with course_of(2000, names=(GRADED,)) as (clients, seeded):
        ta = clients[Member.TA]
        first = ta.get(f"/staff/gradebook/{GRADED}/").content.decode()
        assert rows(first) == seeded.students[:PER_PAGE] and "Rows 1 to 100 of 2000" in first
        assert rows(ta.get(f"/staff/gradebook/{GRADED}/?page=3").content.decode()) == seeded.students[200:300]
        ranked = sorted(seeded.students, key=lambda s: (-seeded.scores[s], s))
        by_score = ta.get(f"/staff/gradebook/{GRADED}/?sort=score&page=2").content.decode()
        assert [seeded.scores[s] for s in rows(by_score)] == [seeded.scores[s] for s in ranked[100:200]]
        assert 'href="?sort=score&amp;page=3"' in by_score  # the pager keeps the sort
        low = [s for s in seeded.students if seeded.scores[s] < 4]
        below = ta.get(f"/staff/gradebook/{GRADED}/?below=4&page=2").content.decode()
        assert rows(below) == low[100:200] and f"of {len(low)}" in below
        last = rows(ta.get(f"/staff/gradebook/{GRADED}/?page=999").content.decode())
        assert last == seeded.students[-PER_PAGE:]  # past the end: the last page
        roster = clients[Member.INSTRUCTOR].get("/staff/roster/").content.decode()
        assert "2000 students" in roster and roster.count("<tr><td>p-") == ROSTER_PAGE
        found = clients[Member.INSTRUCTOR].get("/staff/roster/?q=p-01234").content.decode()
        assert "1 student" in found and "p-01234" in found and "p-01235" not in found


def test_a_chart_is_drawn_once_per_change_of_its_data(monkeypatch):
    from gradebook import stats
    from gradebook.models import Result

    drawn = []
    real = stats.overview_chart
    monkeypatch.setattr(stats, "overview_chart", lambda out, data: (drawn.append(data.students), real(out, data)))
    with course_of(20, names=(GRADED,)) as (clients, seeded):
        url = f"/staff/statistics/{GRADED}/overview.png"
        first = clients[Member.TA].get(url)
        again = clients[Member.TA].get(url)
        assert first.content[:4] == b"\x89PNG" and again.content == first.content and drawn == [20]
        Result.objects.filter(submission__student__student_id=seeded.students[0]).update(score=0)
        changed = clients[Member.TA].get(url)
        assert drawn == [20, 20] and changed.content[:4] == b"\x89PNG"


def test_the_failed_checks_are_counted_in_the_database_alike_on_sqlite_and_postgresql(database):
    """The statistics' "checks failed most often" come from SQL of each database's own (JSON
    unpacked in the database): by test function, a parametrised test's cases once per student."""
    from datetime import UTC, datetime

    from gradebook.book import Gradebook
    from gradebook.models import Result, Student, Submission
    from gradebook.stats import statistics

    option, where = database
    spec = assignments()[GRADED]
    moment = datetime(2026, 11, 1, tzinfo=UTC)

    def check(name: str, status: str) -> dict:
        return {"question": "softmax", "name": name, "description": "", "status": status, "message": ""}

    outcomes = {  # per student: their first submission's checks, then their latest's
        "ann": ([check("test_sums", "failed")], [check("test_shape[2]", "failed"), check("test_shape[3]", "error")]),
        "bob": ([], [check("test_shape[2]", "failed"), check("test_sums", "failed"), check("test_max", "passed")]),
        "cy": ([check("test_shape[1]", "failed")], [check("test_max", "timeout"), check("test_sums", "passed")]),
        "staff:dee": ([], [check("test_max", "failed")]),  # the staff's own try: never counted
    }
    with Gradebook.open(
        None if option == "--database-url" else Path(where), where if option == "--database-url" else None
    ) as book:

        def fill() -> None:
            row = book.sync_assignment(spec)
            for n, (student_id, attempts) in enumerate(outcomes.items()):
                student = book.objects(Student).create(student_id=student_id)
                for attempt, tests in enumerate(attempts):
                    submission = book.objects(Submission).create(
                        student=student,
                        assignment=row,
                        sha256=f"{n}{attempt}",
                        submitted_at=moment.replace(day=1 + attempt),
                        graded_at=moment,
                    )
                    book.objects(Result).create(
                        submission=submission,
                        question_id="softmax",
                        score=0,
                        max_score=2,
                        status="failed",
                        feedback="",
                        tests=tests,
                    )

        book.run(fill)
        softmax = next(q for q in statistics(book, spec).questions if q.question == "softmax")
    assert softmax.students == 3
    assert softmax.most_failed == [("test_shape", 2), ("test_max", 1), ("test_sums", 1)]
