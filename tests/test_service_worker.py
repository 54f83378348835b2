"""The grading worker and its queue: a worker gets ready before its first job, a job whose worker
died is claimed again and at last failed, and a grade is written with its job's end or not at all."""

from __future__ import annotations

import shutil
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from autograder.batch import GradeOptions
from gradebook.models import Student
from service.core.access import assignments
from service.handin.models import Job
from service.handin.queue import MAX_ATTEMPTS, claim

from .conftest import needs_sandbox
from .served import student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


@needs_sandbox
@pytest.mark.timeout(120)
def test_a_worker_gets_ready_before_its_first_job_and_a_broken_assignment_is_left_to_its_jobs(tmp_path):
    """A worker started before any hand-in starts its sandbox and collects every assignment's hidden
    suite, so the first student it serves does not wait for them; an assignment whose suite cannot
    be collected neither stops it nor keeps the others from being made ready."""
    from autograder import batch, suite
    from course.folder import init_course, read_course
    from service.handin.worker import warm_up

    folder = tmp_path / "course"
    init_course(folder)
    example, broken = folder / "assignments" / "example", folder / "assignments" / "broken"
    shutil.copytree(example, broken)
    (broken / "hidden" / "test_mean.py").write_text("def test_broken(:\n")
    manifest = folder / "course.toml"
    manifest.write_text(
        manifest.read_text().replace('["assignments/example"]', '["assignments/broken", "assignments/example"]')
    )
    hidden = example / "hidden" / "test_mean.py"  # counts its imports beside the suite's folder
    hidden.write_text(
        hidden.read_text() + "\nimport os\nopen(os.path.dirname(__file__) + '/../imports.txt', 'a').write('x')\n"
    )
    course = read_course(manifest)
    runner = batch._runner(False, tuple(course.sandbox.packages))
    try:
        warm_up(course, GradeOptions(jobs=1))
        assert runner.zygote is not None  # launched with the first assignment's limits
        assert (example / "imports.txt").read_text() == "x"  # the example's suite, collected
        assert suite._suites.get(example.resolve() / "hidden") is not None
        assert suite._suites.get(broken.resolve() / "hidden") is None  # its jobs say why, as before
    finally:
        runner.close()


def test_a_job_whose_worker_died_is_claimed_again_when_its_lease_expires_then_failed(monkeypatch):
    from service.handin import queue

    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    Job.objects.filter(state=Job.QUEUED).update(state=Job.FAILED)  # an empty queue for this test
    job = Job.objects.create(
        student=row, assignment="sequences-and-attention", file="x", original_name="x.py", size=1, sha256="2" * 64
    )
    for attempt in range(1, MAX_ATTEMPTS + 1):
        claimed = claim(f"worker-{attempt}")
        assert claimed is not None and claimed.id == job.id and claimed.attempts == attempt
        assert claim("another") is None  # leased to the first
        if attempt == 1:  # a live worker renews its lease while it grades
            monkeypatch.setattr(queue, "RENEW_EVERY", 0.05)
            Job.objects.filter(id=job.id).update(lease_expires_at=timezone.now() + timedelta(seconds=1))
            with queue.Lease(claimed):
                time.sleep(0.5)
            claimed.refresh_from_db()
            assert claimed.lease_expires_at > timezone.now() + queue.LEASE - timedelta(seconds=5)
        Job.objects.filter(id=job.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))  # it died
    assert claim("last") is None
    job.refresh_from_db()
    assert job.state == Job.FAILED and job.error == queue.GAVE_UP
    page = Client()
    page.force_login(user)
    assert "could not grade this submission" in page.get(f"/submissions/{job.id}/").content.decode()


def test_a_grade_and_its_jobs_end_are_written_together_or_not_at_all(monkeypatch):
    from autograder.reports.model import QuestionResult, Report
    from gradebook.models import Submission as Recorded
    from service.core.access import book
    from service.handin import worker

    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    job = Job.objects.create(
        student=row,
        assignment="sequences-and-attention",
        file="x",
        original_name="x.py",
        size=1,
        sha256="3" * 64,
        state=Job.GRADING,
        lease="a" * 32,  # a claim's token: the job's end is written with it
    )
    spec = assignments()["sequences-and-attention"]
    report = Report(
        student=user.username,
        assignment=spec.name,
        score=2,
        max_score=spec.max_score,
        submission="x",
        sha256="3" * 64,
        reference="numpy",
        sandbox="bubblewrap",
        graded_at=timezone.now().isoformat(),
        grader_version="test",
        questions=[
            QuestionResult(id=q.id, score=0, max_score=q.points, status="failed", feedback="") for q in spec.questions
        ],
    )

    def broken_finish(*_args, **_kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(worker, "finish", broken_finish)
    with pytest.raises(RuntimeError):
        worker.JobStore(book(), spec, job).record(report)
    assert not Recorded.objects.filter(sha256="3" * 64).exists()  # no grade without its job's end
    monkeypatch.undo()
    worker.JobStore(book(), spec, job).record(report)
    job.refresh_from_db()
    assert job.state == Job.GRADED and job.submission.sha256 == "3" * 64


def test_a_tokenizer_that_fails_leaves_the_grade_recorded(monkeypatch, tmp_path, caplog):
    """Similarity's fingerprint of a graded file is taken in the grade's transaction: any error of the
    tokenizer is logged and the grade, and the job's end, are recorded all the same."""
    from autograder.reports.model import QuestionResult, Report
    from gradebook.models import Fingerprint
    from gradebook.models import Submission as Recorded
    from gradebook.similarity import fingerprints
    from service.core.access import book
    from service.handin import worker

    def broken_tokenizer(_raw):
        raise IndexError("the tokenizer tripped on this file")

    monkeypatch.setattr(fingerprints, "fingerprint", broken_tokenizer)
    handed_in = tmp_path / "submission.py"
    handed_in.write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    user, _ = student()
    job = Job.objects.create(
        student=Student.objects.get(student_id=user.username),
        assignment="sequences-and-attention",
        file=str(handed_in),
        original_name="submission.py",
        size=1,
        sha256="4" * 64,
        state=Job.GRADING,
        lease="b" * 32,
    )
    spec = assignments()["sequences-and-attention"]
    report = Report(
        student=user.username,
        assignment=spec.name,
        score=spec.max_score,
        max_score=spec.max_score,
        submission=str(handed_in),
        sha256="4" * 64,
        reference="numpy",
        sandbox="bubblewrap",
        graded_at=timezone.now().isoformat(),
        grader_version="test",
        questions=[
            QuestionResult(id=q.id, score=q.points, max_score=q.points, status="passed", feedback="")
            for q in spec.questions
        ],
    )
    with caplog.at_level("ERROR", logger="gradewright.jobs"):
        worker.JobStore(book(), spec, job).record(report)
    job.refresh_from_db()
    assert job.state == Job.GRADED and job.submission.sha256 == "4" * 64
    assert sum(r.score for r in Recorded.objects.get(sha256="4" * 64).results.all()) == spec.max_score
    assert not Fingerprint.objects.filter(sha256="4" * 64).exists()  # left for a report to take again
    assert "could not be fingerprinted" in caplog.text and "IndexError" in caplog.text  # with its traceback
