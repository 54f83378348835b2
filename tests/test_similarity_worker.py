"""A worker computing a long similarity report never keeps a hand-in waiting for it: the report
stops between its steps for the hand-ins queued meanwhile (service.handin.worker.GradeFirst). Through the
real worker (run_worker), the order read from the jobs' and the run's own timestamps."""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from datetime import UTC, datetime

import pytest

from .conftest import ASSIGNMENTS, needs_sandbox

SEQUENCES = "sequences-and-attention"
CLASS = 300  # submissions the report fingerprints first (none kept): seconds of work at least
WAIT = 300  # seconds: a worker that never starts the report, or never ends, fails the test saying so


def _class_without_fingerprints(folder, prefix: str) -> None:
    """A class handed in before fingerprints were kept: the report fingerprints every file first."""
    from benchmarks.similarity import course_of
    from gradebook.models import Student, Submission
    from service.core.access import assignments, book

    assignment = book().sync_assignment(assignments()[SEQUENCES])
    folder.mkdir()
    moment = datetime(2026, 11, 1, 9, tzinfo=UTC)
    for number, code in enumerate(course_of(CLASS, seed=30).values()):
        path = folder / f"{number:03d}.py"
        path.write_text(code)
        student = Student.objects.create(student_id=f"{prefix}{number:03d}")
        Submission.objects.create(
            student=student,
            assignment=assignment,
            file=str(path),
            submitted_at=moment,
            graded_at=moment,
            sha256=hashlib.sha256(code.encode()).hexdigest(),
        )


def _wait_for(what: str, condition, seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.05)


@needs_sandbox
@pytest.mark.slow
@pytest.mark.timeout(WAIT * 3)
def test_a_hand_in_queued_while_a_report_runs_is_graded_before_the_report_ends(empty_queue, tmp_path):
    from autograder.batch import GradeOptions
    from gradebook.models import Fingerprint, SimilarityRun, Student, Submission
    from gradebook.similarity.report import queue_run
    from service.core.access import assignments, book, course, state
    from service.handin.models import Job
    from service.handin.uploads import store
    from service.handin.worker import run_worker

    prefix = f"prio{uuid.uuid4().hex[:6]}-"
    _class_without_fingerprints(tmp_path / "class", prefix)
    shas = list(Submission.objects.filter(student__student_id__startswith=prefix).values_list("sha256", flat=True))
    run = queue_run(book(), SEQUENCES, 0.5, "test")
    graded: list[int] = []
    failed: list[BaseException] = []

    def worker() -> None:
        from django.db import connection

        try:
            graded.append(run_worker(course(), state(), GradeOptions(jobs=1, reference="numpy"), once=True))
        except BaseException as exc:
            failed.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=worker, name="test-worker", daemon=True)
    try:
        thread.start()
        _wait_for("the worker to start the report", lambda: SimilarityRun.objects.get(id=run.id).state != "queued")
        student = Student.objects.create(student_id=f"{prefix}late", on_roster=True)
        code = (ASSIGNMENTS / SEQUENCES / "known" / "correct_vectorised.py").read_bytes()
        job = store(state(), student, assignments()[SEQUENCES], "mine.py", code)
        thread.join(WAIT * 2)
        assert not thread.is_alive(), "the worker did not end"
        assert not failed, failed
        job.refresh_from_db()
        run.refresh_from_db()
        assert run.state == SimilarityRun.DONE and run.report is not None, run.error
        assert job.state == Job.GRADED, job.error
        # Queued while the report ran, and graded before it ended: it did not wait for the report.
        assert run.started_at < job.created_at < job.finished_at < run.finished_at
        assert graded == [1]
    finally:
        thread.join(WAIT)
        Student.objects.filter(student_id__startswith=prefix).delete()
        Fingerprint.objects.filter(sha256__in=shas).delete()
        SimilarityRun.objects.filter(id=run.id).delete()
