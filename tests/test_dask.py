"""Grading on Dask (a LocalCluster of two worker processes): the same batch core, with the faults
of a cluster: a worker killed mid-job, a job that kills every worker, the grader itself killed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import site
import subprocess
import sys
import time
from pathlib import Path

import dask
import pytest
from distributed import Client, LocalCluster

from autograder.assignment import load_assignment
from autograder.batch import GradeOptions, grade_batch
from autograder.cluster import GradingNeeds
from autograder.distributed import DaskExecutor, dask_executor
from autograder.errors import AutograderError, ClusterUnfit
from autograder.submissions import find_submissions
from gradebook.grading import grade_into_gradebook

from . import dask_jobs
from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .gradebook_view import recorded

pytestmark = [needs_sandbox, pytest.mark.usefixtures("empty_queue")]
KNOWN = ASSIGNMENTS / "sequences-and-attention" / "known"
NEEDS = GradingNeeds.here(("numpy", "matplotlib"), False, [ASSIGNMENTS])


WORKERS_START_SECONDS = 180  # a busy machine starts a worker process in seconds; never in minutes


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, both joined before any test is given the cluster."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(local)
        try:
            _wait_for_workers(client, 2)
            yield client
        finally:
            client.close()
            local.close()


def _wait_for_workers(client: Client, count: int) -> None:
    try:
        client.wait_for_workers(count, timeout=WORKERS_START_SECONDS)
    except TimeoutError:
        joined = len(client.scheduler_info()["workers"])
        pytest.fail(f"{joined} of {count} Dask workers joined {client.scheduler.address} in {WORKERS_START_SECONDS} s")


def _foreign_worker(address: str, folder: Path) -> tuple[subprocess.Popen, Path]:
    """A Dask worker started from an environment that lacks the project, as one started from another
    virtualenv would be: the same interpreter and site-packages (Dask is there), but Python's site
    module off (-S), so the project's editable install (a .pth file) is not on its path, and neither
    PYTHONPATH nor the working folder leads to the checkout. (Its log, beside it.)"""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "worker.log"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "DASK_"))}
    env["PYTHONPATH"] = os.pathsep.join(site.getsitepackages())
    with log.open("wb") as output:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-S",
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nthreads",
                "1",
                "--no-dashboard",
                "--no-nanny",
                "--death-timeout",
                "60",
            ],
            cwd=folder,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return worker, log


def _joined(client: Client, worker: subprocess.Popen, log: Path, before: set[str]) -> str:
    """The address of ``worker`` once it has joined ``client``'s scheduler (a clear failure if never)."""
    deadline = time.monotonic() + WORKERS_START_SECONDS
    while time.monotonic() < deadline:
        new = set(client.scheduler_info()["workers"]) - before
        if new:
            return new.pop()
        if worker.poll() is not None:
            pytest.fail(f"the worker from another environment exited ({worker.returncode}): {log.read_text()[-2000:]}")
        time.sleep(0.2)
    pytest.fail(
        f"the worker from another environment did not join in {WORKERS_START_SECONDS} s: {log.read_text()[-2000:]}"
    )


def _stop(worker: subprocess.Popen) -> None:
    worker.terminate()
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


@pytest.fixture(scope="module")
def pair():
    """Two workers in this process, both joined (none of the fault tests' killed and restarted ones)."""
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
        ) as local,
        Client(local) as client,
    ):
        _wait_for_workers(client, 2)
        yield client


@pytest.fixture(scope="module")
def foreign_cluster(tmp_path_factory):
    """A scheduler (this process's) whose only worker runs where the project is not installed:
    (a client, the worker's address)."""
    with (
        LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as local,
        Client(local) as client,
    ):
        worker, log = _foreign_worker(local.scheduler_address, tmp_path_factory.mktemp("foreign"))
        try:
            yield client, _joined(client, worker, log, set())
        finally:
            _stop(worker)


