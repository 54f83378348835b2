"""``autograder serve --demo``: a demo course that fills every page, apart from the course's own.

The demo is a course folder of its own, ``<course>/.gradewright/demo/``: a copy of the course's
``course.toml`` and assignment folders (each manifest given a due time a few days ago, so that some
work is late), and its own state folder ``demo/.gradewright/`` with its own SQLite gradebook,
uploads and reports. Nothing of it is ever written to the course's own gradebook (nor to the
database ``$GRADEWRIGHT_DATABASE_URL`` names: the demo does not use it). A file ``DEMO.txt`` in the
demo folder marks it as the demo; the site then says "Demo course" on every page.

Seeding grades the assignments' shipped known submissions (``assignments/*/known``) for a roster
of a dozen students, in the sandbox, by the engine's batch grading, as ``autograder grade`` does;
each hand-in is then a job as an upload would have made it, back-dated over the past days. On top:
written answers (some marked by a TA, some waiting), a late hand-in and an extension, two students
with nearly the same code (the similarity report's pair), a review request, a platform, and an
exam taken online by some students.

A second ``serve --demo`` reuses the demo as it was left (what the newcomer did in it included);
one interrupted while seeding is made again from the start. Deleting the demo folder starts
afresh."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from course.private_files import write_private
from course.wording import plural

from .errors import ServiceSetupError
from .settings import DEMO_MARK, STATE_FOLDER, state_folder

DEMO_FOLDER = "demo"  # under the course's state folder
SEEDED = "demo-seeded"  # in the demo's state folder, written last: a half-made demo is made again
ACCOUNTS = "demo-accounts.json"  # in the demo's state folder (its owner only): printed at every start
DEMO_PENALTY = "10% per day"

# The roster: (student id, name, username). Usernames are first names, easy to type on a sign-in page.
ROSTER = [
    ("s2601", "Ada Okafor", "ada"),
    ("s2602", "Ben Moreau", "ben"),
    ("s2603", "Chloe Lindqvist", "chloe"),
    ("s2604", "Dev Raman", "dev"),
    ("s2605", "Elena Petrova", "elena"),
    ("s2606", "Farid Haddad", "farid"),
    ("s2607", "Grace Mensah", "grace"),
    ("s2608", "Hugo Tanaka", "hugo"),
    ("s2609", "Iris Novak", "iris"),
    ("s2610", "Jonas Keller", "jonas"),
    ("s2611", "Kemi Adeyemi", "kemi"),
    ("s2612", "Liam Walsh", "liam"),
]

# Each student's hand-ins of the first assignment (sequences-and-attention), as known files: a first
# try, then (for some) a later one. "grace" hands in "ada"'s final file nearly as it is: the pair the
# similarity report shows.
FIRST = {
    "ada": ["unstable_softmax.py", "correct_loops.py"],
    "ben": ["missing_sqrt.py", "correct_vectorised.py"],
    "chloe": ["correct_fresh_notebook.ipynb"],
    "dev": ["softmax_wrong_axis.py", "wrong_head_split_ignored_mask.py"],
    "elena": ["correct_float32.py"],
    "farid": ["hardcoded.py", "unstable_softmax_used.py"],
    "grace": ["correct_loops.py"],  # ada's, lightly edited (see _near_copy)
    "hugo": ["syntax_error_in_one_cell.ipynb", "ignored_mask.py"],
    "iris": ["correct_mixed_precision.py"],
    "jonas": ["list_returns.py", "unscaled_saturation.py"],
    "kemi": ["per_column_frequencies.py"],
    "liam": ["released_unchanged.ipynb"],  # the notebook as released: nothing done
}
# The second assignment (attention-not-explanation, with a question graded by hand): each student's
# code and written answer, handed in as a notebook.
SECOND = {
    "ada": ["correct_projection.py"],
    "ben": ["top_pairs_ascending.py", "correct_float32.py"],
    "chloe": ["correct_source_notebook.ipynb"],
    "dev": ["explanation_returns_x.py"],
    "elena": ["explanation_scaled.py"],
    "farid": ["gap_ignores_encoding.py"],
    "grace": ["correct_float32.py"],
    "hugo": ["top_pairs_with_diagonal.py"],
    "iris": ["explanation_epsilon.py", "correct_projection.py"],
    "jonas": ["encoding_before_permuting.py"],
    "kemi": ["top_pairs_ties_reversed.py"],
    "liam": ["explanation_student_weights.py"],
}
ANSWERS = [
    (
        "The strongest pairs link words with no relation; they come from the random projections and from "
        "softmax forcing every row to sum to one, so they are artefacts, not findings.",
        "Check by intervention: remove the attended word and measure how much the output moves; compare with "
        "random pairs as a baseline.",
    ),
    (
        "The pairs look meaningful to me: the cat and the mat are linked, which is what the sentence says.",
        "Look at the map for other sentences.",
    ),
    ("Artefacts of untrained weights.", ""),
    (
        "Some pairs repeat a word, which is a real link; the others are artefacts of the projections.",
        "Change one word and see whether the weights and the output change.",
    ),
]
MARKED = {
    "ada": (["artefacts", "intervention", "baseline"], "Clear on all three points."),
    "ben": (["artefacts"], "Say how you would check it, not only where to look."),
    "dev": ([], "The pairs are not meaningful links: see part 3's fixed map."),
}
LATE = {
    ("sequences-and-attention", "jonas"),
    ("attention-not-explanation", "liam"),
    ("attention-not-explanation", "kemi"),
}
EXTENDED = ("attention-not-explanation", "kemi")  # late, but within an extension: no penalty
REVIEW = (
    "elena",
    "attention-not-explanation",
    "explanation",
    "My input keeps the attention map the same, I checked it by hand: why does it get no points?",
)
ANSWERED_REVIEW = (
    "hugo",
    "sequences-and-attention",
    "attention",
    "Is the mask supposed to apply to every head?",
    "Yes: the same mask for every head. Your attention ignores it, hence the partial score.",
)
EXAM_TAKERS = ("ada", "ben", "chloe", "dev", "elena")


@dataclass
class Demo:
    root: Path  # the demo course's folder: served, and given to its workers
    accounts: list[tuple[str, str, str]]  # (role, username, password), for the sign-in lines
    made: bool  # seeded now (False: the demo of an earlier start, reused)


def open_demo(course_root: Path, say: Callable[[str], None] = print) -> Demo:
    """The course's demo, seeded on first use (under a minute of grading) or reused, with Django
    configured for it in this process; its workers need ``$GRADEWRIGHT_DATABASE_URL`` unset, as
    this leaves it (the demo's database is its own SQLite file)."""
    from autograder.environment import is_set, without
    from course.folder import find_course
    from gradebook.database import URL_VARIABLE

    if is_set(URL_VARIABLE):
        without(os.environ, URL_VARIABLE)
        # The demo's grades never reach the course's database; its workers inherit this environment.
        say(f"the demo keeps its own gradebook: ${URL_VARIABLE} is not used")
    course = find_course(course_root)
    folder = state_folder(course.root) / DEMO_FOLDER
    state = folder / STATE_FOLDER
    from .setup import prepare

    if (state / SEEDED).is_file() and (state / ACCOUNTS).is_file():
        prepare(folder, None, demo=False)
        rows = json.loads((state / ACCOUNTS).read_text(encoding="utf-8"))
        accounts = [(str(role), str(username), str(password)) for role, username, password in rows]
        return Demo(root=folder, accounts=accounts, made=False)
    if folder.exists():
        shutil.rmtree(folder)  # a demo whose seeding was interrupted: made again from the start
    now = datetime.now(UTC).replace(microsecond=0)
    dues = _copy_course(course, folder, now)
    prepare(folder, None, demo=False)
    say(
        f"seeding the demo course in {folder}: grading the known submissions of {plural(len(ROSTER), 'student')} "
        "in the sandbox (under a minute, once)"
    )
    accounts = _seed(folder, state, now, dues)
    write_private(state / ACCOUNTS, json.dumps(accounts))  # the demo's passwords
    (state / SEEDED).write_text(now.isoformat(), encoding="utf-8")
    return Demo(root=folder, accounts=accounts, made=True)


def context(request: Any) -> dict[str, bool]:
    """Every page's ``demo_course``: the site serves the demo (base.html then says so)."""
    from django.conf import settings

    return {"demo_course": bool(getattr(settings, "GRADEWRIGHT_DEMO", False))}


# The demo course's folder.


def _copy_course(course: Any, folder: Path, now: datetime) -> dict[str, datetime]:
    """Copy the course's manifest and assignment folders (and the files they refer to) into the
    demo folder, in the same layout, each manifest with a due time of the demo's; lessons and
    exams are the course's own (named by their full path). The due times, by assignment name."""
    from autograder.assignment import MANIFEST, load_assignment

    folder.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".*")
    dues: dict[str, datetime] = {}
    modules = []
    for module in course.modules:
        assignments = []
        for listed in module.assignments:
            source = (course.root / listed).resolve()
            relative = _inside(course.root, source)
            target = folder / relative
            shutil.copytree(source, target, ignore=ignore)
            spec = load_assignment(source)
            for path in _referred(spec):
                copy = folder / _inside(course.root, path)
                if not copy.exists():
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    (shutil.copytree(path, copy, ignore=ignore) if path.is_dir() else shutil.copy2(path, copy))
            # The first assignment was due four days ago, the next one yesterday, ...
            due = now - timedelta(days=max(1, 4 - 3 * len(dues)))
            dues[spec.name] = due
            manifest = target / MANIFEST
            manifest.write_text(_with_due(manifest.read_text(encoding="utf-8"), due), encoding="utf-8")
            assignments.append(str(relative))
        modules.append(
            {
                "number": module.number,
                "title": module.title,
                "lessons": str((course.root / module.lessons).resolve()),
                "assignments": assignments,
                "exams": [str((course.root / exam).resolve()) for exam in module.exams],
            }
        )
    (folder / "course.toml").write_text(_course_toml(course, modules), encoding="utf-8")
    (folder / DEMO_MARK).write_text(
        "Gradewright's demo course, made by `autograder serve --demo` from the course above this folder.\n"
        "Its grades are its own (.gradewright/gradebook.db here), never the course's. Delete this folder\n"
        "to start the demo afresh.\n",
        encoding="utf-8",
    )
    return dues


