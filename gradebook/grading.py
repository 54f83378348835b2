"""Grading into the gradebook: what ``autograder grade`` does. The engine grades (autograder.batch);
the gradebook says who each submission's student is, what is already graded, and records each
report as it arrives (``AssignmentStore``, the one writer of a graded report's rows, which the
service's job store reuses); then every current report and ``grades.csv`` are written from it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.batch import BatchResult, GradeOptions, grade_batch, prepare_sandbox
from autograder.reports.model import Report
from autograder.submissions import Skipped, Submission

if TYPE_CHECKING:
    from . import models
    from .book import Gradebook


class GradeRun(BaseModel):
    batch: BatchResult
    not_on_roster: list[str] = []  # students graded whom the roster does not list (when there is one)
    skipped_files: list[Skipped] = []  # files and folders not taken as submissions, and why (grade_paths)


def grade_paths(
    spec: AssignmentSpec,
    paths: list[Path],
    out: Path,
    options: GradeOptions,
    gradebook: Path | None = None,
    database_url: str | None = None,
    scheduler: str | None = None,
    on_found: Callable[[int], None] | None = None,
    on_result: Callable[[Submission, Report | None], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
) -> GradeRun:
    """``autograder grade``: the submissions in ``paths`` (files, or folders of them, nbgrader's
    layout too; ``on_found`` hears how many) graded into ``out`` and the gradebook, on the Dask
    cluster ``scheduler`` names (else ``$DASK_SCHEDULER_ADDRESS``), else here."""
    from autograder.cluster import GradingNeeds
    from autograder.distributed import executor_for
    from autograder.submissions import find_submissions

    discovery = find_submissions(paths, preferred=spec.released_notebook)
    if on_found:
        on_found(len(discovery.submissions))
    needs = GradingNeeds.here(spec.sandbox_packages, options.unsafe_no_sandbox, [spec.folder])
    with executor_for(scheduler, needs, on_refused) as executor:
        run = grade_into_gradebook(
            spec,
            discovery.submissions,
            out,
            options,
            gradebook=gradebook,
            database_url=database_url,
            executor=executor,
            on_result=on_result,
        )
    return run.model_copy(update={"skipped_files": discovery.skipped})


def grade_into_gradebook(
    spec: AssignmentSpec,
    submissions: list[Submission],
    out: Path,
    options: GradeOptions,
    gradebook: Path | None = None,
    database_url: str | None = None,
    executor: Executor | None = None,
    on_result: Callable[[Submission, Report | None], None] | None = None,
    job: Callable[..., dict] | None = None,
) -> GradeRun:
    """Grade ``submissions`` into ``out`` and the gradebook (``gradebook``, default
    ``out/gradebook.db``, or the database ``database_url`` names)."""
    out.mkdir(parents=True, exist_ok=True)
    if executor is None:
        prepare_sandbox(spec, options, len(submissions))
    # Imported once the sandbox is starting: Django's and pytest's imports and the gradebook's
    # opening then overlap its start, which one notebook graded alone otherwise waits for.
    from .book import Gradebook
    from .reports import write_grades_csv

    with Gradebook.open(gradebook or out / "gradebook.db", database_url) as book:
        store = store_for(book, spec)
        resolved = book.run(lambda: [_as_student(book, submission) for submission in submissions])
        roster = book.has_roster()
        not_on_roster = sorted({s.student for s, on_roster in resolved if roster and not on_roster})
        try:
            batch = grade_batch(
                spec,
                [s for s, _ in resolved],
                out,
                options,
                store=store,
                executor=executor,
                on_result=on_result,
                job=job,
            )
        finally:  # interrupted too: grades.csv then holds everything graded so far
            write_grades_csv(book, spec, out / "grades.csv")
    return GradeRun(batch=batch, not_on_roster=not_on_roster)


def _as_student(book: Gradebook, submission: Submission) -> tuple[Submission, bool]:
    student = book.student_for(submission)
    return submission.model_copy(update={"student": student.student_id}), student.on_roster


def store_for(book: Gradebook, spec: AssignmentSpec) -> AssignmentStore:
    """What a batch of grading needs (autograder.batch.GradeStore): the gradebook as one assignment's
    store, its rows synced with the manifest once for the batch."""
    return AssignmentStore(book, spec, book.run(lambda: book.sync_assignment(spec)))


class AssignmentStore:
    """The gradebook as one assignment's ``GradeStore``: a hand-in is its own submission row; the
    same hand-in graded again (the same student, file and hand-in time: a command run again on the
    same download, or ``--force``) replaces its results and keeps its marks."""

    def __init__(self, book: Gradebook, spec: AssignmentSpec, assignment: models.Assignment):
        self.book = book
        self.spec = spec
        self.assignment = assignment  # its rows as the manifest has them, synced once for the batch

    def is_graded(self, submission: Submission) -> bool:
        def graded() -> bool:
            student = self.book.student_for(submission)
            return same_hand_in(self.book, self.assignment, student, submission.sha256, _seconds(submission)).exists()

        return self.book.run(graded)

    def record(
        self,
        report: Report,
        then: Callable[[models.Submission], None] | None = None,
        into: int | None = None,
        submitted_at: datetime | None = None,
    ) -> Report:
        """Record ``report`` and give it back as the gradebook now reads it (its marks, its lateness),
        in one transaction; ``then(submission)`` runs in that transaction too (the service's job store
        ends its job there, so a grade never lacks its job's end). ``into``: the submission (its id)
        this report grades again (a regrade); ``submitted_at``: the hand-in's own time, to the
        microsecond (the report's is to the second)."""
        from .grades import report_of

        def write() -> Report:
            submission = record_report(self.book, self.assignment, report, into, submitted_at)
            if then is not None:
                then(submission)
            return report_of(self.book, self.spec, submission)

        return self.book.run(write)


def _seconds(submission: Submission) -> datetime | None:
    """A submission's hand-in time as its report keeps it (to the second)."""
    return submission.submitted_at.replace(microsecond=0) if submission.submitted_at else None


def same_hand_in(
    book: Gradebook, assignment: models.Assignment, student: models.Student, sha256: str, at: datetime | None
):
    """The rows of the same hand-in: the student's file of this hash handed in at ``at`` (with no
    time known, handed in at any time), latest first."""
    from .models import Submission

    rows = book.objects(Submission).filter(student=student, assignment=assignment, sha256=sha256)
    if at is not None:
        rows = rows.filter(submitted_at=at)
    return rows.order_by("-submitted_at", "-id")


def record_report(
    book: Gradebook,
    assignment: models.Assignment,
    report: Report,
    into: int | None = None,
    submitted_at: datetime | None = None,
) -> models.Submission:
    """A graded report as a submission's rows: a new hand-in's, or (replacing the results graded
    before: all of them, or the one question a one-question regrade graded) the submission ``into``
    names, else the same hand-in's (``same_hand_in``). Its hand-in time is never changed.
    ``assignment`` is the row the caller synced with the manifest (``store_for``: once for a batch,
    not per submission)."""
    from .book import who
    from .models import Result, Student, Submission

    student = book.objects(Student).get_or_create(student_id=report.student)[0]
    at = submitted_at or (datetime.fromisoformat(report.submitted_at) if report.submitted_at else None)
    graded_at = datetime.fromisoformat(report.graded_at)  # to the second, as the report says it
    if at is not None and graded_at < at:  # graded within the second it was handed in
        graded_at = at
    graded = {
        "file": report.submission,
        "graded_at": graded_at,
        "graded_by": who(),
        "grader_version": report.grader_version,
        "reference": report.reference,
        "sandbox": report.sandbox,
        "ran": report.ran,
        "errors": report.errors,
        "output": report.output,
        "seconds": report.seconds,
        "own_values": report.own_values.model_dump(mode="json") if report.own_values else {},
    }
    if into is not None:
        row = book.objects(Submission).get(id=into, student=student, assignment=assignment)
    else:
        row = same_hand_in(book, assignment, student, report.sha256, at).first()
    if row is None:
        row = book.objects(Submission).create(
            student=student, assignment=assignment, sha256=report.sha256, submitted_at=at or datetime.now(UTC), **graded
        )
    else:
        if row.submitted_at is not None and graded_at < row.submitted_at:  # a regrade within that second
            graded["graded_at"] = row.submitted_at
        for field, value in graded.items():
            setattr(row, field, value)
        row.save(using=book.alias, update_fields=list(graded))
    if report.submission:  # fingerprinted once per file, for similarity (milliseconds): never tokenized again
        from .similarity.fingerprints import remember

        remember(book, report.sha256, Path(report.submission))
    # A regrade of one question replaces that question's result; the others stand as recorded.
    replaced = book.objects(Result).filter(submission=row)
    if report.only_question is not None:
        replaced = replaced.filter(question_id=report.only_question)
    replaced.delete()
    # A hidden test's own fault (the staff's to read: Report.test_faults) is kept with its outcome.
    faults = {(fault.question, fault.test): fault.model_dump(mode="json") for fault in report.test_faults}
    book.objects(Result).bulk_create(
        [
            Result(
                submission=row,
                question_id=q.id,
                score=q.score,
                max_score=q.max_score,
                status=q.status,
                feedback=q.feedback,
                tests=[
                    t.model_dump(mode="json")
                    | ({"fault": faults[key]} if (key := (t.question, t.name)) in faults else {})
                    for t in q.tests
                ],
                answers=q.answers,
            )
            for q in report.questions
        ]
    )
    return row
