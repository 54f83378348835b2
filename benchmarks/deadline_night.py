"""Benchmark: a deadline night. Many students hand in within minutes through the API, on PostgreSQL,
graded by the service's workers; then the same with a worker killed mid-burst; then with the
workers' grading sent to a Dask cluster of two workers (`autograder worker --scheduler`); then each
student handing in a file, another and the first again (A, B, A), after which every student's
recorded grade is checked to be the submission their assignment's rule (counts) picks; and, with
--restart-database, the same A, B, A with the database restarted in the middle of it.

    python benchmarks/deadline_night.py [--students 1000] [--seconds 300] [--workers 2]
        [--postgres postgresql://gradewright:gradewright@127.0.0.1:5432/postgres] [--wait 3600]
        [--runs burst killed dask again] [--restart-database [SECONDS]]

--restart-database [SECONDS] (10 when no SECONDS is given) runs everything on a PostgreSQL server of
the benchmark's own (initdb into a temporary folder, on a free port: tests/postgres.py
private_server; --postgres is not used) and adds a last run, "restart": A, B, A over --seconds in
which, halfway through B's round and once a worker is grading a job, the server is stopped (pg_ctl
stop -m fast: every connection ended), left down SECONDS and started again, while students go on
handing in. The site answers 503 with Retry-After meanwhile; a client waits as asked and sends the
hand-in again (counted in the report: the uploads "answered 503 during the restart and sent again
after its Retry-After", not lost). Afterwards: no hand-in lost (each upload answered is a job, each
job graded), none recorded twice (each student has exactly their three hand-ins), none graded twice
(one submission per hand-in, no more), and every student's recorded grade their rule's submission.
The machine's shared PostgreSQL server is never stopped. A run with just this:

    python benchmarks/deadline_night.py --students 6 --seconds 60 --runs restart --restart-database

Everything is on this machine (loopback only): a fresh PostgreSQL database made for the run on the
server --postgres names (dropped at the end), `autograder serve` on a copy of the shipped course, and
for the Dask run a LocalCluster of two worker processes. Each run is a new set of --students
accounts (made straight in the database, each with an API token), each uploading one known
submission of sequences-and-attention, spread evenly over --seconds. For each run: every submission
graded and none lost (checked, not assumed), the time from upload to feedback from the jobs' own
times (median, 95th percentile, worst), the arrival rate against the grading throughput (jobs per
second while the queue was not empty) and how long the queue took to drain after the last upload.
A run whose queue is not empty --wait seconds after its last upload stops the benchmark. Prints
Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_load import KNOWN, course_copy, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course.wording import plural
from tests.postgres import BIN, PrivateServer, create_database, drop_database, private_server

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "sequences-and-attention"
DOWN = 10.0  # seconds the restart run's database is down, where --restart-database names none
UNAVAILABLE_FOR = 600  # seconds a client goes on sending a hand-in again that the site answers 503


def serve(course: Path, port: int, workers: int) -> subprocess.Popen:
    """`autograder serve` with ``workers`` grading workers, once it answers."""
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
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"autograder serve ended ({server.returncode}) before it answered")
        try:
            httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            return server
        except httpx.HTTPError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("autograder serve did not answer within 120 s")


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def accounts(prefix: str, count: int) -> dict[str, str]:
    """``count`` student accounts on the roster, made at once in the database: {name: API token}."""
    from django.contrib.auth.models import User

    from gradebook.models import Student
    from service.accounts.models import ApiToken, Member, digest

    names = [f"{prefix}{n:05d}" for n in range(count)]
    User.objects.bulk_create([User(username=name, password="!") for name in names])
    Student.objects.bulk_create([Student(student_id=name, on_roster=True) for name in names])
    users = {u.username: u for u in User.objects.filter(username__startswith=prefix)}
    students = {s.student_id: s for s in Student.objects.filter(student_id__startswith=prefix)}
    Member.objects.bulk_create([Member(user=users[n], role=Member.STUDENT, student=students[n]) for n in names])
    tokens = {name: secrets.token_urlsafe(32) for name in names}
    ApiToken.objects.bulk_create([ApiToken(user=users[n], digest=digest(tokens[n])) for n in names])
    return tokens


def burst(
    url: str,
    tokens: dict[str, str],
    seconds: float,
    events: tuple[tuple[float, Callable[[], object]], ...] = (),
    shift: int = 0,
    unavailable: list[str] | None = None,
) -> tuple[list[int], list[str], int]:
    """Each student uploads one known submission (the ``shift``-th after their own: another round's
    file), spread evenly over ``seconds``, while ``events`` happen at their times (a worker or a site
    killed, the database restarted). An upload the front answers 502 (its site died under it) is sent
    again once, as a browser's user would; one the site answers 503 (its database away: nothing was
    changed) is sent again after the answer's Retry-After, as often as it says so within
    ``UNAVAILABLE_FOR`` seconds, each such wait's student added to ``unavailable``. The job ids, the
    uploads refused or failed (none, in a run that counts) and how many 502s were sent again."""
    known = sorted(p for p in KNOWN.iterdir() if p.suffix == ".py")
    ids: list[int] = []
    refused: list[str] = []
    again = 0
    lock = threading.Lock()
    began = time.monotonic()

    def upload(index: int, name: str) -> None:
        nonlocal again
        time.sleep(max(0.0, began + index * seconds / len(tokens) - time.monotonic()))
        path = known[(index + shift) % len(known)]
        attempt = 0
        give_up = time.monotonic() + UNAVAILABLE_FOR
        while True:
            try:
                with httpx.Client(base_url=url, timeout=120) as client:
                    answer = client.post(
                        "/api/v1/submissions",
                        headers={"Authorization": f"Token {tokens[name]}"},
                        data={"assignment": ASSIGNMENT},
                        files={"file": (path.name, path.read_bytes())},
                    )
                if answer.status_code == 503 and "Retry-After" in answer.headers and time.monotonic() < give_up:
                    with lock:
                        if unavailable is not None:
                            unavailable.append(name)
                    time.sleep(float(answer.headers["Retry-After"]))
                    continue
                if answer.status_code == 502 and attempt == 0:
                    attempt += 1
                    with lock:
                        again += 1
                    continue
                answer.raise_for_status()
                with lock:
                    ids.append(answer.json()["id"])
            except httpx.HTTPError as exc:
                with lock:
                    refused.append(f"{name}: {exc}")
            return

    threads = [threading.Thread(target=upload, args=(i, name)) for i, name in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for at, event in events:
        time.sleep(max(0.0, began + at - time.monotonic()))
        event()
    for thread in threads:
        thread.join()
    return ids, refused, again


def kill_a_grading_worker(server: subprocess.Popen) -> None:
    """SIGKILL one of the site's workers while it grades a job (its lease then runs out and another
    worker claims the job again): the worst moment to lose one."""
    import psutil

    from service.handin.models import Job

    workers = {p.pid for p in psutil.Process(server.pid).children() if "worker" in " ".join(p.cmdline())}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for job in Job.objects.filter(state=Job.GRADING):
            pid = int(job.worker.rsplit(":", 1)[-1]) if job.worker.rsplit(":", 1)[-1].isdigit() else None
            if pid is not None and pid in workers:
                os.kill(pid, signal.SIGKILL)
                print(f"killed worker {pid} while it graded job {job.id}", file=sys.stderr)
                return
        time.sleep(0.05)
    raise SystemExit("no worker was grading a job within 60 s: nothing to kill")


def warm_up(site: str, token: str) -> None:
    """One hand-in before the burst, waited for: the workers are up and warm, as on a real night."""
    from service.handin.models import Job

    ids, refused, _ = burst(site, {"warm": token}, 0)
    if refused:
        raise SystemExit(f"the warm-up hand-in was refused: {refused[0]}")
    deadline = time.monotonic() + 300
    while Job.objects.filter(id__in=ids, state__in=[Job.QUEUED, Job.GRADING]).exists():
        if time.monotonic() > deadline:
            raise SystemExit("the warm-up hand-in was not graded within 300 s")
        time.sleep(0.5)


def outcome(label: str, ids: list[int], refused: list[str], seconds: float, wait: float) -> str:
    """Wait for every job to end, check none was lost, and the run's Markdown row."""
    from service.handin.models import Job

    deadline = time.monotonic() + wait
    while Job.objects.filter(id__in=ids, state__in=[Job.QUEUED, Job.GRADING]).exists():
        if time.monotonic() > deadline:
            left = Job.objects.filter(id__in=ids, state__in=[Job.QUEUED, Job.GRADING]).count()
            raise SystemExit(f"{label}: {left} jobs still waiting {wait:g} s after the last upload")
        time.sleep(1)
    jobs = list(Job.objects.filter(id__in=ids))
    lost = len(ids) - len(jobs)
    graded = [job for job in jobs if job.state == Job.GRADED and job.submission_id is not None]
    latency = sorted((job.finished_at - job.created_at).total_seconds() for job in jobs)
    p95 = latency[max(0, int(round(0.95 * len(latency))) - 1)]
    first = min(job.started_at for job in jobs if job.started_at)
    last = max(job.finished_at for job in jobs)
    drained = (last - max(job.created_at for job in jobs)).total_seconds()
    throughput = len(jobs) / max((last - first).total_seconds(), 1e-9)
    attempts = sum(job.attempts for job in jobs) - len(jobs)
    return (
        f"| {label} | {len(ids) + len(refused)} in {seconds:g} s ({(len(ids) + len(refused)) / seconds:.2f}/s) "
        f"| {len(graded)} graded, {len(jobs) - len(graded)} failed, {lost} lost, {len(refused)} refused "
        f"| {statistics.median(latency):.1f} s | {p95:.1f} s | {latency[-1]:.1f} s | {throughput:.2f}/s "
        f"| {drained:.0f} s | {attempts} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--postgres", default="postgresql://gradewright:gradewright@127.0.0.1:5432/postgres")
    parser.add_argument("--wait", type=float, default=3600, help="seconds a run's queue may take to drain")
    runs = ["burst", "killed", "dask", "again"]
    parser.add_argument("--runs", nargs="+", choices=[*runs, "restart"], default=runs)
    parser.add_argument(
        "--restart-database",
        type=float,
        nargs="?",
        const=DOWN,
        metavar="SECONDS",
        help=f"add the restart run, on a PostgreSQL server of the benchmark's own, down SECONDS ({DOWN:g})",
    )
    args = parser.parse_args()
    if args.restart_database is not None and "restart" not in args.runs:
        args.runs.append("restart")
    with ExitStack() as stack:
        server = None
        if "restart" in args.runs:
            if BIN is None or not (BIN / "initdb").exists():
                raise SystemExit("--restart-database: no PostgreSQL server programs in /usr/lib/postgresql")
            server = stack.enter_context(private_server(free_port()))
            args.postgres = server.url  # never the machine's shared server: this one is stopped
        night(args, server)


