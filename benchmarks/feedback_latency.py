"""Benchmark: from the click on "Hand in" to the feedback shown, in a real browser.

    python benchmarks/feedback_latency.py [--runs 30] [--databases sqlite postgres] [--before REV]

One student alone with a warm worker: `autograder serve --workers 1` on a copy of the shipped
course (SQLite, or a fresh PostgreSQL database at --postgres-url), a student made through the real
commands (`roster import`, `links`, the one-time link's page), signed in in Chromium (Playwright,
Debian's /usr/bin/chromium). Each run hands in a known submission of sequences-and-attention (a
comment of its own added, so it is graded anew, never taken as the same file again) on the
assignment's page; the run's time is from the click's event to the first moment "Score:" is in the
submission page's document, both on the browser's own clock (a script Playwright adds to every
page, before the page's own). Three hand-ins first warm the site and the worker, and each run starts with the
worker idle. Per run, from the job's own times (service 0013_job_times), where the time went:

    click -> received (the upload's request, to the view) -> queued (the hand-in checked and kept)
    -> claimed (the worker woken) -> started (the grading's start-up) -> finished (the grading)
    -> shown (the page's next request for its live part) -> displayed (its answer, in the browser)

With --before REV, that commit too (extracted with `git archive` into a temporary folder), its
runs taken in turn with this checkout's (before, after, before...), so the two meet the same
machine: this machine is shared and its speed changes by the minute, so the ratio is the figure
to trust. An earlier commit's jobs have fewer times (queued, started at its claim, finished).
Prints Markdown for docs/benchmarks.md. Goal: median under 0.6 s, 95th percentile under 1 s.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBMISSION = ROOT / "assignments" / "sequences-and-attention" / "known" / "correct_loops.py"
ASSIGNMENT = "sequences-and-attention"
CHROMIUM = "/usr/bin/chromium"
POSTGRES = "postgresql://gradewright:gradewright@127.0.0.1:5432/postgres"
PASSWORD = "benchmark password 1"
WARM_UP = 3
PER_STUDENT = 25  # hand-ins per student: the service takes 30 an hour from one
STAGES = ["received", "queued", "claimed", "started", "finished", "shown"]
COLUMNS = {
    "received": "received_at",
    "queued": "created_at",
    "claimed": "claimed_at",
    "started": "started_at",
    "finished": "finished_at",
    "shown": "shown_at",
}


# In every page, before its own scripts: the click on "Hand in" (kept across the navigation it
# starts), and the first moment "Score:" is in the document, be it parsed with the page or swapped
# in by htmx.
WATCH = """
document.addEventListener("click", (event) => {
  if (event.target.closest("button") && event.target.closest("button").textContent.includes("Hand in")) {
    sessionStorage.gradewrightClick = String(performance.timeOrigin + performance.now());
  }
}, true);
window.gradewrightScore = null;
new MutationObserver(() => {
  if (window.gradewrightScore === null && document.body && document.body.textContent.includes("Score:")) {
    window.gradewrightScore = performance.timeOrigin + performance.now();
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


@dataclass
class Run:
    seconds: float  # click to feedback shown
    stages: dict[str, float | None]  # each step's seconds


@dataclass
class Site:
    label: str
    tree: Path
    home: Path
    database_url: str | None
    url: str = ""
    server: subprocess.Popen | None = None
    pages: list = field(default_factory=list)  # a signed-in page per student
    links: list[str] = field(default_factory=list)  # the students' one-time links
    runs: list[Run] = field(default_factory=list)
    handed_in: int = 0

    @property
    def course(self) -> Path:
        return self.home / "course"

    def command(self, *args: str, **options) -> subprocess.CompletedProcess:
        env = {key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_DATABASE_URL"}
        env["PYTHONPATH"] = str(self.tree)
        return subprocess.run(
            [sys.executable, "-m", "autograder", *args],
            cwd=self.tree,
            env=env,
            text=True,
            capture_output=True,
            check=True,
            timeout=300,
            **options,
        )

    def database(self) -> list[str]:
        return ["--database-url", self.database_url] if self.database_url else []

    def start(self, students: int) -> None:
        shutil.copytree(ROOT / "lesson_data", self.course / "lesson_data")
        shutil.copytree(ROOT / "assignments", self.course / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "course.toml", self.course)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {key: value for key, value in os.environ.items() if key != "GRADEWRIGHT_DATABASE_URL"}
        env["PYTHONPATH"] = str(self.tree)
        log = (self.home / "serve.log").open("w")
        self.server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "autograder",
                "--course",
                str(self.course),
                "serve",
                "--port",
                str(port),
                "--workers",
                "1",
                *self.database(),
            ],
            cwd=self.tree,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 180
        while "serving " not in (self.home / "serve.log").read_text():
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{self.label}: the service did not start:\n{(self.home / 'serve.log').read_text()}")
            time.sleep(0.2)
        roster = self.home / "roster.csv"
        names = [f"bench{n:02d}" for n in range(students)]
        roster.write_text("student_id,name,email\n" + "".join(f"{n},{n.title()},{n}@example.edu\n" for n in names))
        gradebook = ["--gradebook", str(self.course / ".gradewright" / "gradebook.db")]
        self.command("roster", "import", str(roster), *(self.database() or gradebook))
        links = self.home / "links.csv"
        self.command("--course", str(self.course), "links", "--server", self.url, "--out", str(links), *self.database())
        with links.open() as rows:
            self.links = [row["link"] for row in csv.DictReader(rows)]

    def sign_in(self, browser) -> None:
        for link in self.links:
            context = browser.new_context()
            context.add_init_script(WATCH)
            page = context.new_page()
            page.goto(link)
            page.fill("#id_new_password1", PASSWORD)
            page.fill("#id_new_password2", PASSWORD)
            page.click("text=Set my password")
            page.wait_for_selector("h1:has-text('Assignments')")
            self.pages.append(page)

    def hand_in(self, work: Path) -> tuple[float, int, float]:
        """One hand-in, on the next student's page: (seconds from the click to "Score:", the job's
        id, the moment it was displayed, as a Unix time)."""
        page = self.pages[self.handed_in // PER_STUDENT]
        self.handed_in += 1
        path = work / f"{self.label}-{self.handed_in}" / SUBMISSION.name
        path.parent.mkdir(parents=True)
        path.write_text(SUBMISSION.read_text() + f"\n# hand-in {uuid.uuid4().hex}\n")
        page.goto(f"{self.url}/assignments/{ASSIGNMENT}/")
        page.set_input_files("input[name=notebook]", str(path))
        page.get_by_role("button", name="Hand in").click()
        page.locator("text=Score:").wait_for(timeout=120_000)
        # The browser's own clock (Unix milliseconds): the click's event and the score's first
        # appearance in the document, as WATCH saw them, not when Playwright next looked.
        clicked, shown = page.evaluate("[Number(sessionStorage.gradewrightClick), window.gradewrightScore]")
        job_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
        return (shown - clicked) / 1000, job_id, shown / 1000

    def times(self, job_id: int) -> dict[str, datetime | None]:
        """The job's recorded times, as far as this commit records them."""
        query = "SELECT * FROM service_job WHERE id = %s"
        if self.database_url:
            import psycopg

            with psycopg.connect(self.database_url, autocommit=True) as db:
                cursor = db.execute(query, [job_id])
                row = cursor.fetchone()
                names = [column.name for column in cursor.description or []]
        else:
            with sqlite3.connect(self.course / ".gradewright" / "gradebook.db", timeout=30) as db:
                cursor = db.execute(query.replace("%s", "?"), [job_id])
                row = cursor.fetchone()
                names = [column[0] for column in cursor.description]
            db.close()
        values = dict(zip(names, row, strict=True))
        return {stage: as_time(values.get(column)) for stage, column in COLUMNS.items()}

    def stop(self) -> None:
        if self.server is not None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()


def as_time(value) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value).replace(tzinfo=UTC)  # SQLite: Django's UTC text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measure(site: Site, work: Path) -> None:
    seconds, job_id, displayed = site.hand_in(work)
    clicked = displayed - seconds
    recorded = site.times(job_id)
    moments: dict[str, float | None] = {"click": clicked}
    moments.update({stage: at.timestamp() if at else None for stage, at in recorded.items()})
    moments["displayed"] = displayed
    if moments["claimed"] is None and moments["started"] is not None:  # an earlier commit: started at its claim
        moments["claimed"], moments["started"] = moments["started"], None
    order = ["click", *STAGES, "displayed"]
    stages: dict[str, float | None] = {}
    known = [name for name in order if moments[name] is not None]
    for before, after in zip(known, known[1:], strict=False):
        stages[f"{before}->{after}"] = moments[after] - moments[before]  # type: ignore[operator]
    site.runs.append(Run(seconds, stages))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def report(sites: list[Site]) -> str:
    lines = ["| database | code | runs | median | p95 | worst |", "| --- | --- | --- | --- | --- | --- |"]
    for site in sites:
        times = [run.seconds for run in site.runs]
        lines.append(
            f"| {site.label.split(':')[0]} | {site.label.split(':')[1]} | {len(times)} | "
            f"{statistics.median(times):.2f} s | {percentile(times, 0.95):.2f} s | {max(times):.2f} s |"
        )
    by_database: dict[str, dict[str, Site]] = {}
    for site in sites:
        database, code = site.label.split(":")
        by_database.setdefault(database, {})[code] = site
    for database, codes in by_database.items():
        if "before" in codes and "after" in codes:
            before = statistics.median(run.seconds for run in codes["before"].runs)
            after = statistics.median(run.seconds for run in codes["after"].runs)
            lines.append(f"\n{database}: the median after / before = {after / before:.2f}")
    lines.append("\nWhere the time goes (median seconds of each step, over the runs):\n")
    steps = sorted(
        {step for site in sites for run in site.runs for step in run.stages},
        key=lambda step: (["click", *STAGES, "displayed"].index(step.split("->")[0]), step),
    )
    lines.append("| step | " + " | ".join(site.label for site in sites) + " |")
    lines.append("| --- |" + " --- |" * len(sites))
    for step in steps:
        cells = []
        for site in sites:
            values = [run.stages[step] for run in site.runs if run.stages.get(step) is not None]
            cells.append(f"{statistics.median(values):.3f}" if values else "")  # type: ignore[type-var]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--before", metavar="REV", help="an earlier commit, measured in turn with this checkout")
    parser.add_argument("--postgres-url", default=os.environ.get("GRADEWRIGHT_TEST_POSTGRES", POSTGRES))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    students = -(-(args.runs + WARM_UP) // PER_STUDENT)
    made: list[str] = []
    sites: list[Site] = []
    with tempfile.TemporaryDirectory(prefix="gradewright-latency-") as folder:
        work = Path(folder)
        trees = {"after": ROOT}
        if args.before:
            before = work / "before"
            before.mkdir()
            archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
            trees = {"before": before, "after": ROOT}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                for database in args.databases:
                    pair = []
                    for code, tree in trees.items():
                        url = None
                        if database == "postgres":
                            url = fresh_postgres(args.postgres_url)
                            made.append(url)
                        site = Site(f"{database}:{code}", tree, work / f"{database}-{code}", url)
                        site.home.mkdir()
                        sites.append(site)
                        pair.append(site)
                        site.start(students)
                        site.sign_in(browser)
                    try:
                        for _ in range(WARM_UP):
                            for site in pair:
                                site.hand_in(work)
                        for n in range(args.runs):
                            for site in pair if n % 2 == 0 else reversed(pair):
                                time.sleep(0.5)  # the worker idle again, waiting
                                measure(site, work)
                    finally:
                        for site in pair:
                            site.stop()
                    print(f"{database}: done", file=sys.stderr, flush=True)
                browser.close()
        finally:
            for url in made:
                drop_postgres(args.postgres_url, url)
    print(report(sites))


def fresh_postgres(admin_url: str) -> str:
    import psycopg

    name = f"gradewright_latency_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_postgres(admin_url: str, url: str) -> None:
    import psycopg

    with suppress(psycopg.Error), psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')


if __name__ == "__main__":
    main()
