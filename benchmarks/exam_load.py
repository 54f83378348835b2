"""Benchmark: an exam taken online by a whole class at once (README "Exams"; issue #53).

    python benchmarks/exam_load.py [--students 300] [--seconds 60] [--questions 10] [--database-url URL]
    python benchmarks/exam_load.py --students 2000 --start-within 10 [--minutes 2] [--database-url URL]

Starts `autograder serve` on a copy of the shipped course with an exam built for --students new
students (--questions check questions and one open question each). Without --start-within, the
exam is open now and every student starts within --seconds of the first (evenly spread). With
--start-within, the start is synchronised, as when a proctor says "begin": the exam opens a little
later (--lead seconds), every student comes to its waiting room before then, waits the seconds the
room's page gives (the server's clock) and starts within --start-within seconds of the opening, one
request each, as the room's page does.

Each student then answers as a student does: a choice per check question (changing one of them
once), the open question's text in three growing saves, a second or two apart, one reload of the
page; one in ten switches to a second device (a session of its own), one in ten loses the
connection during a save (the request dropped unanswered) and sends it again, as the page does.
With --start-within, one in ten never submits: the time limit (--minutes) ends their attempt, and a
save they try after it, on the server's clock, must be refused; the others submit.

The requests go through one pool of --connections connections, as a proxy in front of the site
would send them. Checked at the end: no request failed, no answer lost (every attempt's answers on
the server, read back through its state endpoint, are the last ones sent), and with --start-within
every time limit enforced to the second on the server's clock (each deadline its start plus the
limit, those never submitted ended at it, no answer saved after an end) and the attempts graded
after the end (the staff's grading, timed). Reports each request's time as the student's client
measured it (median, 95th percentile, worst) as Markdown for docs/explanation/performance.md. Goals
on the 2-core machine: p95 of a save under 0.3 s (0.5 s at a synchronised start), p95 of a start
under 2 s, nothing failed, nothing lost.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
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

import httpx

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


def start(course: Path, port: int, database_url: str | None, log: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "autograder",
        "--course",
        str(course),
        "serve",
        "--port",
        str(port),
        "--workers",
        "0",
    ]
    if database_url:
        command += ["--database-url", database_url]
    # Into a file, not a pipe: waitress's and Django's warnings under load would fill a pipe no one
    # reads, and a full pipe blocks every thread that logs.
    with log.open("w") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"the site never started listening: {log.read_text()[-500:]}") from None
            time.sleep(0.2)


def accounts(
    course: Path, names: list[str], database_url: str | None, opens_in: float = -60, minutes: float = 60
) -> tuple[dict[str, str], dict[str, str]]:
    """The students, made straight in the service's database, each signed in (a session of theirs,
    and a second one, for a second device): signing in is not what is measured, and 2,000 password
    checks would be most of the run. The exam opens ``opens_in`` seconds from now."""
    from service.settings import configure

    configure(course, database_url)
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.utils import timezone

    from gradebook.models import Student
    from service.accounts.models import Member
    from service.exams.models import OnlineExam

    now = timezone.now()
    OnlineExam.objects.create(
        name="midterm",
        opens_at=now + timedelta(seconds=opens_in),
        closes_at=now + timedelta(hours=2),
        minutes=minutes,
        results=OnlineExam.AT_SUBMIT,
    )
    sessions: tuple[dict[str, str], dict[str, str]] = ({}, {})
    for name in names:
        user = User.objects.create_user(name)  # no password: the session is made here
        Member.objects.create(user=user, role=Member.STUDENT, student=Student.objects.create(student_id=name))
        for device in sessions:
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            device[name] = session.session_key
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
        default_factory=lambda: {"start": [], "first page": [], "waiting room": [], "save": [], "reload": []}
    )
    errors: list[str] = field(default_factory=list)
    dropped: int = 0  # saves dropped unanswered on purpose (a lost connection), then sent again
    late_refused: int = 0  # saves after the time limit, refused as they must be
    second_devices: int = 0


class Device:
    """A student's browser: its session, its CSRF cookie, its requests through the shared pool."""

    def __init__(self, client: httpx.AsyncClient, session: str) -> None:
        self.client, self.session, self.csrf = client, session, ""

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        cookie = f"sessionid={self.session}" + (f"; csrftoken={self.csrf}" if self.csrf else "")
        return {"Cookie": cookie, **(extra or {})}

    def _keep(self, response: httpx.Response) -> httpx.Response:
        self.csrf = response.cookies.get("csrftoken") or self.csrf
        return response

    async def get(self, path: str) -> httpx.Response:
        return self._keep(await self.client.get(path, headers=self._headers()))

    async def post(self, path: str, data: dict[str, str], json: bool = False) -> httpx.Response:
        extra = {"X-CSRFToken": self.csrf} | ({"Accept": "application/json"} if json else {})
        return self._keep(await self.client.post(path, data=data, headers=self._headers(extra)))


async def timed(tally: Tally, what: str, request) -> httpx.Response:
    before = time.perf_counter()
    response = await request
    tally.timings[what].append(time.perf_counter() - before)
    return response


