"""The database restarted under a running site: ``autograder serve --workers 2`` on a PostgreSQL server
of this test's own (initdb into a temporary folder, on a port of its own: restarting the machine's
shared server would break every other test that uses it). Hand-ins are graded before and after; a
job whose grading the restart interrupts is graded once, neither lost nor twice; a request while
the server is down answers 503 with Retry-After, not 500; the workers ride it out (a warning line
each, no internal error). A worker that dies anyway is replaced by ``serve``, and one that dies as
it starts is started again after longer and longer waits, not in a spin."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import needs_sandbox
from .postgres import BIN, PrivateServer, private_server
from .served import CORRECT, PARTIAL, commands_env, course_copy, free_port, serve

needs_initdb = pytest.mark.skipif(
    (BIN is None or not (BIN / "initdb").exists()) and not os.environ.get("GRADEWRIGHT_REQUIRE_POSTGRES"),
    reason="no PostgreSQL server programs in /usr/lib/postgresql (.ci/run installs them)",
)
WAIT = 240  # seconds a hand-in may take to be graded on a busy machine


@pytest.fixture
def private_postgres() -> Iterator[PrivateServer]:
    with private_server(free_port()) as server:
        yield server


def _graded(url: str, headers: dict[str, str], job: dict) -> dict:
    deadline = time.monotonic() + WAIT
    while job["state"] in {"queued", "grading"}:
        assert time.monotonic() < deadline, f"submission {job['id']} still {job['state']} after {WAIT} s"
        time.sleep(0.3)
        job = httpx.get(f"{url}/api/v1/submissions/{job['id']}", headers=headers, timeout=60).json()
    return job


def _hand_in(url: str, headers: dict[str, str], path: Path) -> dict:
    answer = httpx.post(
        f"{url}/api/v1/submissions",
        headers=headers,
        data={"assignment": "sequences-and-attention"},
        files={"file": (path.name, path.read_bytes())},
        timeout=60,
    )
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


@pytest.mark.slow
@needs_sandbox
@needs_initdb
def test_a_database_restart_under_serve_loses_no_hand_in_and_stops_no_worker(tmp_path, private_postgres):
    import psycopg

    home = tmp_path / "home"
    home.mkdir()
    copy = course_copy(home)
    env = commands_env(home)
    log = home / "serve.log"
    with serve(copy, env, log, workers=2, options=["--database-url", private_postgres.url]) as site:
        token = httpx.post(
            f"{site.url}/api/v1/token", data={"username": "student", "password": site.passwords["student"]}, timeout=60
        ).json()["token"]
        headers = {"Authorization": f"Token {token}"}
        browser = httpx.Client(base_url=site.url, timeout=60)  # a student signed in on the pages
        browser.get("/accounts/login/")
        signed_in = browser.post(
            "/accounts/login/",
            data={
                "username": "student",
                "password": site.passwords["student"],
                "csrfmiddlewaretoken": browser.cookies["csrftoken"],
            },
        )
        assert signed_in.status_code == 302, signed_in.text
        before = _graded(site.url, headers, _hand_in(site.url, headers, PARTIAL))
        assert before["state"] == "graded", before

        # A hand-in whose grading the restart interrupts: the server stops while a worker grades it.
        interrupted = _hand_in(site.url, headers, CORRECT)
        deadline = time.monotonic() + WAIT
        while interrupted["state"] == "queued" and time.monotonic() < deadline:
            time.sleep(0.05)
            interrupted = httpx.get(f"{site.url}/api/v1/submissions/{interrupted['id']}", headers=headers).json()
        private_postgres.stop()
        down = httpx.get(f"{site.url}/api/v1/assignments", headers=headers, timeout=60)
        page = browser.get("/assignments/")
        private_postgres.start()
        assert down.status_code == 503 and int(down.headers["Retry-After"]) > 0, down.text
        assert "cannot reach its database" in down.json()["error"]
        assert page.status_code == 503 and page.headers["Retry-After"] and "Back in a moment" in page.text

        assert _graded(site.url, headers, interrupted)["state"] == "graded"

        # A worker killed: serve starts another in its place, which grades the next hand-in.
        waiting = [line for line in log.read_text().splitlines() if ": waiting for hand-ins" in line]
        killed = int(waiting[0].split(":")[1])
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + WAIT
        while "started again" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        after = _graded(site.url, headers, _hand_in(site.url, headers, PARTIAL))
        assert after["state"] == "graded", after
        said = log.read_text()
    with psycopg.connect(private_postgres.url) as connection:
        jobs = connection.execute("SELECT state, COUNT(*) FROM service_job GROUP BY state").fetchall()
        attempts = connection.execute("SELECT DISTINCT attempts FROM service_job").fetchall()
        graded_correct = connection.execute(
            "SELECT COUNT(*) FROM service_job WHERE id = %s AND state = 'graded'", (interrupted["id"],)
        ).fetchone()
    assert dict(jobs) == {"graded": 3} and graded_correct == (1,)
    assert attempts == [(1,)]  # the restart's interruption is the machine's: no attempt of the job's spent on it
    assert "the database cannot be reached" in said  # each worker's warning, one line a try
    assert "internal error" not in said  # no worker died of the restart
    assert said.count("ended (exit code") == 1 and f"(process {killed}) ended (exit code -9)" in said  # the one killed


def test_a_worker_started_while_the_database_is_away_says_so_in_one_line(tmp_path):
    from .served import autograder

    nowhere = f"postgresql://nobody@127.0.0.1:{free_port()}/gradebook"
    home = tmp_path / "home"
    home.mkdir()
    started = autograder(
        "--course", course_copy(home), "worker", "--once", "--database-url", nowhere, env=commands_env(home)
    )
    assert started.returncode == 2 and started.stdout == ""
    assert (
        started.stderr.startswith("autograder: cannot reach the database (") and "internal error" not in started.stderr
    )
    assert started.stderr.rstrip().endswith("no job was taken") and len(started.stderr.splitlines()) == 1


class _Process:
    """A worker process as ``Workers`` sees it: running until ``end()``."""

    count = 0

    def __init__(self):
        _Process.count += 1
        self.pid, self.returncode = 1000 + _Process.count, None

    def poll(self):
        return self.returncode

    def end(self, code: int = 2) -> None:
        self.returncode = code


def test_serve_replaces_a_worker_that_ends_and_a_crash_loop_waits_longer_each_time(caplog):
    from service.server import Workers

    workers = Workers(_Process, 2)  # not started: looked at by hand, at the times given
    first, second = workers.processes
    workers.look(0.0)
    workers.look(5.0)
    assert workers.processes == [first, second] and workers.due == [None, None]  # both run: nothing to do
    first.end()
    waits = []
    now = 10.0
    for _ in range(8):  # a worker that ends as soon as it starts (its database is away, say)
        workers.look(now)
        waits.append(workers.due[0] - now)
        now = workers.due[0]
        workers.look(now)
        assert workers.processes[0] is not first and workers.processes[1] is second
        first = workers.processes[0]
        first.end()
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    workers.look(now)  # noted: a replacement is due in 60 s
    now = workers.due[0]
    workers.look(now)
    workers.look(now + Workers.STEADY)  # the replacement ran a minute: the next end waits FIRST again
    workers.processes[0].end()
    workers.look(now + Workers.STEADY + 1)
    assert workers.due[0] - (now + Workers.STEADY + 1) == Workers.FIRST
    assert "grading worker 1 (process" in caplog.text and "another starts in 60 s" in caplog.text
    assert "grading worker 2" not in caplog.text
