"""A course's grade table and statistics are kept per version of the grades (gradebook.versions):
computed once and read again while nothing changes, and never shown stale: a new grade, a mark, an
extension, a rubric edit, a roster change, a bulk update and a rolled-back write each show (or, rolled
back, do not) on the very next read, on SQLite and on PostgreSQL; and through the staff's pages."""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from autograder.reports.model import QuestionResult, Report
from autograder.reports.model import TestOutcome as Outcome  # (not a test class)
from gradebook.book import Gradebook
from gradebook.grades import _current_grades, current_grades
from gradebook.grading import record_report
from gradebook.models import Student
from gradebook.stats import statistics
from gradebook.versions import data_version
from service.accounts.models import Member
from service.core.access import assignments

from .postgres import fresh_database, needs_postgres
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


def hand_in(
    book: Gradebook,
    spec,
    student: str,
    share: float,
    hours_after_start: float,
    sha256: str | None = None,
    start: datetime = START,
) -> None:
    """A graded submission as grading records it: each question ``share`` of its points; its file's
    hash ``sha256`` (by default one of its own)."""
    row = book.run(lambda: book.sync_assignment(spec))
    at = start + timedelta(hours=hours_after_start)
    questions = [
        QuestionResult(
            id=q.id,
            title=q.title,
            score=q.points * share,
            max_score=q.points,
            status="passed" if share == 1 else "failed",
            feedback="",
            tests=[
                Outcome(question=q.id, name=f"test_{q.id}[{n}]", description="", status=status)
                for n, status in enumerate(["passed", "passed" if share == 1 else "failed"])
            ],
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
        sha256=sha256 or f"{student}-{share}-{hours_after_start}",
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
    from service.core.access import book

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
        monkeypatch.setattr(versions, "_state", lambda book, since=None: None)
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


# Updated for only the students a write changed (the change log, gradebook.versions).


_full_computation = _current_grades  # as it is, whatever a test records


def spec_hand():
    """attention-not-explanation (a question graded by hand, with a rubric) with a due time."""
    spec = assignments()[HAND]
    return spec.model_copy(update={"due": START + timedelta(hours=1), "late_penalty": "10% per hour"})


def computed_anew(book: Gradebook, spec) -> list[dict]:
    """The grade table as a full computation gives it now, nothing kept."""
    from gradebook import grades

    return [g.model_dump() for g in grades._table(_full_computation(book, spec, True, False)).grades]


def kept(book: Gradebook, spec) -> list[dict]:
    return [g.model_dump() for g in current_grades(book, spec, everyone=True, detail=False)]


class Recomputed:
    """Which students each computation of the table read: None, everyone's (computed anew); else the
    set of Student pks it was updated for."""

    def __init__(self, monkeypatch):
        from gradebook import grades, stats

        self.calls: list[set[int] | None] = []
        real = grades._current_grades

        def recording(book, spec, everyone, detail, only=None):
            if not detail:
                self.calls.append(None if only is None else set(only))
            return real(book, spec, everyone, detail, only)

        monkeypatch.setattr(grades, "_current_grades", recording)
        self.failed: list[set[int] | None] = []  # the same of the failed checks (the statistics)
        failed = stats._failed_by_student

        def failed_recording(book, spec, only=None):
            self.failed.append(None if only is None else set(only))
            return failed(book, spec, only)

        monkeypatch.setattr(stats, "_failed_by_student", failed_recording)

    def take(self) -> list[set[int] | None]:
        calls, self.calls = self.calls, []
        return calls

    def take_failed(self) -> list[set[int] | None]:
        calls, self.failed = self.failed, []
        return calls


def test_a_write_updates_the_kept_table_for_only_the_students_it_changed(database, monkeypatch):
    """A seeded random sequence of every kind of write: after each, the next table equals a full
    computation's; and a write of one student's rows recomputed that student alone (the table was
    updated, not computed anew), a rubric edit everyone's."""
    import random

    from django.db import connections

    from gradebook import stats
    from gradebook.extensions import extend
    from gradebook.marking.rubrics import edit_item
    from gradebook.models import Mark, Result, Student, Submission

    spec = spec_hand()
    manual = next(q for q in spec.questions if q.manual)
    chance = random.Random(30)
    with opened(database) as book:
        for n in range(8):
            hand_in(book, spec, f"s{n}", chance.choice([0.0, 0.5, 1.0]), chance.uniform(0, 4))
        book.objects(Student).create(student_id="staff:ta", name="TA")  # never in the table
        hand_in(book, spec, "staff:ta", 1.0, 0)
        full_failed = stats._failed_by_student
        recomputed = Recomputed(monkeypatch)
        stats.failed_checks(book, spec)
        assert recomputed.take_failed() == [None]
        assert kept(book, spec) == computed_anew(book, spec)
        assert recomputed.take() == [None]  # the first: computed
        assert kept(book, spec) == computed_anew(book, spec) and recomputed.take() == []  # then kept
        made = 8

        def someone() -> Student:
            return chance.choice(list(book.objects(Student).exclude(student_id__startswith="staff:")))

        def latest_of(student: Student) -> Submission | None:
            return book.objects(Submission).filter(student=student).order_by("-submitted_at", "-id").first()

        # Each write: what it does, and whose rows (Student pks) the next read recomputes alone.
        def new_grade() -> set[int]:
            student = someone()
            hand_in(book, spec, student.student_id, chance.choice([0.25, 1.0]), chance.uniform(0, 8))
            return {student.pk}

        def regrade() -> set[int]:
            student = someone()
            latest = latest_of(student)
            if latest is None:
                return set()
            result = book.objects(Result).filter(submission=latest).first()
            result.score, result.status = chance.uniform(0, result.max_score), "failed"
            result.save()
            return {student.pk}

        def hand_mark() -> set[int]:
            student = someone()
            latest = latest_of(student)
            if latest is None:
                return set()
            book.objects(Mark).update_or_create(
                student=student,
                assignment=latest.assignment,
                question_id=manual.id,
                defaults={
                    "submission": latest,
                    "score": 0.0,
                    "comment": "marked",
                    "rubric": [manual.rubric[0].id],
                    "adjustment": chance.choice([0.0, 0.5]),
                    "marked_at": datetime.now(UTC),
                    "marked_by": "ta",
                },
            )
            return {student.pk}

        def mark_removed() -> set[int]:
            mark = book.objects(Mark).order_by("?").first()
            if mark is None:
                return set()
            mark.delete()
            return {mark.student_id}

        def extension() -> set[int]:
            student = someone()
            extend(book, student.student_id, spec, START + timedelta(hours=chance.uniform(1, 10)))
            return {student.pk}

        def renamed() -> set[int]:
            student = someone()
            student.name = f"Renamed {chance.random():.3f}"
            if chance.random() < 0.3:
                student.student_id = f"r{chance.randrange(10**6)}"  # re-sorted in the table
            student.save()
            return {student.pk}

        def added() -> set[int]:
            nonlocal made
            made += 1
            return {book.objects(Student).create(student_id=f"s{made}", name="New", on_roster=True).pk}

        def off_roster() -> set[int]:
            student = someone()
            student.on_roster = not student.on_roster
            student.save()
            return {student.pk}

        def deleted() -> set[int]:
            # In SQL, as a standalone gradebook has no site's tables for Django's cascade to look at.
            pk = someone().pk
            with connections[book.alias].cursor() as cursor:
                cursor.execute(
                    "DELETE FROM gradebook_result WHERE submission_id IN "
                    "(SELECT id FROM gradebook_submission WHERE student_id = %s)",
                    [pk],
                )
                for table in ("mark", "extension", "submission"):
                    cursor.execute(f"DELETE FROM gradebook_{table} WHERE student_id = %s", [pk])
                cursor.execute("DELETE FROM gradebook_student WHERE id = %s", [pk])
            return {pk}

        def bulk() -> set[int]:
            # A bulk update, which no model's signal sees: every student with a result.
            book.objects(Result).filter(question_id=spec.questions[0].id).update(score=0.5)
            return set(book.objects(Submission).values_list("student_id", flat=True).distinct())

        def raw_sql() -> set[int]:
            latest = latest_of(someone())
            if latest is None:
                return set()
            with connections[book.alias].cursor() as cursor:
                cursor.execute("UPDATE gradebook_result SET score = 0 WHERE submission_id = %s", [latest.id])
            return {latest.student_id}

        def rolled_back() -> set[int]:
            class Undone(Exception):
                pass

            def written_then_undone() -> None:
                book.objects(Result).update(score=99)
                raise Undone

            with pytest.raises(Undone):
                book.run(written_then_undone)
            return set()

        writes = [
            new_grade,
            regrade,
            hand_mark,
            mark_removed,
            extension,
            renamed,
            added,
            off_roster,
            deleted,
            bulk,
            raw_sql,
            rolled_back,
        ]
        for step in range(40):
            write = writes[step] if step < len(writes) else chance.choice(writes)
            whose = write()
            assert kept(book, spec) == computed_anew(book, spec), f"step {step}: {write.__name__}"
            failed = Counter(pair for pairs in full_failed(book, spec).values() for pair in pairs)
            assert +stats.failed_checks(book, spec) == failed, f"step {step}: {write.__name__}"
            failed_calls = recomputed.take_failed()
            calls = recomputed.take()
            if whose:
                assert calls == [whose], f"step {step}: {write.__name__} recomputed {calls}, not {whose}"
                assert failed_calls == [whose], f"step {step}: {write.__name__}'s failed checks: {failed_calls}"
            else:  # nothing written that stayed (a rolled-back write, or none made): the kept table
                assert calls in ([], [set()]), f"step {step}: {write.__name__} recomputed {calls}"
                assert failed_calls in ([], [set()]), f"step {step}: {write.__name__}'s failed checks"

        # A rubric edit changes everyone's marks: computed anew.
        edit_item(book, spec, manual.id, manual.rubric[0].id, "Changed", manual.points, "ta")
        assert kept(book, spec) == computed_anew(book, spec)
        assert recomputed.take() == [None]
        assert "staff:ta" not in {g["student_id"] for g in kept(book, spec)}


@needs_postgres
def test_on_postgresql_a_write_begun_before_a_read_and_committed_after_it_shows_on_the_next(monkeypatch):
    """Entries' ids are not in commit order on PostgreSQL: a writer that took its id first may commit
    last. The kept table remembers the snapshot read with its version, so the next read updates it
    for every transaction not committed then, whatever its entries' ids."""
    import psycopg

    with fresh_database() as url, Gradebook.open(url=url) as book:
        spec = spec_due()
        for student in ("ann", "bob"):
            hand_in(book, spec, student, 0.5, 0)
        recomputed = Recomputed(monkeypatch)
        assert [g["name"] for g in kept(book, spec)] == ["", ""]
        pks = dict(book.objects(Student).values_list("student_id", "pk"))
        with psycopg.connect(url) as first, psycopg.connect(url, autocommit=True) as second:
            # The first writer begins (its entry gets the lower id) and stays open ...
            first.execute("UPDATE gradebook_student SET name = 'Ann' WHERE student_id = 'ann'")
            # ... a second commits, and a read sees it (the first not yet) ...
            second.execute("UPDATE gradebook_student SET name = 'Bob' WHERE student_id = 'bob'")
            recomputed.take()
            assert [g["name"] for g in kept(book, spec)] == ["", "Bob"]
            assert recomputed.take() == [{pks["bob"]}]
            first.commit()  # ... and then the first commits: the next read shows it too.
        assert [g["name"] for g in kept(book, spec)] == ["Ann", "Bob"]
        assert kept(book, spec) == computed_anew(book, spec)
        assert recomputed.take() == [{pks["ann"]}]
        # The triggers made again (after every migration; a restored dump's log is dropped then):
        # a change for everyone, the read after the next write computes anew.
        from django.db import connections

        from gradebook import versions

        versions.install(connections[book.alias])
        book.objects(Student).filter(student_id="bob").update(name="Bob Jones")
        assert kept(book, spec) == computed_anew(book, spec) and recomputed.take() == [None]


def test_a_pruned_log_computes_the_table_anew(database, monkeypatch):
    """The change log keeps its last entries (on PostgreSQL, pruned by a transaction that logs
    everyone): a table kept from before the entries pruned is computed anew, never updated from a
    log missing some."""
    from django.db import connections

    from gradebook import versions
    from gradebook.models import DataChange

    monkeypatch.setattr(versions, "LOGGED", 3)
    with opened(database) as book:
        connection = connections[book.alias]
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("DROP TRIGGER gradebook_datachange_prune")  # made anew, with the smaller log
        versions.install(connection)  # the pruning with the smaller log
        spec = spec_due()
        hand_in(book, spec, "ann", 0.5, 0)
        recomputed = Recomputed(monkeypatch)
        kept(book, spec)
        for n in range(8):  # more than twice LOGGED entries since the table: pruned
            book.objects(Student).filter(student_id="ann").update(name=f"Ann {n}")
        assert book.objects(DataChange).count() <= 2 * 3 + 1
        recomputed.take()
        assert [g["name"] for g in kept(book, spec)] == ["Ann 7"]
        assert recomputed.take() == [None]
        book.objects(Student).filter(student_id="ann").update(name="Ann")  # and then updated again
        assert [g["name"] for g in kept(book, spec)] == ["Ann"]
        assert recomputed.take() == [{book.objects(Student).get(student_id="ann").pk}]


@needs_postgres
def test_on_postgresql_two_writers_at_once_never_wait_on_each_other_for_the_log(monkeypatch):
    """Two workers grade at once on a deadline night: their log entries take no lock, and a commit's
    pruning skips what the other is pruning, so neither waits (a wait fails on the lock timeout)."""
    import psycopg

    from gradebook import versions

    monkeypatch.setattr(versions, "LOGGED", 2)
    with fresh_database() as url, Gradebook.open(url=url) as book:
        from django.db import connections

        versions.install(connections[book.alias])  # pruning at every few entries
        spec = spec_due()
        for student in ("ann", "bob"):
            hand_in(book, spec, student, 0.5, 0)
        kept(book, spec)
        with psycopg.connect(url) as first, psycopg.connect(url) as second:
            for connection in (first, second):
                connection.execute("SET lock_timeout = '10s'")
                connection.commit()
            for n in range(4):  # interleaved, each writer's transaction open across the other's
                first.execute("UPDATE gradebook_student SET name = %s WHERE student_id = 'ann'", [f"Ann {n}"])
                second.execute("UPDATE gradebook_student SET name = %s WHERE student_id = 'bob'", [f"Bob {n}"])
            second.commit()
            first.commit()
        assert [g["name"] for g in kept(book, spec)] == ["Ann 3", "Bob 3"]
        assert kept(book, spec) == computed_anew(book, spec)
