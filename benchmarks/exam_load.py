"""Benchmark: an exam taken online by a whole class at once (README "Exams"; issue #53).

    python benchmarks/exam_load.py [--students 300] [--seconds 60] [--questions 10] [--database-url URL]
    python benchmarks/exam_load.py --students 2000 --start-within 10 [--minutes 5] [--sites 2] [--threads 2] [--database-url URL]

Starts --sites `autograder serve --workers 0 --threads N` processes (the scaling page's layout on one
machine: 2 of 2 threads on 2 cores) on a
copy of the shipped course with an exam built for --students new students (--questions check
questions and one open question each). Without --start-within, the exam is open now and every
student starts within --seconds of the first (evenly spread). With --start-within, the start is
synchronised, as when a proctor says "begin": the exam opens a little later (--lead seconds), every
student comes to its waiting room before then, waits the seconds the room's page gives (the server's
clock) and starts within --start-within seconds of the opening, one request each, as the room's page
does.

Each student then answers as a student does: a choice per check question (changing one of them
once), the open question's text in three growing saves, --pace seconds apart on average (with
--start-within, by default spread over three quarters of the time limit, at most 15 s apart: a
student saves when they choose or stop typing, every 15 to 30 s over an exam; the default limit,
5 minutes, is the shortest at which the saves are 15 s apart: a shorter one crowds a student's 14
saves closer, 6.4 s apart at 2 minutes, a stress rather than a student; without --start-within 0.5
to 2 s, a stress too), one reload of the page; one in ten switches to a second device (a session of its own), one
in ten loses the connection during a save (the request dropped unanswered) and sends it again, as the
page does. With --start-within, one in ten never submits: the time limit (--minutes) ends their
attempt, and a save they try after it, on the server's clock, must be refused; the others submit.

The requests go through one pool of --connections keep-alive connections, spread over the sites as a
proxy's round robin spreads them (no proxy process: its time would be the client's). The client is a
small HTTP/1.1 client on asyncio's streams (a request is a few bytes written and a reply read by its
Content-Length), so that it takes little of the machine it shares with the sites; its own CPU time,
the sites', the database's and the whole machine's are reported. Checked at the end: no request
failed, no answer lost (every attempt's answers on the server, read back through its state endpoint,
are the last ones it acknowledged, and, counted apart, all those planned), and with --start-within every time limit enforced to the second on the
server's clock (each deadline its start plus the limit, those never submitted ended at it, no answer
saved after an end) and the attempts graded after the end (the staff's grading, timed). Reports each
request's time as the student's client measured it (median, 95th percentile, worst) as Markdown for
docs/explanation/performance.md. Goals on the 2-core machine: p95 of a save under 0.3 s (0.5 s at a
synchronised start), p95 of a start under 2 s, nothing failed, nothing lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def course_copy(home: Path, students: int, questions: int) -> tuple[Path, list[str]]:
    sys.path.insert(0, str(ROOT))
    from course.exams.build import build_exam

    course = home / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    shutil.copytree(ROOT / "assignments", course / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    names = [f"exam{n:04d}" for n in range(students)]
    roster = home / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"{n},Student {n},\n" for n in names), encoding="utf-8")
    (course / "exams").mkdir()
    build_exam(
        roster,
        course / "exams" / "midterm",
        seed=3,
        questions=questions,
        open_questions=1,
        lessons=[course / "lesson_data"],
    )
    with (course / "course.toml").open("a") as manifest:
        manifest.write('exams = ["exams/midterm"]\n')
    return course, names


def start_sites(
    course: Path, count: int, database_url: str | None, home: Path, threads: int = 2
) -> list[tuple[int, subprocess.Popen]]:
    """``count`` site processes, each `autograder serve --workers 0 --threads N` on a port of its own (the
    first to start migrates the database, the others wait for it), once each one listens."""
    sites = []
    for number in range(count):
        port = free_port()
        command = [sys.executable, "-m", "autograder", "--course", str(course), "serve", "--port", str(port)]
        command += ["--workers", "0", "--threads", str(threads)] + (
            ["--database-url", database_url] if database_url else []
        )
        # Into a file, not a pipe: waitress's and Django's warnings under load would fill a pipe no one
        # reads, and a full pipe blocks every thread that logs.
        with (home / f"site{number + 1}.log").open("w") as output:
            sites.append((port, subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True)))
    deadline = time.monotonic() + 180
    for number, (port, server) in enumerate(sites):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    log = (home / f"site{number + 1}.log").read_text()[-500:]
                    raise SystemExit(f"site {number + 1} never started listening: {log}") from None
                time.sleep(0.2)
    return sites


def accounts(
    course: Path, names: list[str], database_url: str | None, opens_in: float = -60, minutes: float = 60
) -> tuple[dict[str, str], dict[str, str]]:
    """The students, made straight in the service's database in a few bulk inserts, each signed in (a
    session of theirs, and a second one, for a second device): signing in is not what is measured,
    and 2,000 password checks would be most of the run. The exam opens ``opens_in`` seconds from now."""
    from service.settings import configure

    configure(course, database_url)
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.utils import timezone
    from django.utils.crypto import get_random_string

    from gradebook.models import Student
    from service.accounts.models import Member
    from service.exams.models import OnlineExam

    now = timezone.now()
    users = User.objects.bulk_create([User(username=name, password=make_password(None)) for name in names])
    users = list(User.objects.filter(username__in=names))  # with their ids, on every database
    students = {s.student_id: s for s in Student.objects.bulk_create([Student(student_id=n) for n in names])}
    students = {s.student_id: s for s in Student.objects.filter(student_id__in=names)}
    Member.objects.bulk_create(
        [Member(user=user, role=Member.STUDENT, student=students[user.username]) for user in users]
    )
    store, expires = SessionStore(), now + timedelta(days=1)
    sessions: tuple[dict[str, str], dict[str, str]] = ({}, {})
    rows = []
    for user in users:
        data = {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
        for device in sessions:
            device[user.username] = get_random_string(32, "abcdefghijklmnopqrstuvwxyz0123456789")
            rows.append(
                Session(session_key=device[user.username], session_data=store.encode(data), expire_date=expires)
            )
    Session.objects.bulk_create(rows, batch_size=1000)
    OnlineExam.objects.create(
        name="midterm",
        opens_at=timezone.now() + timedelta(seconds=opens_in),
        closes_at=now + timedelta(hours=2),
        minutes=minutes,
        results=OnlineExam.AT_SUBMIT,
    )
    return sessions


def plans_of(course: Path, names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """What each student saves, in order: (position, value); the last per position must survive."""
    from course.exams.grade import load_key

    key = load_key(course / "exams" / "midterm")
    variants = {v.student.student_id: v for v in key.variants}
    words = ["Attention", "compares", "every", "pair", "of", "positions,", "so", "memory", "grows", "as", "n^2."]
    plans = {}
    for name in names:
        chance = random.Random(name)
        saves: list[tuple[int, str]] = []
        choices = [q for q in variants[name].questions if q.kind == "choice"]
        for question in variants[name].questions:
            if question.kind == "choice":
                saves.append((question.position, chance.choice(list(question.letters))))
            else:
                saves += [(question.position, " ".join(words[:n])) for n in (3, 7, len(words))]
        again = chance.choice(choices)  # a student changes their mind once
        saves.append((again.position, chance.choice(list(again.letters))))
        plans[name] = saves
    return plans


@dataclass
class Tally:
    timings: dict[str, list[float]] = field(
        default_factory=lambda: {"start": [], "waiting room": [], "save": [], "reload": []}
    )
    errors: list[str] = field(default_factory=list)
    dropped: int = 0  # saves dropped unanswered on purpose (a lost connection), then sent again
    late_refused: int = 0  # saves after the time limit, refused as they must be
    second_devices: int = 0
    acknowledged: dict[str, dict[str, str]] = field(default_factory=dict)  # each student's saves answered "saved"


class Reply:
    """A response as the client read it: its status, its cookies' values, its body."""

    __slots__ = ("status_code", "cookies", "body")

    def __init__(self, status: int, cookies: dict[str, str], body: bytes) -> None:
        self.status_code, self.cookies, self.body = status, cookies, body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> dict:
        return json.loads(self.body)


