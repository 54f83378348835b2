"""Every page, in a real Chromium, at a phone's width (360 px) and a desktop's (1,440 px): nothing
is wider than the window (a wide table or code block scrolls inside its own box), and axe-core finds
no WCAG 2.1 A or AA violation. Student and staff pages, in the states that matter (queued, failed,
graded, awaiting hand grading, late, a review thread, practice checks and a finished run of them, an
exam before, during and after an attempt), on one site seeded straight into its tables
(tests/course_data.py) and served in this process; the pages a course platform or JupyterHub brings
a browser to are rendered with their own templates.

What the pages say is checked here too (README "The pages"): the staff's submission page names the
student and links to their history and the gradebook, a score awaiting hand grading says so, the
review thread says who asked about which question, the submissions list shows each one's score,
the marking page lists its keys, and dates are written one way."""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from .conftest import ASSIGNMENTS, LESSON_DATA, ROOT
from .course_data import seed
from .served import launch_chromium, needs_browser

pytestmark = pytest.mark.timeout(600)

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
needs_axe = pytest.mark.skipif(
    not AXE.is_file() and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="axe-core is not installed (npm ci, as .ci/run does, puts it in node_modules/)",
)
WIDTHS = (360, 1440)
SHOTS = os.environ.get("GRADEWRIGHT_DESIGN_SHOTS")
GRADED = "sequences-and-attention"
HAND = "attention-not-explanation"
PRACTICE = ("test_vector", "test_large_inputs_are_stable")  # softmax's hidden tests, marked practice on this site
EXAM = "design-exam"
LESSON = "module-10-question-bank"  # the shipped lesson with checks and generated questions
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
RUN_AXE = f"""async () => {{
  const result = await axe.run(document, {{runOnly: {{type: "tag", values: {WCAG!r}}}, resultTypes: ["violations"]}});
  return result.violations.map((v) => `${{v.id}} (${{v.impact}}): ${{v.help}}: ` +
    v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", "));
}}"""
# The gradebook at a phone's width: the tabs that reach beyond the window (none), and where the student
# column's first cell is, from its table's box's left, once the table scrolled to its far right.
SEEN_AT_360 = """() => {
  const tabs = [...document.querySelectorAll("nav.tabs a")].filter((a) => a.getBoundingClientRect().right > window.innerWidth)
    .map((a) => a.textContent);
  const box = document.querySelector(".table-responsive");
  box.scrollLeft = box.scrollWidth;
  const cell = box.querySelector("tr:nth-child(2) > :first-child");
  const left = Math.round(cell.getBoundingClientRect().left - box.getBoundingClientRect().left - box.clientLeft);
  return {tabs, student_left: left, scrolled: box.scrollLeft > 0};
}"""
# How far the document reaches beyond the window, and the widest element that reaches it.
OVERFLOW = """() => {
  const root = document.documentElement;
  const over = root.scrollWidth - root.clientWidth;
  if (over <= 0) { return null; }
  const clipped = (element) => {  // inside a box that scrolls or clips it, itself within the window
    for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible" && up.getBoundingClientRect().right <= root.clientWidth + 1) {
        return true;
      }
    }
    return false;
  };
  let widest = null;
  for (const element of document.body.querySelectorAll("*")) {
    const right = element.getBoundingClientRect().right;
    if (right > root.clientWidth + 1 && !clipped(element) && (!widest || right > widest.right)) {
      widest = {right, what: element.tagName.toLowerCase() + (element.id ? "#" + element.id : "") +
                (element.className && typeof element.className === "string" ? "." + element.className.split(" ").join(".") : "")};
    }
  }
  return {over, widest: widest && widest.what};
}"""
DUPLICATE_IDS = """() => { const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
  return ids.filter((id, n) => ids.indexOf(id) !== n); }"""
# A number with more decimals than the rounding rule (course/wording.py) allows, as no page shows one
# (an exam log's fractions of a second, after a colon, aside).
LONG_DECIMALS = re.compile(r"(?<![\d:.])\d+\.\d{3,}(?![\d.])")
DATE = re.compile(r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}, \d{2}:\d{2}(:\d{2})? UTC\b")


@dataclass
class Site:
    url: str
    student: User
    instructor: User
    student_id: str
    jobs: dict[str, int]  # by what they show
    diff: tuple[int, int]
    welcome: str
    extension: int  # an assignment's extension, for the console's pages
    problems: list[str] = field(default_factory=list)