def night(args: argparse.Namespace, private: PrivateServer | None) -> None:
    """The runs ``args.runs``, on the server ``args.postgres`` (``private``, the restart run's)."""
    home = Path(tempfile.mkdtemp(prefix="gradewright-deadline-night-"))
    url, name = create_database("gradewright_night", args.postgres)
    os.environ["GRADEWRIGHT_DATABASE_URL"] = url  # the service, its workers and this process share it
    course = course_copy(home)
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    rows: list[str] = []
    notes: list[str] = []  # what a run checked, said under the table
    try:
        from service.settings import configure

        configure(course)
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        for run in args.runs:
            tokens = accounts(f"{run}-", args.students + 1)
            warm = tokens.pop(next(iter(tokens)))
            if run == "dask":
                rows.append(dask_run(course, port, site, tokens, warm, args))
                continue
            if run in ("again", "restart"):
                restart = None
                if run == "restart":
                    assert private is not None
                    restart = Restart(private, DOWN if args.restart_database is None else args.restart_database)
                row, said = again_run(course, port, site, tokens, warm, args, restart)
                rows.append(row)
                notes += said
                continue
            server = serve(course, port, args.workers)
            try:
                killer = partial(kill_a_grading_worker, server) if run == "killed" else None
                warm_up(site, warm)
                events = ((args.seconds / 3, killer),) if killer else ()
                ids, refused, _ = burst(site, tokens, args.seconds, events)
                label = f"{args.workers} workers" + (", one killed mid-job a third into the burst" if killer else "")
                rows.append(outcome(label, ids, refused, args.seconds, args.wait))
            finally:
                stop(server)
            print(rows[-1], file=sys.stderr)
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(name, args.postgres)
        shutil.rmtree(home, ignore_errors=True)
    where = ", a server of the benchmark's own" if private else ""
    print(f"Deadline night, PostgreSQL{where}, {os.cpu_count()} cores; upload to feedback from the jobs' own times:\n")
    print(
        "| run | uploads | jobs | median | p95 | worst | grading throughput | drained after the last upload "
        "| attempts again |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    for note in notes:
        print(f"\n{note}")


def dask_run(course: Path, port: int, site: str, tokens: dict[str, str], warm: str, args: argparse.Namespace) -> str:
    """The site with no worker of its own; ``args.workers`` `autograder worker --scheduler` processes
    keep the queue and send the grading to a LocalCluster of two worker processes."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        server = serve(course, port, 0)
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "autograder",
                    "--course",
                    str(course),
                    "worker",
                    "--scheduler",
                    cluster.scheduler_address,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(args.workers)
        ]
        try:
            warm_up(site, warm)
            ids, refused, _ = burst(site, tokens, args.seconds)
            row = outcome(f"{args.workers} workers grading on Dask (2 workers)", ids, refused, args.seconds, args.wait)
        finally:
            for worker in workers:
                stop(worker)
            stop(server)
    print(row, file=sys.stderr)
    return row


def again_run(
    course: Path,
    port: int,
    site: str,
    tokens: dict[str, str],
    warm: str,
    args: argparse.Namespace,
    restart: Restart | None = None,
) -> tuple[str, list[str]]:
    """Each student hands in a file, another, then the first again (A, B, A: three rounds over
    --seconds), graded by the site's workers, with the database restarted halfway through B's round
    where ``restart`` is given; then every student's recorded grade (the gradebook's table, which the
    grade files, the API and the platforms read) is checked against the submission their
    assignment's rule picks from their own hand-ins, in order, and every hand-in is checked to be a
    submission of its own. The run's row, and what it checked."""
    server = serve(course, port, args.workers)
    ids: list[int] = []
    refused: list[str] = []
    unavailable: list[str] = []  # a student each time the site answered 503 and they sent it again
    label = f"{args.workers} workers, each student handing in A, B, A"
    try:
        warm_up(site, warm)
        for round_, shift in enumerate((0, 1, 0)):
            events = ((args.seconds / 6, restart),) if restart is not None and round_ == 1 else ()
            round_ids, round_refused, _ = burst(
                site, tokens, args.seconds / 3, events, shift=shift, unavailable=unavailable
            )
            ids += round_ids
            refused += round_refused
        if restart is not None:
            label += f", the database restarted mid-burst (down {restart.away:.1f} s)"
        row = outcome(label, ids, refused, args.seconds, args.wait)
    finally:
        stop(server)
    print(row, file=sys.stderr)
    notes = [rule_check(list(tokens))]
    if restart is not None:
        notes.append(f"{restart.said} {once_check(list(tokens), 3, unavailable)}")
    for note in notes:
        print(note, file=sys.stderr)
    return row, notes


