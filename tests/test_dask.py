"""Grading on Dask (a LocalCluster of two worker processes): the same batch core, with the faults
of a cluster: a worker killed mid-job, a job that kills every worker, the grader itself killed."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time

import dask
import pytest
from distributed import Client, LocalCluster

from autograder.assignment import load_assignment
from autograder.batch import GradeOptions
from autograder.distributed import dask_executor
from autograder.errors import AutograderError
from autograder.submissions import find_submissions
from gradebook.grading import grade_into_gradebook

from . import dask_jobs
from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .gradebook_view import recorded

pytestmark = needs_sandbox
KNOWN = ASSIGNMENTS / "sequences-and-attention" / "known"


@pytest.fixture(scope="module")
def cluster():
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(local)
        yield client
        client.close()
        local.close()


def _submissions(tmp_path, students, file="correct_vectorised.py"):
    folder = tmp_path / "submissions"
    folder.mkdir()
    for student in students:
        shutil.copy(KNOWN / file, folder / f"{student}.py")
    return find_submissions([folder]).submissions


def _recorded(out):
    table = recorded(out / "gradebook.db")
    return {s: len(rows) for s, rows in table.items()}, {s: sum(n for _, n in rows) for s, rows in table.items()}


def test_a_worker_killed_mid_job_is_rescheduled_and_recorded_once(cluster, tmp_path):
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    submissions = _submissions(tmp_path, ["ada", "alan", "grace"])
    out = tmp_path / "out"
    result = grade_into_gradebook(
        assignment, submissions, out, GradeOptions(reference="numpy"), executor=cluster.get_executor(pure=False),
        job=dask_jobs.dies_once,
    ).batch  # fmt: skip
    assert result.failed == []
    assert all((tmp_path / "submissions" / f"{s}.died").exists() for s in ("ada", "alan", "grace"))  # each died once
    assert sorted((r.student, r.score) for r in result.reports) == [("ada", 10), ("alan", 10), ("grace", 10)]
    assert _recorded(out) == ({"ada": 1, "alan": 1, "grace": 1}, {"ada": 6, "alan": 6, "grace": 6})


def test_a_job_that_kills_every_worker_ends_as_an_error_and_the_batch_goes_on(cluster, tmp_path):
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    submissions = _submissions(tmp_path, ["honest", "poison", "steady"])
    out = tmp_path / "out"
    result = grade_into_gradebook(
        assignment, submissions, out, GradeOptions(reference="numpy"), executor=cluster.get_executor(pure=False),
        job=dask_jobs.poison_for("poison"),
    ).batch  # fmt: skip
    assert result.failed == ["poison"]
    assert sorted(r.student for r in result.reports) == ["honest", "steady"]
    report = (out / "poison.json").read_text()
    assert "the grader failed on this submission (KilledWorker" in report and '"status": "error"' in report
    assert _recorded(out)[0] == {"honest": 1, "steady": 1}  # nothing recorded for poison: a rerun regrades it


def test_the_grader_killed_mid_batch_loses_nothing_and_a_rerun_finishes(cluster, tmp_path):
    _submissions(tmp_path, [f"student{n}" for n in range(8)])
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade", "sequences-and-attention", str(tmp_path / "submissions"),
               "--out", str(out), "--reference", "numpy", "--scheduler", cluster.scheduler.address]  # fmt: skip
    grader = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(out.glob("student*.feedback.txt")):
        time.sleep(0.05)
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    recorded, grades = _recorded(out)
    assert 1 <= len(recorded) < 8 and set(grades.values()) == {6}
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"skipped {len(recorded)} already graded" in rerun.stderr
    assert _recorded(out) == ({f"student{n}": 1 for n in range(8)}, {f"student{n}": 6 for n in range(8)})


def test_an_unreachable_scheduler_is_one_clear_error():
    with pytest.raises(AutograderError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_executor("tcp://127.0.0.1:9", timeout=2):
            pass


def test_a_scheduler_without_workers_is_a_one_line_error_not_a_wait_forever():
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        with pytest.raises(AutograderError) as caught:
            with dask_executor(empty.scheduler_address, workers_wait=1.0):
                pass
    assert str(caught.value) == (
        f"no workers joined the Dask scheduler at {empty.scheduler_address} in 1 s; "
        f"start some with: dask worker {empty.scheduler_address}"
    )


def test_the_services_worker_grades_its_queue_on_the_cluster(cluster):
    """`autograder worker --scheduler`: the queue stays in the database, the sandbox runs on Dask."""
    import uuid

    from django.contrib.auth.models import User

    from autograder.batch import GradeOptions
    from gradebook.models import Student
    from service.access import course, state
    from service.models import Job
    from service.uploads import store
    from service.worker import run_worker

    name = f"dask{uuid.uuid4().hex[:8]}"
    User.objects.create_user(name)
    row = Student.objects.create(student_id=name, on_roster=True)
    spec = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    job = store(state(), row, spec, "mine.py", (KNOWN / "correct_vectorised.py").read_bytes())
    run_worker(course(), state(), GradeOptions(jobs=1, reference="numpy"), once=True,
               executor=cluster.get_executor(pure=False))  # fmt: skip
    job.refresh_from_db()
    assert job.state == Job.GRADED and job.submission is not None
    assert sum(result.score for result in job.submission.results.all()) == 10