class RequestFailed(Exception):
    """No answer: the connection closed, or none came within the client's time."""


class Pool:
    """Keep-alive HTTP/1.1 connections to the sites, at most ``size``, the n-th to the n-th site in
    turn: a request takes whichever is free, so the requests spread over the sites as a proxy's round
    robin spreads them. A connection whose request was abandoned (a dropped save) is closed, not
    reused: its answer would be read as the next request's."""

    def __init__(self, ports: list[int], size: int) -> None:
        self.ports, self.size, self.opened = ports, size, 0
        self.idle: asyncio.LifoQueue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.LifoQueue()

    async def _take(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            try:
                return await asyncio.open_connection("127.0.0.1", self.ports[self.opened % len(self.ports)])
            except BaseException:  # refused, or the request abandoned while connecting
                self.opened -= 1
                raise
        return await self.idle.get()

    async def request(self, method: str, path: str, headers: str, body: bytes = b"") -> Reply:
        reader, writer = await self._take()
        kept = False
        try:
            async with asyncio.timeout(120):
                length = f"Content-Length: {len(body)}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                writer.write(
                    f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}{length if method == 'POST' else ''}\r\n".encode()
                    + body
                )
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                status, cookies, size, chunked, closing = int(head[0].split(" ", 2)[1]), {}, 0, False, False
                for line in head[1:]:
                    name, _, value = line.partition(":")
                    name = name.lower()
                    if name == "content-length":
                        size = int(value)
                    elif name == "set-cookie":
                        cookie, _, cookie_value = value.strip().partition(";")[0].partition("=")
                        cookies[cookie] = cookie_value
                    elif name == "transfer-encoding":
                        chunked = "chunked" in value
                    elif name == "connection":
                        closing = "close" in value.lower()
                if chunked:
                    parts = []
                    while (chunk := int((await reader.readline()).split(b";")[0], 16)) > 0:
                        parts.append(await reader.readexactly(chunk + 2))
                    await reader.readline()
                    content = b"".join(part[:-2] for part in parts)
                else:
                    content = await reader.readexactly(size) if size else b""
            kept = not closing
            return Reply(status, cookies, content)
        except (OSError, asyncio.IncompleteReadError, ValueError, TimeoutError) as exc:
            raise RequestFailed(type(exc).__name__) from None
        finally:
            if kept:
                self.idle.put_nowait((reader, writer))
            else:
                writer.close()
                self.opened -= 1

    async def close(self) -> None:
        while not self.idle.empty():
            self.idle.get_nowait()[1].close()