class Restart:
    """The restart run's event: once a worker grades a job (waited for up to a minute), the private
    server stopped (``pg_ctl stop -m fast``: every session ended, the workers' and the site's), left
    down ``down`` seconds and started again; what happened, in ``said``."""

    def __init__(self, server: PrivateServer, down: float):
        self.server, self.down = server, down
        self.away = 0.0
        self.said = "The database was never restarted."

    def __call__(self) -> None:
        from service.core.outage import forget_connections
        from service.handin.models import Job

        deadline = time.monotonic() + 60
        grading = None
        while grading is None and time.monotonic() < deadline:
            grading = Job.objects.filter(state=Job.GRADING).values_list("id", flat=True).first()
            if grading is None:
                time.sleep(0.05)
        forget_connections()  # this process's own: broken once the server stops
        began = time.monotonic()
        self.server.stop()
        time.sleep(self.down)
        self.server.start()
        self.away = time.monotonic() - began
        while_ = f"while job {grading} was being graded" if grading else "with no job being graded (none in 60 s)"
        self.said = f"Database restart: stopped {while_}, back {self.away:.1f} s later."
        print(self.said, file=sys.stderr)


def once_check(students: list[str], each: int, unavailable: list[str]) -> str:
    """Whether each of ``students`` has exactly ``each`` hand-ins (none lost, none recorded twice by
    an upload sent again) and exactly one submission per graded hand-in (none graded twice: a second
    grading of a hand-in would record a second submission), and the 503s ridden out."""
    from gradebook.models import Submission
    from service.handin.models import Job

    jobs = Job.objects.filter(student__student_id__in=students, regrade=False)
    counts = {name: 0 for name in students}
    for name in jobs.values_list("student__student_id", flat=True):
        counts[name] += 1
    off = sorted(name for name, n in counts.items() if n != each)
    graded = jobs.filter(state=Job.GRADED).count()
    submissions = Submission.objects.filter(student__student_id__in=students).count()
    said = (
        f"Hand-ins: {plural(sum(counts.values()), 'hand-in')} for {plural(len(students), 'student')}, "
        f"{len(students) - len(off)} of them with exactly {each}; {graded} graded, "
        f"{plural(submissions, 'submission')} recorded (a hand-in graded twice would be two); "
        f"{plural(len(unavailable), 'upload')} answered 503 during the restart and sent again after its "
        f"Retry-After (by {plural(len(set(unavailable)), 'student')})."
    )
    return said + (f" Not {plural(each, 'hand-in')}: {', '.join(off[:10])}." if off else "")


