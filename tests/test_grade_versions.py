"""A course's grade table and statistics are kept per version of the grades (gradebook.versions):
computed once and read again while nothing changes, and never shown stale: a new grade, a mark, an
extension, a rubric edit, a roster change, a bulk update and a rolled-back write each show (or, rolled
back, do not) on the very next read, on SQLite and on PostgreSQL; and through the staff's pages."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from autograder.reports.model import QuestionResult, Report
from gradebook.book import Gradebook
from gradebook.grades import current_grades
from gradebook.grading import record_report
from gradebook.stats import statistics
from gradebook.versions import data_version
from service.access import assignments
from service.models import Member

from .test_page_queries import GRADED, HAND, course_of, rows

pytestmark = pytest.mark.timeout(300)

START = datetime(2026, 11, 1, 9, tzinfo=UTC)


@contextmanager
def opened(database) -> Iterator[Gradebook]:
    option, where = database
    url = where if option == "--database-url" else None
    with Gradebook.open(None if url else Path(where), url) as book:
        yield book


def spec_due():
    """sequences-and-attention with a due time (so a late penalty, and extensions, apply)."""
    return assignments()[GRADED].model_copy(update={"due": START + timedelta(hours=1), "late_penalty": "10% per hour"})


def hand_in(book: Gradebook, spec, student: str, share: float, hours_after_start: float) -> None:
    """A graded submission as grading records it: each question ``share`` of its points."""
    row = book.run(lambda: book.sync_assignment(spec))
    at = START + timedelta(hours=hours_after_start)
    questions = [
        QuestionResult(
            id=q.id,
            title=q.title,
            score=q.points * share,
            max_score=q.points,
            status="passed" if share == 1 else "failed",
            feedback="",
        )
        for q in spec.questions
    ]
    report = Report(
        student=student,
        assignment=spec.name,
        score=sum(q.score for q in questions),
        max_score=spec.max_score,
        questions=questions,
        submission="",
        sha256=f"{student}-{share}-{hours_after_start}",
        reference="numpy",
        sandbox="test",
        graded_at=at.isoformat(),
        grader_version="test",
        submitted_at=at.isoformat(),
    )
    book.run(lambda: record_report(book, row, report))


def finals(book: Gradebook, spec) -> dict[str, float | None]:
    return {g.student_id: g.final_score for g in current_grades(book, spec, everyone=True, detail=False)}


def test_each_kind_of_write_shows_on_the_next_read_never_a_stale_table(database, tmp_path):
    from gradebook.extensions import extend
    from gradebook.models import Mark, Result, Student, Submission
    from gradebook.roster import import_roster

    spec = spec_due()
    with opened(database) as book:
        hand_in(book, spec, "ann", 0.5, 0)  # on time
        hand_in(book, spec, "bob", 1.0, 0.5)
        full = spec.max_score
        first = current_grades(book, spec, everyone=True, detail=False)
        again = current_grades(book, spec, everyone=True, detail=False)
        # Kept: nothing was written in between, so the same grades (not computed again) ...
        assert [g.student_id for g in first] == ["ann", "bob"] and again[0] is first[0]
        assert statistics(book, spec) is statistics(book, spec)
        version = data_version(book)
        assert version is not None

        # ... until a write: a new grade (5 hours late: 50% off) ...
        hand_in(book, spec, "ann", 1.0, 6)
        assert data_version(book) != version
        late = full / 2
        assert finals(book, spec) == {"ann": pytest.approx(late), "bob": full}
        assert statistics(book, spec).mean_score == pytest.approx((late + full) / 2)

        # ... an extension ...
        extend(book, "ann", spec, START + timedelta(days=2))
        assert finals(book, spec) == {"ann": full, "bob": full}
        assert statistics(book, spec).mean_score == full

        # ... a mark that overrides an automatic score, as the site's form writes it ...
        def override() -> None:
            latest = book.objects(Submission).filter(student__student_id="bob").order_by("-submitted_at").first()
            book.objects(Mark).update_or_create(
                student=latest.student,
                assignment=latest.assignment,
                question_id=spec.questions[0].id,
                defaults={
                    "submission": latest,
                    "score": 0.0,
                    "comment": "copied",
                    "rubric": [],
                    "adjustment": 0.0,
                    "marked_at": datetime.now(UTC),
                    "marked_by": "ta",
                },
            )

        book.run(override)
        bob = full - spec.questions[0].points
        assert finals(book, spec) == {"ann": full, "bob": bob}
        assert statistics(book, spec).questions[0].mean == spec.questions[0].points / 2

        # ... a roster: a new student (nothing handed in) and a changed name ...
        roster = tmp_path / "roster.csv"
        roster.write_text("student_id,name,email\nann,Ann Smith,ann@example.edu\ncy,Cy,cy@example.edu\n")
        import_roster(book, roster)
        grades = current_grades(book, spec, everyone=True, detail=False)
        assert [(g.student_id, g.name, g.final_score) for g in grades] == [
            ("ann", "Ann Smith", full),
            ("bob", "", bob),
            ("cy", "Cy", None),
        ]

        # ... a bulk update, which no model's signal sees (the database's trigger does) ...
        book.objects(Result).filter(submission__student__student_id="ann").update(score=0)
        assert finals(book, spec)["ann"] == 0
        book.objects(Student).filter(student_id="cy").update(name="Cyrus")
        assert [g.name for g in current_grades(book, spec, everyone=True, detail=False)][2] == "Cyrus"

        # ... and a write rolled back after a read inside its transaction: the read of the written
        # (never committed) data is not what the next read outside finds.
        class Undone(Exception):
            pass

        def written_then_undone() -> None:
            book.objects(Result).filter(submission__student__student_id="ann").update(score=1)
            assert finals(book, spec)["ann"] == len(spec.questions)
            raise Undone

        with pytest.raises(Undone):
            book.run(written_then_undone)
        assert finals(book, spec)["ann"] == 0
        assert book.objects(Student).count() == 3


def test_the_staff_pages_show_a_new_grade_a_mark_and_a_roster_change_on_the_next_request():
    from django.core.files.uploadedfile import SimpleUploadedFile

    from gradebook.models import Submission
    from service.access import book

    with course_of(20) as (clients, seeded):
        ta, instructor = clients[Member.TA], clients[Member.INSTRUCTOR]
        one = seeded.students[3]

        def row_of(page: str, student: str) -> str:
            return page.split(f'href="/staff/students/{student}/"', 1)[1].split("</tr>")[0]

        def final_of(student: str) -> str:
            page = ta.get(f"/staff/gradebook/{GRADED}/").content.decode()
            return re.findall(r"<strong>([^<]*)</strong>", row_of(page, student))[0]

        assert final_of(one) == f"{seeded.scores[one]:g}"
        stats = ta.get(f"/staff/statistics/{GRADED}/").content.decode()
        assert final_of(one) == f"{seeded.scores[one]:g}"  # asked again: the kept table, the same

        # A new grade, recorded as grading records it: the next request shows it.
        spec = assignments()[GRADED]
        hand_in(book(), spec, one, 1.0, 48)
        assert final_of(one) == f"{spec.max_score:g}"
        assert ta.get(f"/staff/statistics/{GRADED}/").content.decode() != stats

        # A mark from the marking page: the student no longer waits for hand grading.
        waiting = rows(ta.get(f"/staff/gradebook/{HAND}/?show=hand").content.decode())
        marked = waiting[0]
        answer = Submission.objects.filter(student__student_id=marked, assignment__name=HAND).order_by("-id").first()
        hand = assignments()[HAND]
        question = next(q for q in hand.questions if q.manual)
        index = ta.get(f"/staff/marking/{HAND}/").content.decode()
        assert re.search(rf"<td>20</td><td>{len(waiting)}</td>", index)
        saved = ta.post(
            f"/staff/marking/{HAND}/{question.id}/{answer.id}/",
            {"rubric": [question.rubric[0].id], "adjustment": "0", "comment": "good", "then": "stay"},
        )
        assert saved.status_code == 302
        assert rows(ta.get(f"/staff/gradebook/{HAND}/?show=hand").content.decode()) == waiting[1:]
        index = ta.get(f"/staff/marking/{HAND}/").content.decode()
        assert re.search(rf"<td>20</td><td>{len(waiting) - 1}</td>", index), index

        # A roster imported on the roster page: the new name on the gradebook's next request.
        csv = f"student_id,name,email\n{one},Renamed Student,r@example.edu\n".encode()
        upload = SimpleUploadedFile("roster.csv", csv, content_type="text/csv")
        assert instructor.post("/staff/roster/", {"roster": upload}).status_code == 302
        page = ta.get(f"/staff/gradebook/{GRADED}/").content.decode()
        assert "Renamed Student" in row_of(page, one)


def test_a_database_without_the_version_computes_each_time(monkeypatch, tmp_path):
    """Where the version cannot be read, nothing is kept (never a value that might be stale)."""
    from gradebook import versions

    spec = spec_due()
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        hand_in(book, spec, "ann", 0.5, 0)
        monkeypatch.setattr(versions, "data_version", lambda book: None)
        first, again = (current_grades(book, spec, detail=False) for _ in range(2))
        assert first[0] == again[0] and first[0] is not again[0]


def test_the_triggers_come_back_after_a_migration_rebuilds_a_table(tmp_path):
    """SQLite rebuilds a table a migration alters, without its triggers: they are made again after
    every migration (a post_migrate handler)."""
    from django.db import connections

    from gradebook.models import Student

    with Gradebook.open(tmp_path / "gradebook.db") as book:
        connection = connections[book.alias]
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER gradebook_student_update_version")
        from django.core.management import call_command

        call_command("migrate", "gradebook", database=book.alias, verbosity=0, interactive=False, stdout=io.StringIO())
        book.objects(Student).create(student_id="ann")
        before = data_version(book)
        book.objects(Student).filter(student_id="ann").update(name="Ann")
        assert data_version(book) != before