def _inside(root: Path, path: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        raise ServiceSetupError(
            f"{path}: outside the course folder {root}; the demo copies only the course's own files"
        ) from None


def _referred(spec: Any) -> list[Path]:
    """The files and folders an assignment's manifest names outside its own folder (references)."""
    return [path for path in spec.reference_paths.values() if spec.folder.resolve() not in path.resolve().parents]


_DEMO_KEYS = re.compile(r"^\s*(due|late_penalty|late_until)\s*=")


def _with_due(manifest: str, due: datetime) -> str:
    """The manifest with the demo's due time and late policy in place of its own."""
    lines = manifest.splitlines()
    first_table = next((n for n, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    kept = [line for n, line in enumerate(lines) if n >= first_table or not _DEMO_KEYS.match(line)]
    head = [f"due = {due.isoformat()}", f'late_penalty = "{DEMO_PENALTY}"']
    return "\n".join(head + kept) + "\n"


def _value(value: Any) -> str:
    """A TOML value: strings and lists as JSON writes them (valid TOML), numbers as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def _course_toml(course: Any, modules: list[dict[str, Any]]) -> str:
    lines = [
        f"{key} = {_value(value)}"
        for key, value in (("title", f"{course.title} (demo)"), ("code", course.code), ("term", course.term))
    ]
    lines += ["", "[sandbox]", f"packages = {_value(course.sandbox.packages)}", "", "[defaults]"]
    if course.defaults.late_penalty:
        lines.append(f"late_penalty = {_value(course.defaults.late_penalty)}")
    lines += ["", "[defaults.limits]"] + [f"{k} = {_value(v)}" for k, v in course.defaults.limits.items()]
    for module in modules:
        lines += ["", "[[modules]]"] + [f"{key} = {_value(value)}" for key, value in module.items()]
    return "\n".join(lines) + "\n"


# The demo's data.


def _seed(folder: Path, state: Path, now: datetime, dues: dict[str, datetime]) -> list[tuple[str, str, str]]:
    from django.contrib.auth.models import User

    from autograder.assignment import course_assignment
    from course.folder import find_course
    from gradebook.book import Gradebook
    from gradebook.models import Student

    from .accounts.models import Member

    course = find_course(folder)
    book = Gradebook("default", "the demo's gradebook")
    staff_password, student_password = secrets.token_urlsafe(9), secrets.token_urlsafe(9)
    for username, role in (("instructor", Member.INSTRUCTOR), ("ta", Member.TA)):
        user = User.objects.create_user(username, password=staff_password, first_name=username.upper())
        Member.objects.create(user=user, role=role)
    students: dict[str, Student] = {}
    for student_id, name, username in ROSTER:
        students[username] = Student.objects.create(
            student_id=student_id, name=name, on_roster=True, email=f"{username}@demo.example.edu"
        )
        user = User.objects.create_user(
            username, password=student_password, first_name=name.split()[0], last_name=name.split()[1]
        )
        Member.objects.create(user=user, role=Member.STUDENT, student=students[username])
    specs = [course_assignment(course, name) for name in course.assignment_folders]
    plans = {"sequences-and-attention": FIRST, "attention-not-explanation": SECOND}
    jobs: dict[tuple[str, str], Any] = {}
    for position, spec in enumerate(specs):
        plan = plans.get(spec.name) or _fallback_plan(spec)
        due = dues[spec.name]
        jobs |= _grade(book, spec, state, plan, students, due, position)
    _marks(book, specs, students, now)
    _extension(book, specs, students, dues)
    _reviews(jobs, now)
    _similarity(book, specs)
    _platform()
    _exam(folder, course, students, now)
    accounts = [("instructor", "instructor", staff_password), ("teaching assistant", "ta", staff_password)]
    accounts += [("student", username, student_password) for _, _, username in ROSTER]
    return accounts


def _fallback_plan(spec: Any) -> dict[str, list[str]]:
    """Another course's assignment: its known submissions, handed out in turn."""
    known = sorted(p.name for p in (spec.folder / "known").glob("*") if p.suffix in {".py", ".ipynb"})
    return {username: [known[n % len(known)]] for n, (_, _, username) in enumerate(ROSTER)} if known else {}


def _grade(
    book: Any,
    spec: Any,
    state: Path,
    plan: dict[str, list[str]],
    students: dict[str, Any],
    due: datetime,
    position: int,
) -> dict[tuple[str, str], Any]:
    """Grade the plan's hand-ins in rounds (a student's first tries, then their second ones), each
    stored as an upload is, back-dated before the due time (or after it, for the late ones), and
    made a graded job. The latest job of each student, by (username, assignment)."""
    from autograder.batch import GradeOptions, grade_batch
    from autograder.submissions import Submission
    from gradebook.grading import store_for

    from .handin.models import Job

    manual = any(q.manual for q in spec.questions)
    rounds = max((len(files) for files in plan.values()), default=0)
    latest: dict[tuple[str, str], Any] = {}
    options = GradeOptions(jobs=max(1, min(4, os.cpu_count() or 1)))
    for attempt in range(rounds):
        handed: list[tuple[str, Submission, str]] = []
        for index, (username, files) in enumerate(plan.items()):
            if attempt >= len(files):
                continue
            last = attempt == len(files) - 1
            name, data = _hand_in(spec, files[attempt], username, index, manual)
            # Spread over the days before the due time: first tries two to three days before it.
            when = due - timedelta(days=2 - attempt, hours=index * 3 % 20, minutes=index * 7)
            if last and (spec.name, username) in LATE:
                when = due + timedelta(hours=5 + index)
            stored = state / "uploads" / spec.name / uuid.uuid4().hex
            stored.mkdir(parents=True, mode=0o700)
            path = stored / (spec.released_notebook if name.endswith(".ipynb") else "submission.py")
            path.write_bytes(data)
            sha = hashlib.sha256(data).hexdigest()
            # Named as a student's own file would be, not as the known file that says what it gets wrong.
            shown = spec.released_notebook if name.endswith(".ipynb") else f"{Path(spec.released_notebook).stem}.py"
            handed.append(
                (
                    username,
                    Submission(student=students[username].student_id, path=path, sha256=sha, submitted_at=when),
                    shown,
                )
            )
        if not handed:
            continue
        grade_batch(
            spec,
            [submission for _, submission, _ in handed],
            state / "reports" / spec.name / str(attempt),
            options,
            store=store_for(book, spec),
        )
        for username, submission, name in handed:
            latest[(username, spec.name)] = _job(spec, students[username], submission, name, Job, state)
    return latest


def _hand_in(spec: Any, known: str, username: str, index: int, manual: bool) -> tuple[str, bytes]:
    """A student's file: the known submission, with a written answer when the assignment has one."""
    path = spec.folder / "known" / known
    data = path.read_bytes()
    if path.suffix == ".py":  # the known file's own opening comment says what is wrong with it
        lines = data.decode("utf-8").splitlines(keepends=True)
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        data = "".join(lines).lstrip("\n").encode()
    if username == "grace" and spec.name == "sequences-and-attention":
        data = _near_copy(data)
    if not manual:
        return known, data
    if path.suffix == ".ipynb":
        return known, data  # a notebook of its own, its written answers in it
    link, check = ANSWERS[index % len(ANSWERS)] if username != "farid" else ("", "")  # farid wrote none
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": data.decode("utf-8")}
    ]
    for grade_id, text, points in (("written_link", link, 2), ("written_check", check, 1)):
        if text:
            cells.append(
                {
                    "cell_type": "markdown",
                    "source": text,
                    "metadata": {
                        "nbgrader": {
                            "grade": True,
                            "grade_id": grade_id,
                            "locked": False,
                            "points": points,
                            "schema_version": 3,
                            "solution": True,
                            "task": False,
                        }
                    },
                }
            )
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return spec.released_notebook, json.dumps(notebook, indent=1).encode()


def _near_copy(data: bytes) -> bytes:
    """Another student's code with a comment of one's own on top and the blank lines moved: what
    the similarity report is for."""
    lines = [line for line in data.decode("utf-8").splitlines() if line.strip()]
    return ("# my attention, written from scratch\n" + "\n".join(lines) + "\n").encode()


def _job(spec: Any, student: Any, submission: Any, name: str, job_model: Any, state: Path) -> Any:
    """The graded submission as the service's job, with the times an upload graded then has."""
    from gradebook.models import Submission as Recorded

    recorded = (  # this very hand-in: the same file handed in at another time is a submission of its own
        Recorded.objects.filter(
            student=student,
            assignment__name=spec.name,
            sha256=submission.sha256,
            submitted_at=submission.submitted_at.replace(microsecond=0),
        )
        .order_by("-id")
        .first()
    )
    when = submission.submitted_at
    job = job_model.objects.create(
        student=student,
        assignment=spec.name,
        file=str(submission.path.relative_to(state)),  # as service.handin.uploads keeps it
        original_name=name,
        size=submission.path.stat().st_size,
        sha256=submission.sha256,
        state=job_model.GRADED if recorded else job_model.FAILED,
        worker="demo",
        attempts=1,
        submission=recorded,
        error="" if recorded else "the grader failed on this submission",
    )
    job_model.objects.filter(pk=job.pk).update(
        created_at=when, started_at=when + timedelta(seconds=1), finished_at=when + timedelta(seconds=3)
    )
    if recorded is not None:
        Recorded.objects.filter(pk=recorded.pk).update(graded_at=when + timedelta(seconds=3))
    return job


def _marks(book: Any, specs: list[Any], students: dict[str, Any], now: datetime) -> None:
    """The TA's marks of some written answers; the others wait for the instructor."""
    from gradebook.grades import latest_rows
    from gradebook.marking.marks import give_mark

    for spec in specs:
        question = next((q for q in spec.questions if q.manual), None)
        if question is None:
            continue
        items = {item.id for item in question.rubric}
        latest = {row.student_id: row for row in latest_rows(book, spec.name)}
        for username, (rubric, comment) in MARKED.items():
            submission = latest.get(students[username].pk)
            if submission is None:
                continue
            applied = [item for item in rubric if item in items]
            give_mark(
                book,
                submission,
                question,
                0.0 if question.rubric else question.points / 2,
                comment,
                "ta",
                rubric=applied,
                at=now - timedelta(hours=6),
            )


def _extension(book: Any, specs: list[Any], students: dict[str, Any], dues: dict[str, datetime]) -> None:
    from gradebook.extensions import extend

    name, username = EXTENDED
    spec = next((spec for spec in specs if spec.name == name), None)
    if spec is not None:
        extend(book, students[username].student_id, spec, dues[name] + timedelta(days=2), by="instructor")


def _reviews(jobs: dict[tuple[str, str], Any], now: datetime) -> None:
    """One review request waiting for the staff, one answered."""
    from django.contrib.auth.models import User

    from .marking.models import ReviewMessage, ReviewRequest

    username, assignment, question, text = REVIEW
    if (username, assignment) in jobs:
        review = ReviewRequest.objects.create(job=jobs[(username, assignment)], question_id=question)
        ReviewMessage.objects.create(request=review, author=User.objects.get(username=username), text=text)
        ReviewRequest.objects.filter(pk=review.pk).update(created_at=now - timedelta(hours=3))
        ReviewMessage.objects.filter(request=review).update(at=now - timedelta(hours=3))
    username, assignment, question, text, reply = ANSWERED_REVIEW
    if (username, assignment) in jobs:
        review = ReviewRequest.objects.create(
            job=jobs[(username, assignment)], question_id=question, state=ReviewRequest.ANSWERED
        )
        ReviewMessage.objects.create(request=review, author=User.objects.get(username=username), text=text)
        ReviewMessage.objects.create(request=review, author=User.objects.get(username="ta"), by_staff=True, text=reply)
        ReviewRequest.objects.filter(pk=review.pk).update(created_at=now - timedelta(days=4))
        ReviewMessage.objects.filter(request=review, by_staff=False).update(at=now - timedelta(days=4))
        ReviewMessage.objects.filter(request=review, by_staff=True).update(at=now - timedelta(days=3, hours=20))


def _similarity(book: Any, specs: list[Any]) -> None:
    """Each assignment's similarity report, computed now (the page's button queues the next one)."""
    from gradebook.similarity.report import run_now

    for spec in specs:
        run_now(book, spec, requested_by="instructor")


def _platform() -> None:
    """A course platform registered, as `autograder lti add-platform` does (example addresses: no
    score is ever sent, since no demo student came from it)."""
    from .lti.platforms import add_platform, platform_settings

    base = "https://canvas.demo.example.edu"
    add_platform(
        platform_settings(
            name="Canvas (demo)",
            issuer=base,
            client_id="10000000000042",
            deployment_ids=["42:demo"],
            auth_url=f"{base}/api/lti/authorize_redirect",
            token_url=f"{base}/login/oauth2/token",
            keyset_url=f"{base}/api/lti/security/jwks",
        )
    )


def _exam(folder: Path, course: Any, students: dict[str, Any], now: datetime) -> None:
    """An exam built from the course's lessons, listed by the demo course and taken online by some
    students (their open answers wait for marks)."""
    from course.exams.build import build_exam
    from course.folder import find_course
    from gradebook.extensions import extend_exam

    from .core.access import book, reread_course
    from .exams.models import ExamAttempt, OnlineExam
    from .exams.sessions import key_of, save_answer, start, submit, variant_for

    lessons = [path for path in course.lesson_folders if path.is_dir()]
    if not lessons:
        return
    roster = folder / "exams" / "roster.csv"
    roster.parent.mkdir(parents=True, exist_ok=True)
    roster.write_text(
        "student_id,name,email\n" + "".join(f"{s.student_id},{s.name},{s.email}\n" for s in students.values()),
        encoding="utf-8",
    )
    exam_folder = folder / "exams" / "midterm"
    build_exam(roster, exam_folder, seed=4, questions=4, open_questions=1, lessons=lessons, title="Midterm (demo)")
    _list_exam(folder / "course.toml", "exams/midterm")
    reread_course()  # the course as it lists the exam now
    if "midterm" not in find_course(folder).exam_folders:
        raise ServiceSetupError(f"{folder / 'course.toml'}: the demo's exam could not be listed in it")
    exam = OnlineExam.objects.create(
        name="midterm",
        opens_at=now - timedelta(days=1),
        closes_at=now + timedelta(days=2),
        minutes=45,
        results=OnlineExam.AT_SUBMIT,
    )
    key = key_of(exam_folder)
    for n, username in enumerate(EXAM_TAKERS):
        attempt = start(exam, key, students[username], "127.0.0.1")
        variant = variant_for(key, students[username])
        for question in variant.questions if variant else []:
            if question.kind == "open":
                save_answer(
                    exam,
                    key,
                    attempt,
                    question.position,
                    "Attention costs O(n²) memory in the sequence's length." if n % 2 else "",
                    "127.0.0.1",
                )
            else:
                # Mostly right; each student wrong on a question or two of their own.
                letters = sorted(question.letters)
                right = key.correct_letter(question)
                wrong = next(letter for letter in letters if letter != right)
                chosen = wrong if (n + question.position) % 3 == 0 else right
                save_answer(exam, key, attempt, question.position, chosen, "127.0.0.1")
        if n < len(EXAM_TAKERS) - 1:  # the last one is still writing
            submit(exam, key, attempt, "127.0.0.1")
            # Taken yesterday evening, one after another, each in about half an hour.
            started = now - timedelta(hours=20 - n, minutes=7 * n)
            ExamAttempt.objects.filter(pk=attempt.pk).update(
                started_at=started,
                ends_at=started + timedelta(minutes=45),
                ended_at=started + timedelta(minutes=28 + 3 * n),
            )
    extend_exam(book(), students["iris"].student_id, exam.name, extra_minutes=15, by="instructor")


def _list_exam(manifest: Path, exam: str) -> None:
    """List the exam in the demo course's last module (its ``exams``, the last key written)."""
    lines = manifest.read_text(encoding="utf-8").splitlines()
    for n in range(len(lines) - 1, -1, -1):
        if lines[n].startswith("exams = "):
            listed = json.loads(lines[n].removeprefix("exams = "))
            lines[n] = f"exams = {json.dumps([*listed, exam])}"
            break
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
