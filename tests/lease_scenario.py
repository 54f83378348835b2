"""Two workers on one queue, in a process of its own so that the service's database may be SQLite or
PostgreSQL: ``python -m tests.lease_scenario STATE [DATABASE_URL]`` prints what it saw as JSON.

1. Worker A claims a hand-in, then is paused past its lease (its lease expires while it grades);
   worker B claims the job and records 10/10. A wakes up: its lease thread hears that the lease is
   lost, and its 0/10 is refused, rolled back with the job's end it came with.
2. One student floods the queue with 30 hand-ins; another hands in one: once the flood's first job
   is claimed, the honest student's is claimed next.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _report(spec, student: str, sha256: str, score: float):
    from django.utils import timezone

    from autograder.reports.model import QuestionResult, Report

    questions = [
        QuestionResult(id=q.id, score=q.points * score, max_score=q.points, status="passed", feedback="")
        for q in spec.questions
    ]
    return Report(
        student=student,
        assignment=spec.name,
        score=sum(q.score for q in questions),
        max_score=spec.max_score,
        submission="",
        sha256=sha256,
        reference="numpy",
        sandbox="bubblewrap",
        graded_at=timezone.now().isoformat(),
        grader_version="test",
        questions=questions,
    )


def paused_worker() -> dict:
    from django.utils import timezone

    from gradebook.errors import LeaseLost
    from gradebook.models import Result, Student
    from gradebook.models import Submission as Recorded
    from service.core.access import assignments, book
    from service.handin import queue
    from service.handin.models import Job
    from service.handin.worker import JobStore

    spec = assignments()["sequences-and-attention"]
    row = Student.objects.create(student_id="paused", on_roster=True)
    sha = "5" * 64
    Job.objects.create(student=row, assignment=spec.name, file="x", original_name="x.py", size=1, sha256=sha)
    first = queue.claim("worker-a")
    # A is paused (SIGSTOP, a long garbage collection, a frozen VM) past its lease's expiry.
    Job.objects.filter(id=first.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    second = queue.claim("worker-b")
    JobStore(book(), spec, second).record(_report(spec, "paused", sha, 1.0))  # B grades it: 10/10
    queue.RENEW_EVERY = 0.01
    with queue.Lease(first) as lease:  # A wakes up: its lease thread renews at once
        heard = lease.lost.wait(10)
    refused = ""
    try:
        JobStore(book(), spec, first).record(_report(spec, "paused", sha, 0.0))  # A's 0/10
    except LeaseLost as exc:
        refused = str(exc)
    job = Job.objects.get(id=first.id)
    recorded = Recorded.objects.filter(sha256=sha)
    return {
        "same_job": first.id == second.id,
        "lease_lost_heard": heard,
        "refused": refused,
        "state": job.state,
        "worker": job.worker,
        "rows": recorded.count(),
        "score": sum(Result.objects.filter(submission__in=recorded).values_list("score", flat=True)),
        "max_score": spec.max_score,
        "job_submission_is_bs": job.submission_id == recorded.first().id,
    }


def flood() -> dict:
    from gradebook.models import Student
    from service.handin import queue
    from service.handin.models import Job

    flooder = Student.objects.create(student_id="flooder", on_roster=True)
    honest = Student.objects.create(student_id="honest", on_roster=True)
    for n in range(30):
        Job.objects.create(
            student=flooder, assignment="sequences-and-attention", file="x", original_name="x.py", size=1, sha256=f"{n}"
        )
    Job.objects.create(
        student=honest, assignment="sequences-and-attention", file="x", original_name="x.py", size=1, sha256="h"
    )
    claimed = [queue.claim(f"worker-{n}") for n in range(3)]
    return {"claimed": [job.student.student_id for job in claimed]}


def main(state: Path, url: str | None) -> None:
    from service.settings import configure

    configure(ROOT, url, state=state)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    said = Said()
    logging.getLogger("gradewright.jobs").addHandler(said)
    seen = {"paused": paused_worker(), "flood": flood(), "logged": said.lines}
    print(json.dumps(seen))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
