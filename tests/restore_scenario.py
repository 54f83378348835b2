"""A site's state folder graded, backed up, restored at another path and regraded there; each step in
a process of its own (Django is configured once per process, for one state folder):

    python -m tests.restore_scenario grade STATE   # a correct hand-in graded by a worker
    python -m tests.restore_scenario regrade STATE # the staff's regrade, then the upload lost and again

Each prints what it saw as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "sequences-and-attention"
CORRECT = ROOT / "assignments" / ASSIGNMENT / "known" / "correct_vectorised.py"


def _score() -> float:
    from gradebook.models import Result

    return sum(Result.objects.filter(submission__student__student_id="restored").values_list("score", flat=True))


def _work(state: Path) -> None:
    from autograder.batch import GradeOptions
    from service.core.access import course
    from service.handin.worker import run_worker

    run_worker(course(), state, GradeOptions(jobs=1), once=True)


def grade(state: Path) -> dict:
    from gradebook.models import Student
    from service.core.access import assignments
    from service.handin.models import Job
    from service.handin.uploads import store

    row = Student.objects.create(student_id="restored", on_roster=True)
    job = store(state, row, assignments()[ASSIGNMENT], "mine.py", CORRECT.read_bytes())
    _work(state)
    job.refresh_from_db()
    return {"file": job.file, "state": job.state, "score": _score(), "jobs": Job.objects.count()}


def regrade(state: Path) -> dict:
    from service.handin.models import Job
    from service.handin.queue import latest_graded
    from service.handin.queue import regrade as queue_regrade
    from service.handin.uploads import stored_upload

    mode = (state / "gradebook.db").stat().st_mode & 0o777
    [again] = queue_regrade(latest_graded(ASSIGNMENT))
    _work(state)
    again.refresh_from_db()
    regraded = {"state": again.state, "error": again.error, "score": _score()}
    stored_upload(state, again.file).unlink()  # the upload lost (a partial restore, a disk's fault)
    [lost] = queue_regrade(latest_graded(ASSIGNMENT))
    _work(state)
    lost.refresh_from_db()
    return {
        "mode": oct(mode),
        "regraded": regraded,
        "lost": {"state": lost.state, "error": lost.error, "attempts": lost.attempts, "score": _score()},
        "graded_jobs": Job.objects.filter(state=Job.GRADED).count(),
    }


def main(step: str, state: Path) -> None:
    from service.settings import configure

    configure(ROOT, None, state=state)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    print(json.dumps({"grade": grade, "regrade": regrade}[step](state)))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