def _course_with_practice_checks(folder: Path) -> Path:
    """The shipped course with two of softmax's hidden tests marked practice in the notebook assignment
    (the shipped course has none), for this site only: links to the shipped files, that assignment's
    assignment.toml alone written (the site reads the course from its folder, as it finds it)."""
    (folder / "course.toml").write_text((ROOT / "course.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "lesson_data").symlink_to(LESSON_DATA)
    (folder / "assignments").mkdir()
    for entry in ASSIGNMENTS.iterdir():
        if entry.name != GRADED:
            (folder / "assignments" / entry.name).symlink_to(entry)
    copy = folder / "assignments" / GRADED
    copy.mkdir()
    for entry in (ASSIGNMENTS / GRADED).iterdir():
        if entry.name != "assignment.toml":
            (copy / entry.name).symlink_to(entry)
    text = (ASSIGNMENTS / GRADED / "assignment.toml").read_text(encoding="utf-8")
    marked = 'functions = ["softmax"]\nchecks = { ' + ", ".join(f'{test} = "practice"' for test in PRACTICE) + " }\n"
    (copy / "assignment.toml").write_text(text.replace('functions = ["softmax"]\n', marked, 1), encoding="utf-8")
    return folder


def _serve() -> tuple[str, object]:
    """The site (the WSGI application `autograder serve` runs) on a free port, in a thread."""
    from django.core.wsgi import get_wsgi_application
    from waitress.server import create_server

    server = create_server(get_wsgi_application(), host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    return f"http://127.0.0.1:{server.effective_port}", server


def _job(student, spec_name: str, state: str, submission=None, name: str = "answer.ipynb") -> int:
    from service.handin.models import Job

    job = Job.objects.create(
        student=student,
        assignment=spec_name,
        file="uploads/none",
        original_name=name,
        size=1,
        sha256=submission.sha256 if submission else "0" * 64,
        state=state,
        submission=submission,
        error="the grader stopped" if state == Job.FAILED else "",
    )
    return job.id


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    """A course of 8 students with graded work in both assignments, one of them signed in as
    themself (queued, failed and graded hand-ins, a review request, a finished run of the notebook
    assignment's practice checks), an instructor, a similarity report, an online exam open now;
    served on a port of its own."""
    from autograder.practice import PracticeCheck, PracticeRun
    from course.exams.build import build_exam
    from gradebook.models import SimilarityRun, Student, Submission
    from gradebook.similarity.fragments import of_code
    from gradebook.similarity.report import SimilarityReport, SimilarPair
    from service.accounts.models import Member, SignInLink, digest
    from service.core.access import assignments, course, reread_course
    from service.exams import marking as exam_marking
    from service.exams import sessions as exam_sessions
    from service.exams.models import ExamAttempt, OnlineExam
    from service.handin.models import Job, PracticeJob
    from service.marking import answers as hand_grading
    from service.marking.models import ReviewMessage, ReviewRequest

    patch = pytest.MonkeyPatch()
    patch.setattr(settings, "GRADEWRIGHT_COURSE", str(_course_with_practice_checks(tmp_path_factory.mktemp("course"))))
    reread_course()
    tag = uuid.uuid4().hex[:6]
    prefix = f"d{tag}-"
    specs = assignments()
    for name in (GRADED, HAND):
        seed(specs[name], 8, prefix=prefix, accounts=False)
    # Student 7 left the written answer as released: the marking list's empty answers and their button.
    from gradebook.models import Result

    Result.objects.filter(
        submission__student__student_id=f"{prefix}00007", submission__assignment__name=HAND, question_id="written"
    ).update(answers={"written_link": "YOUR ANSWER HERE"})
    # Students 2 and 3 wrote one answer, the second with a typo: a group, the member's own words marked.
    for number, text in (
        ("00002", "Artefacts: check by removing a word."),
        ("00003", "Artefacts: check by removing a wrod."),
    ):
        Result.objects.filter(
            submission__student__student_id=f"{prefix}{number}",
            submission__assignment__name=HAND,
            question_id="written",
        ).update(answers={"written_link": text})
    # Student 1: their hand-graded answer is not marked yet (course_data marks every other one).
    row = Student.objects.get(student_id=f"{prefix}00001")
    student = User.objects.create_user(f"student-{tag}")
    Member.objects.create(user=student, role=Member.STUDENT, student=row)
    instructor = User.objects.create_user(f"teacher-{tag}")
    Member.objects.create(user=instructor, role=Member.INSTRUCTOR)
    jobs = {}
    for name in (GRADED, HAND):
        for n, submission in enumerate(Submission.objects.filter(student=row, assignment__name=name).order_by("id")):
            jobs[f"{name} {n}"] = _job(row, name, Job.GRADED, submission, name=f"{name}-{n}.ipynb")
    jobs["queued"] = _job(row, GRADED, Job.QUEUED)
    jobs["failed"] = _job(row, GRADED, Job.FAILED)
    # A finished run of the practice checks on a hand-in, as the worker keeps it: one passes, one fails.
    checks = [
        PracticeCheck(question="softmax", sentence=sentence, passed=passed, status="passed" if passed else "failed")
        for sentence, passed in (
            ("A 1-D vector of moderate values is normalised.", True),
            ("Inputs of large magnitude (around 1e3 and 1e5) give the expected probabilities, all finite.", False),
        )
    ]
    PracticeJob.objects.create(
        student=row,
        assignment=GRADED,
        file="uploads/none",
        original_name=f"{GRADED}-1.ipynb",
        sha256="0" * 64,
        handed_in_id=jobs[f"{GRADED} 1"],
        state=PracticeJob.DONE,
        finished_at=timezone.now(),
        result=PracticeRun(assignment=GRADED, checks=checks).model_dump(mode="json"),
    )
    review = ReviewRequest.objects.create(job_id=jobs[f"{HAND} 1"], question_id="written")
    ReviewMessage.objects.create(request=review, author=student, text="Please look at my second paragraph again.")
    # Two of their submissions with code to compare (the known submissions' files).
    known = sorted((ASSIGNMENTS / GRADED / "known").glob("*.py"))[:2]
    first, second = Submission.objects.filter(student=row, assignment__name=GRADED).order_by("id")
    for submission, path in ((first, known[0]), (second, known[1])):
        Submission.objects.filter(id=submission.id).update(file=str(path))
    # A long line and many of them: the page still fits the window (each side's code scrolls in its
    # box, the unshared code far from the fragments folded). Two functions, swapped in the copy.
    functions = (ASSIGNMENTS / GRADED / "known" / "correct_loops.py").read_text().split("\n\ndef ")
    one, two = ("def " + functions[n] for n in (3, 5))
    filler = "".join(f"weights_{n} = [" + ", ".join(str(m) for m in range(120)) + "]\n" for n in range(60))
    first_code, second_code = filler + one + "\n\n" + two, two + "\n\n" + filler[::-1] + "\n" + one
    report = SimilarityReport(
        assignment=GRADED,
        threshold=0.5,
        compared=8,
        candidates=3,
        all_pairs=28,
        pairs=[
            SimilarPair(
                first=f"{prefix}{n:05d}",
                second=f"{prefix}{n + 1:05d}",
                first_share=0.8,
                second_share=0.75,
                first_code=first_code,
                second_code=second_code,
                fragments=of_code(first_code, second_code),
            )
            for n in (2, 4)
        ],
    )
    now = timezone.now()
    SimilarityRun.objects.create(
        assignment=GRADED,
        threshold=0.5,
        state=SimilarityRun.DONE,
        requested_at=now,
        requested_by=instructor.username,
        finished_at=now,
        report=report.model_dump(mode="json"),
    )
    secret = uuid.uuid4().hex
    welcomed = User.objects.create_user(f"new-{tag}")
    Member.objects.create(user=welcomed, role=Member.STUDENT)
    SignInLink.objects.create(user=welcomed, digest=digest(secret), expires_at=now + timedelta(days=1))
    # An online exam for student 1 and student 2, listed by the course, open now.
    folder = tmp_path_factory.mktemp("exam") / EXAM
    roster = folder.parent / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"{prefix}0000{n},Student {n},\n" for n in (1, 2)))
    build_exam(roster, folder, seed=3, questions=3, open_questions=1, lessons=[LESSON_DATA], title=f"Design exam {tag}")
    module = course().modules[0].model_copy(update={"exams": [str(folder)]})
    listed = course().model_copy(update={"modules": [module]})
    # Every page with the demo's notice, as `autograder serve --demo` shows it (its contrast checked too).
    patch.setattr(settings, "GRADEWRIGHT_DEMO", True, raising=False)
    patch.setattr(exam_sessions, "course", lambda: listed)
    patch.setattr(exam_marking, "course", lambda: listed)
    patch.setattr(hand_grading, "course", lambda: listed)
    OnlineExam.objects.filter(name=EXAM).delete()
    ExamAttempt.objects.filter(exam=EXAM).delete()
    OnlineExam.objects.create(
        name=EXAM,
        opens_at=now - timedelta(minutes=5),
        closes_at=now + timedelta(hours=2),
        minutes=30,
        results=OnlineExam.AT_SUBMIT,
    )
    from gradebook.models import Assignment, Extension

    extension = Extension.objects.create(
        student=Student.objects.get(student_id=f"{prefix}00002"),
        assignment=Assignment.objects.get(name=GRADED),
        until=now + timedelta(days=2),
        granted_at=now,
        granted_by=instructor.username,
    )
    url, server = _serve()
    try:
        yield Site(
            url=url,
            student=student,
            instructor=instructor,
            student_id=row.student_id,
            jobs=jobs,
            diff=(first.id, second.id),
            welcome=f"/welcome/{secret}/",
            extension=extension.pk,
        )
    finally:
        server.close()  # type: ignore[attr-defined]
        patch.undo()
        reread_course()
        OnlineExam.objects.filter(name=EXAM).delete()
        ExamAttempt.objects.filter(exam=EXAM).delete()
        SimilarityRun.objects.filter(requested_by=instructor.username).delete()


def session(site: Site, user: User) -> list[dict]:
    """A signed-in session's cookie for the browser (made before Playwright's loop runs: Django's
    database calls refuse to run inside it)."""
    client = Client()
    client.force_login(user)
    return [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": site.url}]


class Browser:
    """One Chromium, one page per width (each in its own context, signed in as ``user`` or not),
    axe-core loaded into every document by an init script (no inline script: the policy holds)."""

    def __init__(self, playwright, site: Site, cookies: list[dict]) -> None:
        self.site = site
        self.browser = launch_chromium(playwright)
        self.pages = {}
        for width in WIDTHS:
            context = self.browser.new_context(viewport={"width": width, "height": 900})
            context.add_init_script(path=str(AXE))
            context.add_cookies(cookies)
            page = context.new_page()
            page.on("console", self._policy_watch(page, width))
            self.pages[width] = page

    def _policy_watch(self, page, width: int):
        """What the policy blocks (an inline style or script) is a console error: a problem too
        (axe-core's own probes, which the site never serves, aside)."""

        def seen(message) -> None:
            blocked = message.type == "error" and "Content Security Policy" in message.text
            if blocked and not message.location.get("url", "").endswith("axe.min.js"):
                self.site.problems.append(f"{page.url} at {width} px: {message.text[:160]}")

        return seen

    def close(self) -> None:
        self.browser.close()

    def check(self, path: str, status: int = 200, then=None) -> str:
        """``path`` at each width: its status, nothing wider than the window, no axe violation
        (each problem noted in site.problems). ``then(page)``, if given, leads to the state to check
        from the page first loaded. The page's text, at the last width."""
        text = ""
        for width, page in self.pages.items():
            answer = page.goto(self.site.url + path)
            where = f"{path} at {width} px"
            if answer is None or answer.status != status:
                self.site.problems.append(f"{where}: answered {answer and answer.status}, not {status}")
                continue
            if then is not None:
                then(page)
                where = f"{page.url.removeprefix(self.site.url)} (from {path}) at {width} px"
            self.measure(page, where)
            text = page.inner_text("body")
        return text

    def measure(self, page, where: str) -> None:
        page.wait_for_load_state("load")
        if SHOTS:  # GRADEWRIGHT_DESIGN_SHOTS=folder: every page at each width, to look at
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(
                path=Path(SHOTS) / (re.sub(r"[^a-z0-9]+", "-", where.lower()).strip("-") + ".png"), full_page=True
            )
        # Stylesheets are the site's own files: the page is laid out with Bootstrap's rules.
        if "system-ui" not in page.evaluate("getComputedStyle(document.body).fontFamily"):
            self.site.problems.append(f"{where}: not styled")
        overflow = page.evaluate(OVERFLOW)
        if overflow:
            self.site.problems.append(f"{where}: {overflow['over']} px wider than the window ({overflow['widest']})")
        for violation in page.evaluate(RUN_AXE):
            self.site.problems.append(f"{where}: {violation}")
        for number in LONG_DECIMALS.findall(page.inner_text("body")):
            self.site.problems.append(f"{where}: {number} has more decimals than a score is shown with")


def rendered(page, site: Site, template: str, body: str, blocked: tuple[str, ...] = ()) -> None:
    """A page the site shows only inside a course platform's or JupyterHub's sign-in: its template,
    rendered, served at a site address (its stylesheets are the site's); ``blocked`` scripts
    (which would leave the page at once) are not loaded."""
    address = f"{site.url}/rendered/{template.rsplit('/', 1)[-1]}"
    page.route(address, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=body))
    for script in blocked:
        page.route(
            f"{site.url}/static/service/{script}", lambda route: route.fulfill(content_type="text/javascript", body="")
        )
    page.goto(address)


@needs_browser
@needs_axe
@pytest.mark.slow
def test_every_student_page_fits_both_widths_and_has_no_axe_violation(site):
    from playwright.sync_api import sync_playwright

    from service.lessons.models import LessonAnswer

    cookies = session(site, site.student)
    # Answers to a lesson's checks: a wrong option with its feedback, a generated question's typed answer.
    LessonAnswer.objects.bulk_create(
        LessonAnswer(
            student=site.student.member.student,
            lesson=LESSON,
            question=question,
            value=value,
            right=False,
            at=timezone.now(),
        )
        for question, value in ((f"{LESSON}-check-1", "A"), (f"{LESSON}-attention-output-shape", "(2, 3, <b>4</b>)"))
    )
    with sync_playwright() as playwright:
        browser = Browser(playwright, site, cookies)
        try:
            listing = browser.check("/assignments/")
            assert "Demo course" in listing  # the demo's notice, on every page
            # Each assignment's state (its latest hand-in's, a link to it) and the score as it stands.
            row = browser.pages[1440].locator("tr")
            graded, hand = (
                row.filter(has_text=title).inner_text() for title in ("notebook: attention", "assignment: attention")
            )
            assert "failed" in graded and re.search(r"\d+(\.\d+)? / 10", graded), graded
            assert "graded" in hand and "awaiting hand grading" in hand, hand
            assert "Design exam" in listing  # the open exam is listed, by its title
            page = browser.check(f"/assignments/{GRADED}/")
            # Each submission's score beside it, the queued one and the failed one said so.
            assert re.search(r"\d+(\.\d+)? / 10", page), page
            assert "not yet" in page and "failed" in page and DATE.search(page), page
            # Its practice checks: the form that runs them, and the finished run's checks, one failing.
            assert "Run the practice checks" in page and "1 of 2 practice checks pass." in page, page
            hand = browser.check(f"/assignments/{HAND}/")
            assert "await hand grading" in hand or "awaits hand grading" in hand, hand
            for label in (f"{GRADED} 1", "queued", "failed"):
                browser.check(f"/submissions/{site.jobs[label]}/")
            shown = browser.check(f"/submissions/{site.jobs[f'{HAND} 1']}/")
            # The score waits for hand grading, said beside it; the review thread says who asked what.
            assert re.search(r"Score: [\d.]+ / [\d.]+ so far; [\d.]+ points? awaits? hand grading", shown), shown
            assert f"Asked by {site.student_id} about question written" in shown
            assert "awaiting hand grading" in shown and "Handed in by" not in shown
            assert "Module 10 question bank" in browser.check("/lessons/")
            lesson = browser.check(f"/lessons/{LESSON}/")  # each kind of question, two answered
            assert "not right" in lesson and "(2, 3, <b>4</b>)" in lesson

            def empty_answer(page) -> None:  # refused: the problem beside the field
                page.fill(f"#{LESSON}-attention-output-shape-answer", "")  # (the last answer, kept in the field)
                with page.expect_navigation():
                    page.locator(f"#{LESSON}-attention-output-shape button").click()

            assert "write your answer first" in browser.check(f"/lessons/{LESSON}/", then=empty_answer)
            browser.check(f"/exams/{EXAM}/")  # before the attempt

            def start(page) -> None:
                page.get_by_role("button", name="Start the exam").click()
                page.locator("#clock").wait_for()

            browser.pages[360].goto(site.url + f"/exams/{EXAM}/")
            start(browser.pages[360])  # one attempt a student: started once, then the same page at both widths
            browser.check(f"/exams/{EXAM}/")  # during it

            def submit(page) -> None:
                # Submit asks first, naming what is not answered (nothing is, here), and the clock stays in view.
                page.mouse.wheel(0, 5000)
                assert page.locator("#clock").is_visible() and page.evaluate(
                    "document.getElementById('clock').getBoundingClientRect().top >= 0"
                )
                page.once("dialog", lambda dialog: asked.append(dialog.message) or dialog.accept())
                page.get_by_role("button", name="Submit the exam").click()
                page.locator("#ended").wait_for()

            asked: list[str] = []
            submit(browser.pages[1440])
            assert asked and asked[0].startswith("Not answered: questions 1, 2, 3 and 4."), asked
            browser.check(f"/exams/{EXAM}/")  # after it, with its results
            browser.check("/submissions/999999999/", status=404)  # the error page
        finally:
            browser.close()
    assert site.problems == [], "\n".join(site.problems)


@needs_browser
@needs_axe
@pytest.mark.slow
def test_every_staff_page_fits_both_widths_and_has_no_axe_violation(site):
    from playwright.sync_api import sync_playwright

    from service.exams.models import ExamAttempt

    cookies = session(site, site.instructor)
    attempt = ExamAttempt.objects.filter(exam=EXAM).order_by("id").first()  # the student's, if their test ran
    with sync_playwright() as playwright:
        browser = Browser(playwright, site, cookies)
        try:
            browser.check("/assignments/")
            settings = browser.check(f"/assignments/{GRADED}/")
            assert "Close submissions" in settings and "Hand-in and settings" in settings
            page = browser.check(f"/submissions/{site.jobs[f'{HAND} 1']}/")
            # The staff's submission page names the student and leads to their history and the gradebook.
            assert f"Handed in by {site.student_id}" in page and "their submissions" in page
            assert "so far;" in page and "Asked by" in browser.pages[1440].inner_text("body")
            links = browser.pages[1440].locator("#whose a")
            assert [links.nth(n).get_attribute("href") for n in range(2)] == [
                f"/staff/students/{site.student_id}/",
                f"/staff/gradebook/{HAND}/",
            ]
            browser.check(f"/submissions/{site.jobs[f'{GRADED} 1']}/")
            for name in (GRADED, HAND):
                gradebook = browser.check(f"/staff/gradebook/{name}/")
                assert site.student_id in gradebook
                tabs = browser.pages[1440].locator("nav.tabs a")
                assert tabs.all_inner_texts()[:5] == [
                    "Gradebook",
                    "Statistics",
                    "Hand grading",
                    "Similarity",
                    "Grade files",
                ]
                assert browser.pages[1440].locator("nav.tabs a[aria-current=page]").inner_text() == "Gradebook"
                # At 360 px every tab is in sight, and the student column stays while the table scrolls.
                phone = browser.pages[360]
                assert phone.evaluate(SEEN_AT_360) == {"tabs": [], "student_left": 0, "scrolled": True}
            browser.check(f"/staff/gradebook/{HAND}/?show=hand")
            browser.check(f"/staff/statistics/{GRADED}/")
            browser.check(f"/staff/extensions/{GRADED}/")
            index = browser.check(f"/staff/marking/{HAND}/")
            assert re.search(r"Give the \d+ empty answers? 0", index)  # the empty answers' list and button
            marking = browser.check(f"/staff/marking/{HAND}/written/")  # the first answer to mark
            assert "Ctrl+Enter" in marking and "n and p" in marking  # its keys, on the page
            # The running total follows the items ticked (by a click or a key) and the adjustment, unsaved.
            marker = browser.pages[1440]
            for box in marker.locator("input[name=rubric]:checked").all():
                box.uncheck()
            marker.locator("input[data-key='1']").check()
            marker.locator("body").press("2")
            marker.fill("input[name=adjustment]", "-0.25")
            assert marker.locator("#running-total").inner_text() == "1.75"
            # By groups: at a low threshold the seeded answers gather, each member's own words shown.
            groups = browser.check(f"/staff/groups/{HAND}/written/?threshold=0.5")
            assert "Ctrl+Enter" in groups and "its own words" in groups
            assert browser.pages[1440].locator(".own-words mark").all_inner_texts() == ["wrod"]  # highlighted
            grouping = browser.pages[1440]  # x splits the near-twin out of its group, in one key
            with grouping.expect_navigation():
                grouping.keyboard.press("x")
            assert "split out: it is a group of its own now" in grouping.inner_text("body")
            with grouping.expect_navigation():
                grouping.get_by_role("button", name="Put it back in their groups").click()
            assert "1 answer split out put back" in grouping.inner_text("body")

            def next_group(page) -> None:  # the n key, as on the single-answer page
                page.keyboard.press("n")
                page.wait_for_url("**group=2**")

            browser.check(f"/staff/groups/{HAND}/written/?threshold=1", then=next_group)
            browser.check(f"/staff/similarity/{GRADED}/")
            tall = browser.pages[1440].evaluate("document.documentElement.scrollHeight")
            assert tall < 3000, f"the similarity page is {tall} px tall"
            # Each fragment's region links to its partner, which the script outlines while pointed at.
            similar = browser.pages[1440]
            regions = similar.locator("#pair-1 a.frag")
            assert regions.count() >= 4
            similar.hover("#p1-l-1")
            assert "partner" in (similar.get_attribute("#p1-r-1", "class") or "")
            similar.click("#p1-l-1")
            assert similar.evaluate("location.hash") == "#p1-r-1"
            history = browser.check(f"/staff/students/{site.student_id}/")
            assert "Module 10 notebook: attention built by hand" in history  # titles, not folder names
            browser.check(f"/staff/students/{site.student_id}/diff/{site.diff[0]}/{site.diff[1]}/")
            browser.check("/staff/reviews/")
            browser.check("/staff/exports/")
            roster = browser.check("/staff/roster/")
            assert "students" in roster
            staff = browser.check("/staff/members/")  # the staff and the form that adds one
            assert "Add an instructor or a teaching assistant" in staff
            browser.check("/staff/platforms/")
            browser.check("/staff/exams/")
            assert "The class's last answers" in browser.check(f"/lessons/{LESSON}/")
            online = browser.check(f"/staff/online-exams/{EXAM}/")
            assert "Accommodations" in online
            # A form: whole minutes, date inputs, each label by its own field, no id twice.
            form = browser.pages[1440]
            assert form.locator("#id_minutes").input_value() == "30"
            assert form.locator("#id_opens_at").get_attribute("type") == "datetime-local"
            assert form.locator("label[for=terms_closes_at]").inner_text() == "Closes for them at"
            assert form.evaluate(DUPLICATE_IDS) == [], form.evaluate(DUPLICATE_IDS)
            if attempt is not None:  # the student's test ran first: its attempt's log
                browser.check(f"/staff/online-exams/{EXAM}/attempts/{attempt.pk}/")
            # The exam's open question: the online answer, left blank (an empty answer, listed with its
            # button, opened from the list), and the groups.
            if attempt is not None:  # an exam taken online lists the answers of those who took it
                browser.check("/staff/exams/", then=lambda page: page.locator("section.empty-answers a").first.click())
                browser.check(
                    "/staff/exams/", then=lambda page: page.locator("a:has-text('Mark by groups')").first.click()
                )
            # The instructor's console (Django's admin): its index, a list, a row's page, with the site's dates.
            browser.check("/admin/")
            extensions = browser.check("/admin/gradebook/extension/")
            assert "Extension object" not in extensions and DATE.search(extensions), extensions
            browser.check(f"/admin/gradebook/extension/{site.extension}/change/")
            browser.check("/admin/service/job/")
            browser.check("/admin/service/member/")
            browser.check(f"/admin/service/member/{site.instructor.member.pk}/change/")  # a form the console edits
            browser.check("/admin/gradebook/student/")
        finally:
            browser.close()
    assert site.problems == [], "\n".join(site.problems)


@needs_browser
@needs_axe
@pytest.mark.slow
def test_the_signed_out_and_platform_pages_fit_both_widths_and_have_no_axe_violation(site):
    from playwright.sync_api import sync_playwright

    specs = [{"name": GRADED, "title": "Sequences and attention", "due": timezone.now()}]
    pages = [
        (
            "service/lti/lti_deep_link.html",
            {"launch_id": "x", "assignments": specs, "exams": [("exam:x", "An exam")]},
            (),
        ),
        (
            "service/lti/lti_deep_link_return.html",
            {"return_url": "https://lms.example/return", "jwt": "a.b.c"},
            ("auto_submit.js",),
        ),
        (
            "service/lti/lti_cookie_check.html",
            {
                "loading": "Loading…",
                "main": "Your browser refused the tool's cookies.",
                "again": "https://lms.example/",
                "click": "Open it in a new window",
            },
            ("lti_cookie_check.js",),
        ),
        ("service/lti/lti_refused.html", {"why": "the launch's token has expired"}, ()),
        ("service/accounts/hub_refused.html", {"refused": "this JupyterHub user is not on the course"}, ()),
    ]
    bodies = [(template, render_to_string(template, context), blocked) for template, context, blocked in pages]
    with sync_playwright() as playwright:
        browser = Browser(playwright, site, [])
        try:
            browser.check("/accounts/login/")
            # The checks see what they look for (a test that cannot fail is a defect): a page made
            # wider than the window and given a field with no label is found out on both counts.
            page = browser.pages[360]
            page.evaluate("""() => { const wide = document.createElement("div"); wide.className = "control";
                wide.textContent = "wide"; wide.style.width = "1000px"; document.body.append(wide);  // CSSOM: allowed
                const field = document.createElement("input"); document.querySelector("main").append(field);
                const score = document.createElement("p"); score.textContent = "Mean 7.208333 / 10";
                document.querySelector("main").append(score);
                document.querySelector("main").insertAdjacentHTML("beforeend", '<p style="color: red">inline</p>'); }""")
            browser.measure(page, "control")
            found = [problem for problem in site.problems if problem.startswith("control")]
            assert any("wider than the window" in problem for problem in found), found
            assert any(problem.startswith("control: label") for problem in found), found
            assert "control: 7.208333 has more decimals than a score is shown with" in found, found
            assert any("Content Security Policy" in problem for problem in site.problems), site.problems
            site.problems.clear()
            browser.check(site.welcome)
            browser.check("/welcome/not-a-link/", status=404)
            for template, body, blocked in bodies:
                for width, page in browser.pages.items():
                    rendered(page, site, template, body, blocked)
                    browser.measure(page, f"{template} at {width} px")
        finally:
            browser.close()
    assert site.problems == [], "\n".join(site.problems)


def test_every_page_writes_its_dates_one_way():
    """One filter writes every date ("1 Dec 2026, 14:44 UTC"), with its seconds or milliseconds where
    they matter, and one every length of time; no template formats one itself."""
    from datetime import UTC, datetime

    from service.templatetags.pages import ago, duration, moment, moment_precise, moment_seconds

    when = datetime(2026, 12, 1, 14, 44, 5, tzinfo=UTC)
    assert moment(when) == "1 Dec 2026, 14:44 UTC" and moment_seconds(when) == "1 Dec 2026, 14:44:05 UTC"
    assert moment("2026-12-01T15:44:05+01:00") == "1 Dec 2026, 14:44 UTC" and moment(None) == ""
    assert ago(timezone.now() - timedelta(hours=3, minutes=5)) == "3\xa0hours ago"
    assert ago(timezone.now() + timedelta(days=2, hours=1)).startswith("in 2")
    assert moment_precise(when.replace(microsecond=155477)) == "1 Dec 2026, 14:44:05.155 UTC"
    assert moment_precise(when) == "1 Dec 2026, 14:44:05 UTC"  # never ".000000"
    shown = [duration(s) for s in (0.314, 12.44, 249, 11520, 304668.063, 86400, None)]
    assert shown == ["0.31 s", "12.4 s", "4 min 9 s", "3 h 12 min", "3 days 12 h", "1 day", ""]
    templates = ROOT / "service" / "templates"
    formatted = [
        f"{path.name}: {match}"
        for path in sorted(templates.rglob("*.html"))
        for match in re.findall(r"\|date:\"[^\"]*\"", path.read_text())
    ]
    assert formatted == []


def test_every_form_control_has_a_label():
    """The file inputs, the roster upload and the review's answer (unlabelled before) have one."""
    templates = ROOT / "service" / "templates" / "service"
    for name, control in (
        ("handin/assignment.html", 'name="notebook"'),
        ("handin/assignment.html", 'id="practice-file"'),
        ("accounts/roster.html", 'name="roster"'),
        ("handin/submission_live.html", 'name="message" id="answer-'),
        ("handin/submission_live.html", 'id="review-message"'),
    ):
        text = (templates / name).read_text()
        tag = re.search(rf"<(input|textarea)[^>]*{control}[^>]*>", text)
        assert tag, (name, control)
        found = re.search(r'id="([^"]+)"', tag.group(0))
        assert found and f'for="{found.group(1).split("{")[0]}' in text, (name, control)


def test_no_template_comment_spans_lines():
    """Django's ``{# #}`` comment is one line's: over two lines, its text is shown on the page (the
    submission page showed its htmx note so); longer ones are ``{% comment %}``."""
    templates = ROOT / "service" / "templates"
    spanning = [
        f"{path.relative_to(templates)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted(templates.rglob("*.html"))
        for text in [path.read_text(encoding="utf-8")]
        for match in re.finditer(r"\{#(.*?)#\}", text, flags=re.S)
        if "\n" in match.group(1)
    ]
    assert spanning == []