def _lacks_the_grader(address: str, worker: str) -> str:
    return (
        f"cluster {address}: worker {worker}: cannot import the grader (ModuleNotFoundError: No module named "
        f"'autograder'); install this project in the workers' environment (pip install -e '.[dask]' from the checkout)"
    )


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
        assignment,
        submissions,
        out,
        GradeOptions(reference="numpy"),
        executor=DaskExecutor(cluster, pure=False),
        job=dask_jobs.dies_once,
    ).batch
    assert result.failed == []
    assert all((tmp_path / "submissions" / f"{s}.died").exists() for s in ("ada", "alan", "grace"))  # each died once
    assert sorted((r.student, r.score) for r in result.reports) == [("ada", 10), ("alan", 10), ("grace", 10)]
    assert _recorded(out) == ({"ada": 1, "alan": 1, "grace": 1}, {"ada": 6, "alan": 6, "grace": 6})


def test_a_job_that_kills_every_worker_ends_as_an_error_and_the_batch_goes_on(cluster, tmp_path):
    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    submissions = _submissions(tmp_path, ["honest", "poison", "steady"])
    out = tmp_path / "out"
    result = grade_into_gradebook(
        assignment,
        submissions,
        out,
        GradeOptions(reference="numpy"),
        executor=DaskExecutor(cluster, pure=False),
        job=dask_jobs.poison_for("poison"),
    ).batch
    assert result.failed == ["poison"]
    assert sorted(r.student for r in result.reports) == ["honest", "steady"]
    report = (out / "poison.json").read_text()
    assert "the grader failed on this submission (KilledWorker" in report and '"status": "error"' in report
    assert _recorded(out)[0] == {"honest": 1, "steady": 1}  # nothing recorded for poison: a rerun regrades it


def test_a_job_whose_result_cannot_be_fetched_ends_with_why_and_never_waits_for_ever(pair, monkeypatch):
    """The race behind a batch that hung on a busy machine: a job's result lost with its worker (a
    job that kills every worker killed it before the result was fetched) and computed again into a
    KilledWorker, so that fetching it raised. Dask's own executor dropped that exception and left the
    job's future pending for ever; the grader's ends the future with it, and the batch goes on."""
    from distributed import Client as DaskClient
    from distributed.scheduler import KilledWorker

    async def lost(self, futures, *args, **kwargs):
        raise KilledWorker(futures[0].key, None, allowed_failures=1)

    monkeypatch.setattr(DaskClient, "_gather", lost)
    job = DaskExecutor(pair, pure=False).submit(sum, [1, 2])
    assert isinstance(job.exception(timeout=120), KilledWorker)


def test_the_grader_killed_mid_batch_loses_nothing_and_a_rerun_finishes(cluster, tmp_path):
    _submissions(tmp_path, [f"student{n}" for n in range(8)])
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        "sequences-and-attention",
        str(tmp_path / "submissions"),
        "--out",
        str(out),
        "--reference",
        "numpy",
        "--scheduler",
        cluster.scheduler.address,
    ]
    grader = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list(out.glob("student*.feedback.txt")):
        time.sleep(0.05)
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    if not list(out.glob("student*.feedback.txt")):
        pytest.fail("the grader on the cluster graded nobody in 300 s")
    recorded, grades = _recorded(out)
    assert 1 <= len(recorded) < 8 and set(grades.values()) == {6}
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"skipped {len(recorded)} already graded" in rerun.stderr
    assert _recorded(out) == ({f"student{n}": 1 for n in range(8)}, {f"student{n}": 6 for n in range(8)})


