"""Grading into the gradebook: what ``autograder grade`` does. The engine grades (autograder.batch);
the gradebook says who each submission's student is, what is already graded, and records each
report as it arrives; then every current report and ``grades.csv`` are written from it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.batch import BatchResult, GradeOptions, grade_batch, prepare_sandbox
from autograder.reports.model import Report
from autograder.submissions import Skipped, Submission

if TYPE_CHECKING:
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
            spec, discovery.submissions, out, options, gradebook=gradebook, database_url=database_url,
            executor=executor, on_result=on_result,
        )  # fmt: skip
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
        store = book.store_for(spec)
        resolved = book.run(lambda: [_as_student(book, submission) for submission in submissions])
        roster = book.has_roster()
        not_on_roster = sorted({s.student for s, on_roster in resolved if roster and not on_roster})
        try:
            batch = grade_batch(
                spec, [s for s, _ in resolved], out, options, store=store, executor=executor, on_result=on_result,
                job=job,
            )  # fmt: skip
        finally:  # interrupted too: grades.csv then holds everything graded so far
            write_grades_csv(book, spec, out / "grades.csv")
    return GradeRun(batch=batch, not_on_roster=not_on_roster)


def _as_student(book: Gradebook, submission: Submission) -> tuple[Submission, bool]:
    student = book.student_for(submission)
    return submission.model_copy(update={"student": student.student_id}), student.on_roster
