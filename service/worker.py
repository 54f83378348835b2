"""``autograder worker``: grade queued hand-ins, one at a time, until stopped. Workers run the engine
(the sandbox) and nothing else of the site; any number of them, on any machine that shares the
database and the course folder."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from autograder.assignment import course_assignment
from autograder.batch import GradeOptions, grade_batch
from autograder.errors import AutograderError
from autograder.submissions import Submission
from course.folder import CourseFolder
from gradebook.book import Gradebook
from gradebook.errors import GradebookError

from .models import Job
from .queue import claim, finish

IDLE_WAIT = 0.5  # seconds between looks at an empty queue


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def grade_one(job: Job, course: CourseFolder, state: Path, options: GradeOptions) -> int:
    """Grade a claimed job into the gradebook; the gradebook submission's id."""
    from gradebook.models import Submission as Recorded

    spec = course_assignment(course, job.assignment)
    book = Gradebook("default", "the service's database")
    submission = Submission(
        student=job.student.student_id, path=Path(job.file), sha256=job.sha256, submitted_at=job.created_at
    )
    result = grade_batch(spec, [submission], state / "reports" / spec.name, options, store=book.store_for(spec))
    if result.failed:
        raise AutograderError("the grader failed on this submission; it will be tried again")
    recorded = Recorded.objects.get(student=job.student, assignment__name=spec.name, sha256=job.sha256)
    return recorded.id


def run_worker(course: CourseFolder, state: Path, options: GradeOptions, once: bool = False) -> int:
    """Grade jobs as they come; with ``once``, until the queue is empty. The number graded."""
    name, graded = worker_name(), 0
    while True:
        job = claim(name)
        if job is None:
            if once:
                return graded
            time.sleep(IDLE_WAIT)
            continue
        try:
            submission_id = grade_one(job, course, state, options)
        except (AutograderError, GradebookError) as exc:
            finish(job, None, error=str(exc))
            continue
        except BaseException:
            # Stopped mid-job (SIGTERM, Ctrl-C): the job goes back to the queue for the next worker.
            Job.objects.filter(id=job.id).update(state=Job.QUEUED, worker="")
            raise
        finish(job, submission_id)
        graded += 1