def test_an_unreachable_scheduler_is_one_clear_error():
    with pytest.raises(AutograderError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_executor("tcp://127.0.0.1:9", NEEDS, timeout=2):
            pass


def test_a_scheduler_without_workers_is_a_one_line_error_not_a_wait_forever():
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        with pytest.raises(AutograderError) as caught:
            with dask_executor(empty.scheduler_address, NEEDS, workers_wait=1.0):
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
    from service.core.access import course, state
    from service.handin.models import Job
    from service.handin.uploads import store
    from service.handin.worker import run_worker

    name = f"dask{uuid.uuid4().hex[:8]}"
    User.objects.create_user(name)
    row = Student.objects.create(student_id=name, on_roster=True)
    spec = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    job = store(state(), row, spec, "mine.py", (KNOWN / "correct_vectorised.py").read_bytes())
    run_worker(
        course(),
        state(),
        GradeOptions(jobs=1, reference="numpy"),
        once=True,
        executor=DaskExecutor(cluster, pure=False),
    )
    job.refresh_from_db()
    assert job.state == Job.GRADED and job.submission is not None
    assert sum(result.score for result in job.submission.results.all()) == 10


def test_a_cluster_whose_workers_lack_the_project_is_refused_in_one_line_before_anything_is_graded(
    foreign_cluster, tmp_path
):
    client, worker = foreign_cluster
    _submissions(tmp_path, ["ada", "alan"])
    out = tmp_path / "out"
    graded = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(tmp_path / "submissions"),
            "--out",
            str(out),
            "--reference",
            "numpy",
            "--scheduler",
            client.scheduler.address,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert graded.returncode == 2, graded.stderr
    assert graded.stderr.splitlines() == [f"autograder: {_lacks_the_grader(client.scheduler.address, worker)}"]
    assert graded.stdout == "" and not out.exists()  # no report, no gradebook


def test_the_services_worker_refuses_such_a_cluster_in_one_line_and_leaves_the_queue_as_it_was(
    foreign_cluster, tmp_path
):
    client, worker = foreign_cluster
    address = client.scheduler.address
    course_copy = tmp_path / "course"
    course_copy.mkdir()
    shutil.copy(ROOT / "course.toml", course_copy)
    shutil.copytree(ROOT / "lesson_data", course_copy / "lesson_data")
    shutil.copytree(ASSIGNMENTS, course_copy / "assignments", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    env = {name: value for name, value in os.environ.items() if name != "GRADEWRIGHT_DATABASE_URL"}
    command = subprocess.run(
        [sys.executable, "-m", "autograder", "--course", str(course_copy), "worker", "--once", "--scheduler", address],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert command.returncode == 2, command.stderr
    assert command.stderr.splitlines() == [f"autograder: {_lacks_the_grader(address, worker)}"]
    assert command.stdout == ""  # not even "0 submissions graded"
    # The same refusal in the library, before any job is claimed: a queued job stays queued, untried.
    from service.core.access import course, state
    from service.handin.models import Job
    from service.handin.worker import run_worker

    job = _queued_job()
    with pytest.raises(ClusterUnfit) as caught:
        with dask_executor(address, NEEDS) as executor:
            run_worker(course(), state(), GradeOptions(jobs=1, reference="numpy"), once=True, executor=executor)
    assert str(caught.value) == _lacks_the_grader(address, worker)
    job.refresh_from_db()
    assert (job.state, job.attempts) == (Job.QUEUED, 0)


def test_a_worker_that_joins_later_and_cannot_grade_is_given_nothing_and_said_once(tmp_path):
    said: list[str] = []
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
        ) as local,
        Client(local) as client,
    ):
        _wait_for_workers(client, 1)
        (healthy,) = client.scheduler_info()["workers"]
        address = local.scheduler_address
        with dask_executor(address, NEEDS, on_refused=said.append) as executor:
            worker, log = _foreign_worker(address, tmp_path / "foreign")
            try:
                joiner = _joined(client, worker, log, {healthy})
                deadline = time.monotonic() + WORKERS_START_SECONDS
                while not said and time.monotonic() < deadline:
                    time.sleep(0.1)
                assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
                students = ["ada", "alan", "grace", "edsger"]
                result = grade_batch(
                    assignment,
                    _submissions(tmp_path, students),
                    tmp_path / "out",
                    GradeOptions(reference="numpy"),
                    executor=executor,
                )
                resources = {name: info["resources"] for name, info in client.scheduler_info()["workers"].items()}
            finally:
                _stop(worker)
    assert said == [
        f"cluster {address}: worker {joiner} joined but cannot grade, so it is left out: cannot import the grader "
        "(ModuleNotFoundError: No module named 'autograder'); install this project in the workers' environment "
        "(pip install -e '.[dask]' from the checkout)"
    ]
    # Every submission graded, by the worker that can: the joiner has not the resource grading asks for.
    assert result.failed == [] and sorted((r.student, r.score) for r in result.reports) == [
        (student, 10) for student in sorted(students)
    ]
    assert resources[healthy] == {NEEDS.resource(): 1} and resources[joiner] == {}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"packages": {"numpy": "0.0.1"}},
            r"has numpy [\d.]+, the submitting side 0\.0\.1; install the same version on both sides "
            r"\(pip install numpy==0\.0\.1\)",
        ),
        (
            {"packages": {"numpy": None, "no_such_course_package": "1.0"}},
            r"lacks the course's sandbox package no_such_course_package; pip install no_such_course_package==1\.0 there",
        ),
        (
            {"grader_version": "0.0.0"},
            r"runs grader [^,]+, the submitting side 0\.0\.0; install the same version of this project on both sides",
        ),
        (
            {"paths": ["/no/such/course"]},
            r"does not see /no/such/course; share the course folder with every worker, at the same path as on the "
            r"submitting side",
        ),
    ],
)
def test_every_worker_is_probed_for_what_grading_needs(pair, change, problem):
    """Both workers lack the same thing: the line names the first, the missing piece, the fix, and
    how many more cannot grade."""
    address = pair.scheduler.address
    with pytest.raises(ClusterUnfit) as caught:
        with dask_executor(address, NEEDS.model_copy(update=change)):
            pytest.fail("a cluster that cannot grade was given to the batch")
    worker = r"tcp://[\d.]+:\d+"
    assert re.fullmatch(
        rf"cluster {re.escape(address)}: worker {worker}: {problem} \(and 1 more of the 2 workers cannot grade\)",
        str(caught.value),
    ), str(caught.value)