class Device:
    """A student's browser: its session, its CSRF cookie, its requests through the shared pool."""

    def __init__(self, pool: Pool, session: str) -> None:
        self.pool, self.session, self.csrf = pool, session, ""

    def _headers(self, extra: str = "") -> str:
        cookie = f"sessionid={self.session}" + (f"; csrftoken={self.csrf}" if self.csrf else "")
        return f"Cookie: {cookie}\r\n{extra}"

    def _keep(self, response: Reply) -> Reply:
        self.csrf = response.cookies.get("csrftoken") or self.csrf
        return response

    async def get(self, path: str) -> Reply:
        return self._keep(await self.pool.request("GET", path, self._headers()))

    async def post(self, path: str, data: dict[str, str], json: bool = False) -> Reply:
        extra = f"X-CSRFToken: {self.csrf}\r\n" + ("Accept: application/json\r\n" if json else "")
        body = urlencode(data).encode()
        return self._keep(await self.pool.request("POST", path, self._headers(extra), body))


async def timed(tally: Tally, what: str, request) -> Reply:
    before = time.perf_counter()
    response = await request
    tally.timings[what].append(time.perf_counter() - before)
    return response


def expect(tally: Tally, name: str, what: str, response: Reply, status: int, text: str = "") -> bool:
    if response.status_code != status or text not in response.text:
        tally.errors.append(f"{name}: {what} answered {response.status_code} {response.text[:120]!r}")
        return False
    return True