def expect(tally: Tally, name: str, what: str, response: httpx.Response, status: int, text: str = "") -> bool:
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
    client: httpx.AsyncClient, name: str, sessions: tuple[str, str], plan: Plan, tally: Tally, synchronised: bool
) -> None:
    await asyncio.sleep(plan.arrive)
    device = Device(client, sessions[0])
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
        started = await timed(tally, "start", device.post("/exams/midterm/", {}))
        first = await timed(tally, "first page", device.get("/exams/midterm/"))
    except httpx.HTTPError as exc:
        tally.errors.append(f"{name}: start failed ({type(exc).__name__})")
        return
    if not (expect(tally, name, "start", started, 302) and expect(tally, name, "first page", first, 200, 'id="clock"')):
        return
    pace = random.Random(name + "pace")
    for index, (position, value) in enumerate(plan.saves):
        await asyncio.sleep(pace.uniform(0.5, 2.0))  # reading, choosing, typing
        try:
            if index == plan.reload_at:
                expect(tally, name, "a reload", await timed(tally, "reload", device.get("/exams/midterm/")), 200)
            if index == plan.second_device_at:  # the rest from another device: its own session
                device = Device(client, sessions[1])
                tally.second_devices += 1
                expect(tally, name, "the second device's page", await device.get("/exams/midterm/"), 200, 'id="clock"')
            data = {"position": str(position), "value": value}
            if index == plan.drop_at:  # the connection lost mid-save: unanswered, then sent again
                try:
                    await asyncio.wait_for(device.post("/exams/midterm/answer", data, json=True), timeout=0.002)
                except TimeoutError:
                    tally.dropped += 1
                await asyncio.sleep(pace.uniform(1.0, 3.0))
            answer = await timed(tally, "save", device.post("/exams/midterm/answer", data, json=True))
        except httpx.HTTPError as exc:
            tally.errors.append(f"{name}: save of q{position} failed ({type(exc).__name__})")
            continue
        expect(tally, name, f"the save of q{position}", answer, 200, '"saved"')
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
    except httpx.HTTPError as exc:
        tally.errors.append(f"{name}: the end failed ({type(exc).__name__})")


async def run(
    url: str,
    sessions: tuple[dict[str, str], dict[str, str]],
    plans: dict[str, Plan],
    connections: int,
    synchronised: bool,
) -> tuple[Tally, int]:
    tally = Tally()
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(base_url=url, timeout=120, follow_redirects=False, limits=limits) as client:
        await asyncio.gather(
            *(
                student(client, name, (sessions[0][name], sessions[1][name]), plan, tally, synchronised)
                for name, plan in plans.items()
            )
        )
        lost = 0
        for name, plan in plans.items():
            state = (await Device(client, sessions[0][name]).get("/exams/midterm/state")).json()
            expected = {str(position): value for position, value in plan.saves}
            lost += state.get("answers") != expected
    return tally, lost


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
    parser.add_argument("--minutes", type=float, default=2.0, help="with --start-within: the exam's time limit")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64, help="the pool's connections (a proxy's)")
    parser.add_argument("--database-url", default=None)
    options = parser.parse_args()
    synchronised = options.start_within is not None
    # Everyone in the waiting room before the opening: arrivals over the lead's first two thirds.
    lead = options.lead or max(20.0, options.students / 50)
    home = Path(tempfile.mkdtemp(prefix="gradewright-exam-load-"))
    server = None
    try:
        course, names = course_copy(home, options.students, options.questions)
        server = start(course, port := free_port(), options.database_url, home / "server.log")
        saves = plans_of(course, names)
        made = time.monotonic()
        minutes = options.minutes if synchronised else 60
        sessions = accounts(course, names, options.database_url, lead if synchronised else -60, minutes)
        lead -= time.monotonic() - made  # the accounts took some of it: the opening is fixed
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
        began = time.monotonic()
        url = f"http://127.0.0.1:{port}"
        tally, lost = asyncio.run(run(url, sessions, plans, options.connections, synchronised))
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
            f"{options.students} students {how} and saved {len(tally.timings['save'])} answers in {took:.0f} s "
            f"({'PostgreSQL' if options.database_url else 'SQLite'}, one `autograder serve`, 8 threads, "
            f"{options.connections} connections)\n"
        )
        print("| request | count | median | p95 | worst |\n|---|---|---|---|---|")
        for label, what in (
            ("the waiting room's page", "waiting room"),
            ("start (the one post)", "start"),
            ("the exam's first page", "first page"),
            ("save an answer", "save"),
            ("a reload", "reload"),
        ):
            if tally.timings[what]:
                print(describe(label, tally.timings[what]))
        print(
            f"\nfailed: {len(tally.errors)}; attempts whose answers on the server differ from the last sent: {lost}; "
            f"second devices: {tally.second_devices}; saves dropped unanswered and sent again: {tally.dropped}"
        )
        if synchronised:
            print(
                f"never submitted: {len(timed_out)}, each ended by its time limit, a save after it refused: "
                f"{tally.late_refused}; faults of the server's clock: {len(faults)}; "
                f"graded after the end: {graded} attempts in {grading:.1f} s"
            )
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
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
