"""Benchmark: more than one machine's layout (docs/operators/scaling.md) under a burst of hand-ins,
with one site process and one worker killed in the middle of it.

    python benchmarks/two_sites.py [--students 1000] [--seconds 300] [--workers 2]
        [--postgres postgresql://gradewright:gradewright@127.0.0.1:5432/postgres] [--wait 3600] [--nginx]

The layout, all on this machine (loopback only): one PostgreSQL database made for the run (dropped at
the end), two `autograder serve --workers 0` site processes on one copy of the shipped course, a tiny
round-robin HTTP proxy in front of them (this file's: it stands for nginx or Caddy, and like theirs it
sends a request whose connection to one site is refused to the other; with --nginx, Debian's nginx
itself, run with the scaling page's own nginx configuration, on a loopback port without TLS), and --workers `autograder
worker` processes of their own. Each of --students accounts uploads one known submission of
sequences-and-attention through the proxy, spread evenly over --seconds. A third into the burst one
site process is killed (SIGKILL); at half, one worker is killed while it grades a job (its lease runs
out and another worker claims the job). An upload that fails on the killed site (its connection
reset) is sent again once, as a student would; an upload the site answered is never sent again.

Checked, not assumed: every upload the site acknowledged graded exactly once (one job per
acknowledged id, graded, with one recorded submission), none lost. Reported: the time from upload to
feedback from the jobs' own times (median, p95, worst), the uploads sent again, the jobs claimed again.
Prints Markdown for docs/operators/scaling.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deadline_night import ASSIGNMENT, accounts, burst, outcome, serve, stop, warm_up
from service_load import course_copy, free_port

from course.wording import plural
from tests.postgres import create_database, drop_database

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


class Proxy(ThreadingHTTPServer):
    """Round robin over the sites; a site that refuses the connection is skipped (nginx's
    ``proxy_next_upstream error``), a request already sent to a site that then dies is answered 502."""

    daemon_threads = True

    def __init__(self, port: int, sites: list[str]):
        self.sites, self.turn, self.lock = sites, count(), threading.Lock()
        super().__init__(("127.0.0.1", port), _Forward)


class _Forward(BaseHTTPRequestHandler):
    server: Proxy

    def log_message(self, *_: object) -> None:
        pass

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        with self.server.lock:
            first = next(self.server.turn)
        sites = self.server.sites
        for site in (sites[(first + n) % len(sites)] for n in range(len(sites))):
            try:
                answer = httpx.request(self.command, site + self.path, headers=headers, content=body, timeout=120)
            except httpx.ConnectError:
                continue  # this site is down: the next one (nothing was sent)
            except httpx.HTTPError:
                break  # sent, and the site went away: 502, as a proxy says
            self.send_response(answer.status_code)
            for key, value in answer.headers.items():
                if key.lower() not in HOP_BY_HOP | {"content-length", "content-encoding"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)
            return
        self.send_error(502)

    do_GET = do_POST = _forward


SCALING_PAGE = Path(__file__).resolve().parent.parent / "docs/operators/scaling.md"


def nginx_front(port: int, site_ports: list[int], home: Path) -> subprocess.Popen:
    """nginx (Debian's) with the scaling page's own configuration in front of the sites: its nginx
    block as the page prints it, but listening on a loopback port without TLS and naming this run's
    sites; the rest of nginx's settings (its pid, logs and temporary files) in ``home``."""
    page = SCALING_PAGE.read_text(encoding="utf-8")
    block = page.split("```nginx\n", 1)[1].split("```", 1)[0]
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{port};")
    block = block.replace("server site1:8001;", f"server 127.0.0.1:{site_ports[0]};")
    block = block.replace("server site2:8002;", f"server 127.0.0.1:{site_ports[1]};")
    folder = home / "nginx"
    folder.mkdir()
    temporary = " ".join(
        f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    config = folder / "nginx.conf"
    config.write_text(
        f"pid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\nevents {{}}\n"
        f"http {{\naccess_log off;\n{temporary}\n{block}}}\n",
        encoding="utf-8",
    )
    nginx = subprocess.Popen(["nginx", "-p", str(folder), "-c", str(config), "-g", "daemon off;"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return nginx
        if nginx.poll() is not None:
            raise SystemExit(f"nginx did not start: {(folder / 'error.log').read_text()}")
        time.sleep(0.1)
    raise SystemExit("nginx did not listen within 30 s")


def start_worker(course: Path, log: Path) -> subprocess.Popen:
    """An `autograder worker` of its own, once it says it waits for hand-ins (its output in ``log``)."""
    with log.open("w") as output:
        worker = subprocess.Popen(
            [sys.executable, "-m", "autograder", "--course", str(course), "worker"], stdout=output, stderr=output
        )
    deadline = time.monotonic() + 300
    while "waiting for hand-ins" not in log.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"a worker did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return worker


def kill_a_grading_worker(workers: list[subprocess.Popen]) -> None:
    from service.handin.models import Job

    deadline = time.monotonic() + 60
    mine = {worker.pid: worker for worker in workers}
    while time.monotonic() < deadline:
        for job in Job.objects.filter(state=Job.GRADING):
            pid = job.worker.rsplit(":", 1)[-1]
            if pid.isdigit() and int(pid) in mine:
                mine[int(pid)].kill()
                print(f"killed worker {pid} while it graded job {job.id}", file=sys.stderr)
                return
        time.sleep(0.05)
    print("no worker was grading a job within 60 s: none killed", file=sys.stderr)


def graded_once(ids: list[int]) -> str:
    """Every acknowledged upload's job graded, each with its one recorded submission."""
    from gradebook.models import Submission
    from service.handin.models import Job

    jobs = Job.objects.filter(id__in=ids)
    assert jobs.count() == len(set(ids)) == len(ids), "an acknowledged upload has no job"
    assert not jobs.exclude(state=Job.GRADED).exists(), "a job did not end graded"
    students = {job.student_id for job in jobs}
    recorded = Submission.objects.filter(student_id__in=students, assignment__name=ASSIGNMENT).count()
    assert recorded == len(students), f"{recorded} submissions recorded for {len(students)} students"
    return f"{len(ids)} acknowledged, each graded once ({recorded} submissions recorded)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--postgres", default="postgresql://gradewright:gradewright@127.0.0.1:5432/postgres")
    parser.add_argument("--wait", type=float, default=3600, help="seconds the queue may take to drain")
    parser.add_argument(
        "--nginx", action="store_true", help="nginx with docs/operators/scaling.md's configuration as the proxy"
    )
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="gradewright-two-sites-"))
    url, name = create_database("gradewright_two_sites", args.postgres)
    os.environ["GRADEWRIGHT_DATABASE_URL"] = url  # the sites, the workers and this process share it
    course = course_copy(home)
    ports = [free_port(), free_port()]
    proxy_port = free_port()
    processes: list[subprocess.Popen] = []
    try:
        from service.settings import configure

        configure(course)
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        tokens = accounts("two-", args.students + 1)
        warm = tokens.pop(next(iter(tokens)))
        sites = [serve(course, port, 0) for port in ports]
        processes += sites
        workers = []
        for number in range(args.workers):  # one after the other: each migrates the database when it starts
            workers.append(start_worker(course, home / f"worker-{number}.log"))
            processes.append(workers[-1])
        if args.nginx:
            processes.append(nginx_front(proxy_port, ports, home))
        else:
            proxy = Proxy(proxy_port, [f"http://127.0.0.1:{port}" for port in ports])
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
        front = f"http://127.0.0.1:{proxy_port}"
        warm_up(front, warm)

        def kill_a_site() -> None:
            sites[0].send_signal(signal.SIGKILL)
            print(f"killed site process {sites[0].pid}", file=sys.stderr)

        events = ((args.seconds / 3, kill_a_site), (args.seconds / 2, lambda: kill_a_grading_worker(workers)))
        ids, refused, again = burst(front, tokens, args.seconds, events)
        row = outcome(
            f"2 sites, {args.workers} workers; a site and a worker killed", ids, refused, args.seconds, args.wait
        )
        checked = graded_once(ids)
        if not args.nginx:
            proxy.shutdown()
    finally:
        for process in processes:
            if process.poll() is None:
                stop(process)
        from django.db import connections

        connections.close_all()
        drop_database(name, args.postgres)
        shutil.rmtree(home, ignore_errors=True)
    front_name = "nginx with the scaling page's configuration" if args.nginx else "a proxy"
    print(f"Two site processes behind {front_name}, PostgreSQL, {os.cpu_count()} cores ({socket.gethostname()}):\n")
    print(
        "| run | uploads | jobs | median | p95 | worst | grading throughput | drained after the last upload "
        "| attempts again |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(row)
    print(f"\n{checked}; {plural(again, 'upload')} sent again after the killed site's 502.")


if __name__ == "__main__":
    main()