@dataclass
class Plan:
    saves: list[tuple[int, str]]
    arrive: float  # seconds after the run's beginning
    after_opening: float  # with a synchronised start: seconds after the opening it starts
    reload_at: int
    second_device_at: int | None
    drop_at: int | None
    submits: bool


def plan_for(name: str, saves: list[tuple[int, str]], arrive: float, within: float, synchronised: bool) -> Plan:
    chance = random.Random(name + "plan")
    return Plan(
        saves=saves,
        arrive=arrive,
        after_opening=chance.uniform(0, within),
        reload_at=chance.randrange(len(saves)),
        second_device_at=chance.randrange(len(saves)) if chance.random() < 0.1 else None,
        drop_at=chance.randrange(len(saves)) if chance.random() < 0.1 else None,
        submits=not synchronised or chance.random() >= 0.1,
    )


async def student(
    pool: Pool,
    name: str,
    sessions: tuple[str, str],
    plan: Plan,
    tally: Tally,
    synchronised: bool,
    pace: float,
    budget: float | None,
) -> None:
    await asyncio.sleep(plan.arrive)
    device = Device(pool, sessions[0])
    try:
        if synchronised:
            # The waiting room: its page gives the milliseconds to the opening, on the server's clock.
            room = await timed(tally, "waiting room", device.get("/exams/midterm/"))
            waiting = re.search(r'data-waiting-ms="(\d+)"', room.text)
            if not expect(tally, name, "the waiting room", room, 200, 'id="waiting-room"') or waiting is None:
                return
            await asyncio.sleep(int(waiting.group(1)) / 1000 + plan.after_opening)
        else:
            expect(tally, name, "the exam's page", await device.get("/exams/midterm/"), 200)
        # One request: the start's answer is the exam's page.
        started = await timed(tally, "start", device.post("/exams/midterm/", {}))
    except RequestFailed as exc:
        tally.errors.append(f"{name}: start failed ({exc})")
        return
    if not expect(tally, name, "start", started, 200, 'id="clock"'):
        return
    chance = random.Random(name + "pace")
    waits = [chance.uniform(0.4 * pace, 1.6 * pace) for _ in plan.saves]  # reading, choosing, typing
    if budget is not None and sum(waits) > budget:  # every save within the time limit: a student's last is
        waits = [wait * budget / sum(waits) for wait in waits]
    for index, (position, value) in enumerate(plan.saves):
        await asyncio.sleep(waits[index])
        try:
            if index == plan.reload_at:
                expect(tally, name, "a reload", await timed(tally, "reload", device.get("/exams/midterm/")), 200)
            if index == plan.second_device_at:  # the rest from another device: its own session
                device = Device(pool, sessions[1])
                tally.second_devices += 1
                expect(tally, name, "the second device's page", await device.get("/exams/midterm/"), 200, 'id="clock"')
            data = {"position": str(position), "value": value}
            if index == plan.drop_at:  # the connection lost mid-save: unanswered, then sent again
                try:
                    await asyncio.wait_for(device.post("/exams/midterm/answer", data, json=True), timeout=0.002)
                except (TimeoutError, RequestFailed):
                    tally.dropped += 1
                await asyncio.sleep(chance.uniform(1.0, 3.0))
            answer = await timed(tally, "save", device.post("/exams/midterm/answer", data, json=True))
        except RequestFailed as exc:
            tally.errors.append(f"{name}: save of q{position} failed ({exc})")
            continue
        if expect(tally, name, f"the save of q{position}", answer, 200, '"saved"'):
            tally.acknowledged.setdefault(name, {})[str(position)] = value
    try:
        if plan.submits:
            expect(tally, name, "submit", await device.post("/exams/midterm/submit", {}), 302)
            return
        # Never submitted: wait for the time limit by the server's clock, then try one more save.
        state = (await device.get("/exams/midterm/state")).json()
        await asyncio.sleep(state["seconds_left"] + 1.5)
        position, value = plan.saves[0]
        late = await device.post("/exams/midterm/answer", {"position": str(position), "value": value}, json=True)
        if expect(tally, name, "a save after the time limit", late, 409, "time limit"):
            tally.late_refused += 1
    except RequestFailed as exc:
        tally.errors.append(f"{name}: the end failed ({exc})")