def test_dasks_own_version_mismatch_is_one_line():
    """Dask's check is a table of versions, and only a warning; here it is one line naming the side."""

    class Cluster:  # what probe_cluster first asks of a client: the versions each side runs
        def get_versions(self) -> dict:
            here = {
                "packages": {
                    "python": "3.11.7.final.0",
                    "dask": "2026.8.0",
                    "distributed": "2026.8.0",
                    "msgpack": "1.2.4",
                    "cloudpickle": "3.1.3",
                    "tornado": "6.6.1",
                    "toolz": "1.2.0",
                }
            }
            old = {"packages": {**here["packages"], "distributed": "2024.1.0"}}
            return {"client": here, "scheduler": here, "workers": {"tcp://10.0.0.2:4000": old}}

    from autograder.cluster import probe_cluster

    with pytest.raises(ClusterUnfit) as caught:
        probe_cluster(Cluster(), NEEDS, "tcp://10.0.0.1:8786")
    assert str(caught.value) == (
        "cluster tcp://10.0.0.1:8786: worker tcp://10.0.0.2:4000: has distributed 2024.1.0, this side 2026.8.0; "
        "install the same version on both sides (pip install distributed==2026.8.0)"
    )


def _queued_job():
    import uuid

    from django.contrib.auth.models import User

    from gradebook.models import Student
    from service.core.access import state
    from service.handin.uploads import store

    name = f"dask{uuid.uuid4().hex[:8]}"
    User.objects.create_user(name)
    row = Student.objects.create(student_id=name, on_roster=True)
    spec = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    return store(state(), row, spec, "mine.py", (KNOWN / "correct_vectorised.py").read_bytes())
