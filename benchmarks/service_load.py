"""Benchmark: the grading service under a burst of hand-ins, and with a worker killed mid-run.

(Named service_load.py, not service.py: a script of that name would shadow the service package.)

    python benchmarks/service_load.py [--students 200] [--seconds 60] [--workers 2]

Starts `autograder serve` on a copy of the shipped course, makes --students accounts, and has each
upload one known submission of sequences-and-attention through the API, spread evenly over
--seconds. Reports, from the service's own job times, the time from upload to feedback (median,
95th percentile, worst), that every submission was graded and none lost; then one student alone;
then the burst again (half the students) with one worker killed after a third of it. Prints
Markdown for docs/benchmarks.md. Goal on the 2-core machine: p95 under 10 s for the burst, under 2 s
for one student alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ROOT / "assignments" / "sequences-and-attention" / "known"
PASSWORD = "benchmark password 1"


def course_copy(home: Path) -> Path:
    course = home / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    shutil.copytree(ROOT / "assignments", course / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    return course


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(course: Path, port: int, workers: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(course),
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    for _ in range(3):
        server.stdout.readline()  # the demo accounts, then "serving ..."
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.2)


def accounts(course: Path, count: int) -> list[str]:
    """Students made straight in the service's database (what `autograder links` and a first sign-in do)."""
    from service.settings import configure

    configure(course)
    from django.contrib.auth.models import User

    from gradebook.models import Student
    from service.accounts.models import Member

    names = [f"bench{n:04d}" for n in range(count)]
    for name in names:
        user = User.objects.create_user(name, password=PASSWORD)
        Member.objects.create(user=user, role=Member.STUDENT, student=Student.objects.create(student_id=name))
    return names


def burst(url: str, names: list[str], seconds: float, on_third=None, offset: int = 0) -> list[int]:
    """Each student uploads one known submission (a new file for them with another ``offset``), spread
    evenly over ``seconds``; the job ids."""
    known = sorted(p for p in KNOWN.iterdir() if p.suffix == ".py")
    tokens = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for name in names:
            tokens[name] = client.post("/api/v1/token", data={"username": name, "password": PASSWORD}).json()["token"]
    ids: list[int] = []
    lock = threading.Lock()

    def upload(index: int, name: str) -> None:
        time.sleep(index * seconds / len(names))
        path = known[(index + offset) % len(known)]
        with httpx.Client(base_url=url, timeout=60) as client:
            answer = client.post(
                "/api/v1/submissions",
                headers={"Authorization": f"Token {tokens[name]}"},
                data={"assignment": "sequences-and-attention"},
                files={"file": (path.name, path.read_bytes())},
            )
        answer.raise_for_status()
        with lock:
            ids.append(answer.json()["id"])

    threads = [threading.Thread(target=upload, args=(i, name)) for i, name in enumerate(names)]
    for thread in threads:
        thread.start()
    if on_third:
        time.sleep(seconds / 3)
        on_third()
    for thread in threads:
        thread.join()
    return ids


def latencies(ids: list[int], timeout: float = 1800) -> tuple[list[float], int]:
    """Seconds from upload to feedback per job, once all have ended; and how many failed."""
    from service.handin.models import Job

    deadline = time.monotonic() + timeout
    while Job.objects.filter(id__in=ids, state__in=[Job.QUEUED, Job.GRADING]).exists():
        if time.monotonic() > deadline:
            raise SystemExit("jobs still waiting after the timeout")
        time.sleep(1)
    jobs = list(Job.objects.filter(id__in=ids))
    assert len(jobs) == len(ids), "a submission was lost"
    return [(job.finished_at - job.created_at).total_seconds() for job in jobs], sum(
        j.state == Job.FAILED for j in jobs
    )


def summary(label: str, seconds: list[float], failed: int) -> str:
    ordered = sorted(seconds)
    p95 = ordered[max(0, int(round(0.95 * len(ordered))) - 1)]
    return (
        f"| {label} | {len(ordered)} | {len(ordered) - failed} | {statistics.median(ordered):.1f} s "
        f"| {p95:.1f} s | {ordered[-1]:.1f} s |"
    )


def kill_one_worker(server: subprocess.Popen) -> None:
    import psutil

    workers = [p for p in psutil.Process(server.pid).children() if "worker" in " ".join(p.cmdline())]
    os.kill(workers[0].pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="gradewright-service-benchmark-"))
    course = course_copy(home)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start(course, port, args.workers)
    try:
        names = accounts(course, args.students + 1)
        alone = burst(url, names[-1:], 0)
        rows = [summary("one student alone", *latencies(alone))]
        ids = burst(url, names[: args.students], args.seconds)
        rows.append(summary(f"{args.students} students in {args.seconds:g} s", *latencies(ids)))
        half = names[: args.students // 2]
        ids = burst(url, half, args.seconds / 2, on_third=lambda: kill_one_worker(server), offset=1)
        rows.append(summary(f"{len(half)} more in {args.seconds / 2:g} s, a worker killed", *latencies(ids)))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(home, ignore_errors=True)
    print(f"Service, {args.workers} workers, {os.cpu_count()} cores; upload to feedback, from the jobs' own times:\n")
    print("| run | submissions | graded | median | p95 | worst |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