async def warm_up(ports: list[int], session: str) -> None:
    """Each site asked for the exam's page once, as a site that has been up a while has been (the key
    read, the templates compiled), before the students come."""
    for port in ports:
        warm = Pool([port], 1)
        await Device(warm, session).get("/exams/midterm/")
        await warm.close()


def cpu_seconds(pids: list[int]) -> float:
    """The processes' CPU time so far (every thread's, user and system), in seconds; 0 for one gone."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def machine_busy() -> float:
    """Every core's busy seconds so far, whoever used them (/proc/stat: all but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Usage:
    """CPU seconds by whom over a stretch of the run, and the load average as it ended."""

    client: float = 0.0
    sites: float = 0.0
    database: float = 0.0
    machine: float = 0.0
    wall: float = 0.0
    load: float = 0.0

    @classmethod
    def now(cls, site_pids: list[int], database_url: str | None) -> Usage:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return cls(
            own.ru_utime + own.ru_stime,
            cpu_seconds(site_pids),
            cpu_seconds(database_pids(database_url)),
            machine_busy(),
            time.monotonic(),
            os.getloadavg()[0],
        )

    def since(self, before: Usage) -> Usage:
        return Usage(
            self.client - before.client,
            self.sites - before.sites,
            self.database - before.database,
            self.machine - before.machine,
            self.wall - before.wall,
            self.load,
        )

    def said(self, label: str) -> str:
        others = max(0.0, self.machine - self.client - self.sites - self.database)
        return (
            f"| {label} | {self.wall:.0f} s | {self.client:.1f} s | {self.sites:.1f} s | {self.database:.1f} s "
            f"| {others:.1f} s | {self.machine / self.wall:.2f} of 2 | {self.load:.1f} |"
        )


