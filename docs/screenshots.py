"""The README's screenshots of the service, taken from the demo course, in one command:

    python docs/screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]

It copies the shipped course to a temporary folder, starts `autograder serve --demo` on it (the
demo's seeding grades a dozen students' known submissions in the sandbox: under a minute), signs
in as the demo instructor and as demo students in Playwright (driving Debian's chromium, no browser
download) and writes, into --out, the pages the README shows: at 1,280 px as before, a few at
1,440 px (``*-1440.png``) and a student's feedback on a phone at 360 px (``feedback-phone.png``).
Nothing of the checkout changes but those files; the served copy is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAIT = 900  # seconds for the demo's seeding and the site's start, on a busy machine
SHOT_NAMES = [
    "assignments.png",
    "feedback.png",
    "feedback-phone.png",
    "gradebook.png",
    "gradebook-1440.png",
    "marking.png",
    "marking-1440.png",
    "submission-staff.png",
    "statistics.png",
    "statistics-1440.png",
    "similarity.png",
    "reviews.png",
    "exams.png",
    "exam-marking.png",
    "exam-online.png",
    "exam-feedback.png",
    "exam-staff.png",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradewright-screenshots-") as home:
        course = Path(home) / "course"
        course.mkdir()
        shutil.copy(ROOT / "course.toml", course)
        for folder in ("assignments", "lesson_data"):
            shutil.copytree(ROOT / folder, course / folder, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        server, url, passwords = start_demo(course, Path(home))
        try:
            take(url, passwords, args.out, args.chromium)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    for name in SHOT_NAMES:
        print(args.out / name)
    return 0


def start_demo(course: Path, home: Path) -> tuple[subprocess.Popen, str, dict[str, str]]:
    """`autograder serve --demo` on the course, once it listens: (process, address, passwords)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    env.pop("GRADEWRIGHT_DATABASE_URL", None)
    log = (home / "serve.log").open("w+")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(course),
            "serve",
            "--demo",
            "--port",
            str(port),
            "--workers",
            "0",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=course,
    )
    deadline = time.monotonic() + WAIT
    print(f"seeding the demo and starting the site (up to {WAIT} s) ...", file=sys.stderr)
    while True:
        said = (home / "serve.log").read_text()
        if server.poll() is not None:
            raise SystemExit(f"`autograder serve --demo` ended: {said}")
        if "serving " in said:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                pass
        if time.monotonic() > deadline:
            server.kill()
            raise SystemExit(f"`autograder serve --demo` did not start in {WAIT} s: {said}")
        time.sleep(0.5)
    passwords: dict[str, str] = {}
    for line in said.splitlines():
        if line.startswith("demo ") and " / " in line and ": " in line:
            names, password = line.split(": ", 1)[1].rsplit(" / ", 1)
            passwords |= {name: password for name in names.split(", ")}
    return server, f"http://127.0.0.1:{port}", passwords


def take(url: str, passwords: dict[str, str], out: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:

            def signed_in(username: str, width: int = 1280, height: int = 720):
                page = browser.new_context(viewport={"width": width, "height": height}).new_page()
                page.goto(f"{url}/accounts/login/")
                page.fill("input[name=username]", username)
                page.fill("input[name=password]", passwords[username])
                page.click("button:has-text('Sign in')")
                page.wait_for_url(f"{url}/assignments/")
                return page

            def first_link(page, prefix: str) -> str:
                return url + page.locator(f"a[href^='{prefix}']").first.get_attribute("href")

            def shot(page, name: str, full_page: bool = True) -> None:
                page.screenshot(path=str(out / name), full_page=full_page)

            # Students: ada's assignments; jonas's late submission, at 1,280 px and on a phone.
            ada = signed_in("ada")
            shot(ada, "assignments.png", full_page=False)
            jonas = signed_in("jonas")
            jonas.goto(f"{url}/assignments/sequences-and-attention/")
            late = first_link(jonas, "/submissions/")
            jonas.goto(late)
            shot(jonas, "feedback.png")
            phone = signed_in("jonas", width=360, height=740)
            phone.goto(late)
            shot(phone, "feedback-phone.png")
            # The online exam: elena still writing, ada's ended attempt and its feedback.
            elena = signed_in("elena")
            elena.goto(f"{url}/exams/midterm/")
            shot(elena, "exam-online.png")
            ada.goto(f"{url}/exams/midterm/")
            shot(ada, "exam-feedback.png")

            # The staff, at 1,280 px and at 1,440 px.
            for width, suffix in ((1280, ""), (1440, "-1440")):
                staff = signed_in("instructor", width=width)
                staff.goto(f"{url}/staff/gradebook/attention-not-explanation/")
                shot(staff, f"gradebook{suffix}.png")
                staff.goto(f"{url}/staff/marking/attention-not-explanation/written/")  # the first answer to mark
                shot(staff, f"marking{suffix}.png")
                staff.goto(f"{url}/staff/statistics/sequences-and-attention/")
                staff.wait_for_load_state("networkidle")  # the charts
                shot(staff, f"statistics{suffix}.png")
            staff = signed_in("instructor")
            staff.goto(f"{url}/staff/similarity/sequences-and-attention/")
            shot(staff, "similarity.png")  # the whole page: the first pair open, its fragments side by side
            staff.goto(f"{url}/staff/reviews/")
            shot(staff, "reviews.png")
            staff.goto(first_link(staff, "/submissions/"))  # the submission of the open review
            shot(staff, "submission-staff.png")
            staff.goto(f"{url}/staff/exams/")
            shot(staff, "exams.png")
            staff.goto(first_link(staff, "/staff/exams/midterm/"))
            shot(staff, "exam-marking.png")
            staff.goto(f"{url}/staff/online-exams/midterm/")
            shot(staff, "exam-staff.png")
        finally:
            browser.close()


if __name__ == "__main__":
    sys.exit(main())