def rule_check(students: list[str]) -> str:
    """Whether each student's recorded grade is their rule's submission, and each hand-in its own."""
    from gradebook.grades import HandIn, current_grades, report_of, student_due, which_counts
    from service.core.access import assignments, book
    from service.handin.models import Job

    spec = assignments()[ASSIGNMENT]
    grades = {g.student_id: g for g in current_grades(book(), spec)}
    right, recorded, handed = 0, 0, 0
    wrong: list[str] = []
    for name in students:
        jobs = list(
            Job.objects.filter(student__student_id=name, regrade=False, state=Job.GRADED)
            .select_related("submission", "student")
            .order_by("id")
        )
        handed += len(jobs)
        recorded += len({job.submission_id for job in jobs})
        reports = [report_of(book(), spec, job.submission) for job in jobs]
        hand_ins = [
            HandIn(job.submission_id, job.submission.submitted_at, report.final_score)
            for job, report in zip(jobs, reports, strict=True)
        ]
        picked = which_counts(spec.counts, hand_ins, student_due(spec, None))
        expected = next(
            (r for j, r in zip(jobs, reports, strict=True) if picked and j.submission_id == picked.id), None
        )
        grade = grades.get(name)
        got = grade.report if grade is not None else None
        if (
            expected is None
            or got is None
            or (got.sha256, got.submitted_at, got.final_score)
            != (
                expected.sha256,
                expected.submitted_at,
                expected.final_score,
            )
        ):
            wrong.append(name)
        else:
            right += 1
    said = (
        f"Re-hand-in check (rule: {spec.counts}): {right} of {len(students)} students' recorded grades are their "
        f"rule's submission; {recorded} of {handed} graded hand-ins recorded as submissions of their own."
    )
    return said + (f" Not their rule's: {', '.join(wrong[:10])}." if wrong else "")


if __name__ == "__main__":
    main()