def database_pids(database_url: str | None) -> list[int]:
    """The PostgreSQL server's processes serving the benchmark's database now (the sites' connections,
    kept open: Django's CONN_MAX_AGE), found by their titles (``postgres: ... USER DATABASE ...``)."""
    if not database_url:
        return []
    name = f" {database_url.rsplit('/', 1)[1].split('?')[0]} "
    found = []
    for folder in Path("/proc").glob("[0-9]*"):
        try:
            title = (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith("postgres: ") and name in title:
            found.append(int(folder.name))
    return found


async def run(
    ports: list[int],
    sessions: tuple[dict[str, str], dict[str, str]],
    plans: dict[str, Plan],
    connections: int,
    synchronised: bool,
    pace: float,
    budget: float | None,
    watch: Watch,
) -> tuple[Tally, int, int]:
    tally = Tally()
    pool = Pool(ports, connections)
    students = asyncio.gather(
        *(
            student(pool, name, (sessions[0][name], sessions[1][name]), plan, tally, synchronised, pace, budget)
            for name, plan in plans.items()
        )
    )
    await asyncio.gather(students, watch.marks())
    lost = short = 0
    for name, plan in plans.items():
        state = (await Device(pool, sessions[0][name]).get("/exams/midterm/state")).json()
        # Lost: an answer the server acknowledged that is not there; short: not every answer planned was
        # saved (a save refused after the time limit, because the requests before it queued past it).
        answers = state.get("answers") or {}  # none: never started (said among the failures)
        lost += answers != tally.acknowledged.get(name, {})
        short += answers != {str(position): value for position, value in plan.saves}
    await pool.close()
    return tally, lost, short


@dataclass
class Watch:
    """The CPU used at the run's marks: its beginning, the opening, the end of the starts (the opening,
    --start-within and 5 s more), and its end."""

    site_pids: list[int]
    database_url: str | None
    opening: float | None  # when the exam opens (time.monotonic()'s)
    within: float
    marks_at: list[Usage] = field(default_factory=list)

    def mark(self) -> None:
        self.marks_at.append(Usage.now(self.site_pids, self.database_url))

    async def marks(self) -> None:
        self.mark()
        if self.opening is not None:
            await asyncio.sleep(max(0.0, self.opening - time.monotonic()))
            self.mark()
            await asyncio.sleep(self.within + 5)
            self.mark()


def the_clock_held(minutes: float, timed_out: list[str]) -> list[str]:
    """Every attempt's deadline its start plus the time limit, to the microsecond; those never
    submitted ended at it (by the time limit), and no answer saved after any attempt's end."""
    from service.exams.models import ExamAnswer, ExamAttempt

    faults = []
    for attempt in ExamAttempt.objects.filter(exam="midterm").select_related("student"):
        if attempt.ends_at - attempt.started_at != timedelta(minutes=minutes):
            faults.append(
                f"{attempt.student.student_id}: deadline {attempt.ends_at} for a start at {attempt.started_at}"
            )
        if attempt.student.student_id in timed_out and (
            attempt.ended_at != attempt.ends_at or attempt.ended_reason != ExamAttempt.TIME_LIMIT
        ):
            faults.append(f"{attempt.student.student_id}: ended {attempt.ended_at} ({attempt.ended_reason})")
        if attempt.ended_at and ExamAnswer.objects.filter(attempt=attempt, saved_at__gt=attempt.ended_at).exists():
            faults.append(f"{attempt.student.student_id}: an answer saved after the end")
    return faults


def grade(course: Path) -> tuple[int, float]:
    """The staff's grading of every attempt after the end (the worker's job, run here), timed."""
    from service.exams.sessions import grade_online

    began = time.perf_counter()
    graded = grade_online("midterm", course / "exams" / "midterm")
    return len(graded.results), time.perf_counter() - began


def p95(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[max(0, int(round(0.95 * len(ordered))) - 1)] if ordered else 0.0


def describe(label: str, seconds: list[float]) -> str:
    if not seconds:
        return f"| {label} | 0 | | | |"
    ordered = sorted(seconds)
    return (
        f"| {label} | {len(ordered)} | {statistics.median(ordered) * 1000:.0f} ms | {p95(ordered) * 1000:.0f} ms "
        f"| {ordered[-1] * 1000:.0f} ms |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60, help="without --start-within: the starts' spread")
    parser.add_argument("--start-within", type=float, default=None, help="a synchronised start, within these seconds")
    parser.add_argument("--lead", type=float, default=None, help="seconds from the run's beginning to the opening")
    parser.add_argument("--minutes", type=float, default=5.0, help="with --start-within: the exam's time limit")
    parser.add_argument("--pace", type=float, default=None, help="seconds between a student's saves, on average")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--sites", type=int, default=2, help="site processes (`autograder serve --workers 0`)")
    parser.add_argument("--threads", type=int, default=2, help="each site's threads (the scaling page's layout)")
    parser.add_argument("--connections", type=int, default=64, help="the pool's connections (a proxy's)")
    parser.add_argument("--database-url", default=None)
    options = parser.parse_args()
    synchronised = options.start_within is not None
    # Everyone in the waiting room before the opening: arrivals over the lead's first two thirds.
    lead = options.lead or max(20.0, options.students / 50)
    minutes = options.minutes if synchronised else 60
    saves_each = options.questions + 1 + 3  # a choice each, one changed, the open answer in three saves
    pace = options.pace or (min(15.0, 0.75 * minutes * 60 / saves_each) if synchronised else 1.25)
    home = Path(tempfile.mkdtemp(prefix="gradewright-exam-load-"))
    sites: list[tuple[int, subprocess.Popen]] = []
    try:
        course, names = course_copy(home, options.students, options.questions)
        sites = start_sites(course, options.sites, options.database_url, home, options.threads)
        saves = plans_of(course, names)
        made = time.monotonic()
        sessions = accounts(course, names, options.database_url, lead if synchronised else -60, minutes)
        asyncio.run(warm_up([port for port, _ in sites], sessions[1][names[0]]))
        lead -= time.monotonic() - made  # the accounts and the warm-up took some of it: the opening is fixed
        if synchronised and lead < 5:
            raise SystemExit("making the accounts took the whole lead: give a longer --lead")
        plans = {
            name: plan_for(
                name,
                saves[name],
                (i * lead * 2 / 3 / len(names)) if synchronised else i * options.seconds / len(names),
                options.start_within or 0,
                synchronised,
            )
            for i, name in enumerate(names)
        }
        site_pids = [server.pid for _, server in sites]
        opening = time.monotonic() + lead if synchronised else None
        watch = Watch(site_pids, options.database_url, opening, options.start_within or 0)
        began = time.monotonic()
        tally, lost, short = asyncio.run(
            run(
                [port for port, _ in sites],
                sessions,
                plans,
                options.connections,
                synchronised,
                pace,
                0.8 * minutes * 60 if synchronised else None,
                watch,
            )
        )
        watch.mark()
        took = time.monotonic() - began
        timed_out = [name for name, plan in plans.items() if not plan.submits]
        faults = the_clock_held(minutes, timed_out) if synchronised else []
        graded, grading = grade(course) if synchronised else (0, 0.0)
        how = (
            f"started within {options.start_within:g} s of the opening (from its waiting room)"
            if synchronised
            else f"started within {options.seconds:g} s of the first"
        )
        print(
            f"{options.students} students {how} and saved {len(tally.timings['save'])} answers in {took:.0f} s, "
            f"{pace:g} s apart on average ({'PostgreSQL' if options.database_url else 'SQLite'}, "
            f"{options.sites} `autograder serve` processes of {options.threads} threads, {options.connections} connections; "
            f"load average {watch.marks_at[0].load:.1f} at the beginning)\n"
        )
        print("| request | count | median | p95 | worst |\n|---|---|---|---|---|")
        for label, what in (
            ("the waiting room's page", "waiting room"),
            ("start (the one post, answered with the exam's page)", "start"),
            ("save an answer", "save"),
            ("a reload", "reload"),
        ):
            if tally.timings[what]:
                print(describe(label, tally.timings[what]))
        print(
            f"\nfailed: {len(tally.errors)}; attempts missing an answer the server acknowledged (lost): {lost}; "
            f"attempts whose answers are not all those planned (a save refused or failed): {short}; "
            f"second devices: {tally.second_devices}; saves dropped unanswered and sent again: {tally.dropped}"
        )
        if synchronised:
            print(
                f"never submitted: {len(timed_out)}, each ended by its time limit, a save after it refused: "
                f"{tally.late_refused}; faults of the server's clock: {len(faults)}; "
                f"graded after the end: {graded} attempts in {grading:.1f} s"
            )
        # CPU seconds by whom (the database's: its processes serving the run's database at each mark, so a
        # connection opened and closed between two marks is not counted; the others': everything else on
        # the machine, other people's work included).
        marks = watch.marks_at
        print(
            "\n| stretch | wall | client CPU | sites' CPU | database's CPU | others' CPU | cores busy | load |"
            "\n|---|---|---|---|---|---|---|---|"
        )
        if len(marks) == 4:
            print(marks[2].since(marks[1]).said("the starts (the opening to 5 s after the last)"))
        print(marks[-1].since(marks[0]).said("the whole run"))
        for error in (tally.errors + faults)[:10]:
            print("  " + error)
        save_goal, start_goal = (0.5, 2.0) if synchronised else (0.3, None)
        missed = []
        if p95(tally.timings["save"]) >= save_goal:
            missed.append(f"p95 of a save {p95(tally.timings['save']):.3f} s (goal < {save_goal} s)")
        if start_goal is not None and p95(tally.timings["start"]) >= start_goal:
            missed.append(f"p95 of a start {p95(tally.timings['start']):.3f} s (goal < {start_goal} s)")
        if synchronised and (tally.late_refused != len(timed_out) or faults or graded != len(names)):
            missed.append("the time limits or the grading")
        if tally.errors or lost or missed:
            raise SystemExit(f"goal missed: {'; '.join(missed) or 'nothing'}, {len(tally.errors)} failed, {lost} lost")
    finally:
        for _, server in sites:
            server.terminate()
        for _, server in sites:
            server.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
