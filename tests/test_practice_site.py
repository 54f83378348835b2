"""Checks a student can run but not read (issue #51), on the site: the student asks for their practice
checks from the assignment's page, the API and ``gradewright.check()``; the site queues the run and
the real worker runs it in the sandbox; the student reads each check's sentence and pass or fail,
never its code, inputs or messages (a hostile notebook that raises and prints the hidden inputs, as
the grading's never-leak tests send: tests/test_sandbox_attacks.py, tests/test_practice.py), and no
one else reads their runs. A run counts in no score and in none of the hand-in limits; its own
hourly limit answers 429 with Retry-After (eight requests at once: tests/test_submission_caps.py)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import nbformat
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.utils.html import escape

from autograder.suite import hidden_suite
from gradebook.models import Student
from gradebook.models import Submission as Recorded
from service.accounts.models import ApiToken
from service.core.access import assignment_or_404, reread_course, state
from service.handin.models import Job, PracticeJob
from service.handin.uploads import allowance

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .served import CORRECT, PARTIAL, grade_queue, hand_in, openapi_validator, student

pytestmark = [needs_sandbox, pytest.mark.usefixtures("empty_queue")]

NAME = "practice-attention"
PRACTICE = ("test_vector", "test_large_inputs_are_stable")  # softmax's, marked practice
PER_HOUR = 3
LEAK = Path(__file__).parent / "hostile" / "leak_inputs.py"


@pytest.fixture(scope="module", autouse=True)
def practice_course(tmp_path_factory):
    """The site serving the shipped course with one more assignment: sequences-and-attention, two of
    softmax's hidden tests marked practice, three runs an hour, two hand-ins in all."""
    folder = tmp_path_factory.mktemp("course")
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    listed = '"assignments/attention-not-explanation"'
    (folder / "course.toml").write_text(text.replace(listed, f'{listed}, "more/{NAME}"'), encoding="utf-8")
    for shared in ("assignments", "lesson_data"):
        (folder / shared).symlink_to(ROOT / shared)
    (folder / "more").mkdir()
    (folder / "more" / "references").symlink_to(ASSIGNMENTS / "references")
    copy = folder / "more" / NAME
    shutil.copytree(ASSIGNMENTS / "sequences-and-attention", copy, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    manifest = copy / "assignment.toml"
    checks = ", ".join(f'{name} = "practice"' for name in PRACTICE)
    text = manifest.read_text().replace('name = "sequences-and-attention"', f'name = "{NAME}"')
    text = text.replace('functions = ["softmax"]\n', f'functions = ["softmax"]\nchecks = {{ {checks} }}\n', 1)
    manifest.write_text(f"practice_per_hour = {PER_HOUR}\nmax_submissions = 2\n" + text)
    with override_settings(GRADEWRIGHT_COURSE=str(folder)):
        reread_course()
        try:
            yield folder
        finally:
            PracticeJob.objects.filter(state__in=[PracticeJob.QUEUED, PracticeJob.RUNNING]).update(
                state=PracticeJob.FAILED
            )
            reread_course()


def sentences() -> dict[str, str]:
    """The practice checks' sentences, by test name (what the student may read of them)."""
    labels = hidden_suite(assignment_or_404(NAME)).plugin.labels.values()
    return {label["name"].split("[")[0]: label["description"] for label in labels if label["name"].startswith(PRACTICE)}


def hidden_code() -> set[str]:
    """Lines of the practice checks' code, none of which may reach the student."""
    lines = (ASSIGNMENTS / "sequences-and-attention" / "hidden" / "test_softmax.py").read_text().splitlines()
    return {line.strip() for line in lines if len(line.strip()) > 20 and not line.strip().startswith(('"""', "#"))}


def ask_on_the_page(client: Client, path: Path | None = None):
    data = {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    if path is not None:
        data["notebook"] = SimpleUploadedFile(path.name, path.read_bytes())
    return client.post(f"/assignments/{NAME}/practice", data)


def live(client: Client) -> str:
    answer = client.get(f"/assignments/{NAME}/practice?part=live")
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_student_runs_the_practice_checks_on_the_assignment_page():
    """Refused before anything is handed in or sent; a notebook sent for the run alone (kept no
    longer than the run): each check's sentence and pass or fail, on the page, which asks again
    until the run is done; no hand-in is made and no grade recorded. Nothing sent once a notebook is
    handed in: that hand-in's file, which takes none of the hand-ins allowed."""
    user, client = student()
    client.get(f"/assignments/{NAME}/")  # the CSRF cookie, as a browser has it
    page = client.get(f"/assignments/{NAME}/").content.decode()
    assert 'id="practice"' in page and "2 practice checks" in page and f"{PER_HOUR} runs left this hour" in page
    refused = ask_on_the_page(client)
    assert refused.status_code == 302 and refused["Location"] == f"/assignments/{NAME}/#practice"
    assert "hand in your notebook first" in client.get(f"/assignments/{NAME}/").content.decode()

    assert ask_on_the_page(client, CORRECT)["Location"] == f"/assignments/{NAME}/#practice"
    waiting = live(client)
    assert 'data-state="queued"' in waiting and "hx-get" in waiting
    grade_queue()
    done = live(client)
    assert 'data-state="done"' in done and "hx-get" not in done  # finished: the page stops asking
    assert "2 of 2 practice checks pass" in done and CORRECT.name in done
    assert all(escape(sentence) in done for sentence in sentences().values())
    assert not Job.objects.filter(student__student_id=user.username).exists()  # no hand-in
    assert not Recorded.objects.filter(student__student_id=user.username).exists()  # no grade
    assert not any((state() / "practice" / NAME).glob("*/*"))  # the notebook sent is not kept

    hand_in(client, PARTIAL, NAME)  # left queued: a run on a hand-in needs no grade of it
    job = Job.objects.get(student__student_id=user.username)
    ask_on_the_page(client)  # nothing sent: the latest hand-in
    assert f"your hand-in {job.id}" in live(client)
    run = PracticeJob.objects.filter(student=job.student).latest("id")
    assert (run.file, run.handed_in_id) == (job.file, job.id)
    assert allowance(job.student, assignment_or_404(NAME)) is None  # two runs, one hand-in: one hand-in left
    run.delete()  # not for a later test's worker


def test_no_face_shows_a_practice_checks_code_inputs_or_messages_and_no_one_else_reads_a_run(
    tmp_path, monkeypatch, capsys
):
    """A hostile notebook that raises and prints the hidden inputs, checked with gradewright's check()
    (which asks the server for the practice checks when signed in): the checks fail, and what check()
    prints, the API's answer and the page hold each check's sentence and outcome only. Another student
    and an anonymous visitor are refused the run."""
    from gradewright import cell

    user, client = student()
    token = ApiToken.issue(user)
    server = "http://testserver"

    def through_the_site(method, url, headers, timeout, data=None, files=None, **options):
        """httpx's request, answered by the site; the worker runs what a request queued."""
        site = Client()
        path = urlsplit(url).path
        if method == "POST":
            fields = dict(data or {})
            for field, (name, content) in (files or {}).items():
                fields[field] = SimpleUploadedFile(name, content)
            answer = site.post(path, fields, HTTP_AUTHORIZATION=headers["Authorization"])
            grade_queue()
        else:
            answer = site.get(path, HTTP_AUTHORIZATION=headers["Authorization"])
        return httpx.Response(answer.status_code, headers=dict(answer.items()), content=answer.content)

    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    monkeypatch.delenv("GRADEWRIGHT_URL", raising=False)
    monkeypatch.setattr("service.handin.client.saved_logins", lambda: {server: {"token": token}})
    monkeypatch.setattr(cell.httpx, "request", through_the_site)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LEAK.read_text())])
    notebook.metadata["gradewright"] = {"assignment": NAME}
    path = tmp_path / f"{NAME}.ipynb"
    nbformat.write(notebook, path)
    cell.check(path, server=server)
    printed = capsys.readouterr().out
    assert "practice checks (run on the server): 0 of 2 pass" in printed, printed

    (run,) = PracticeJob.objects.filter(student__student_id=user.username)
    api = Client().get(f"/api/v1/practice/{run.id}", HTTP_AUTHORIZATION=f"Token {token}")
    assert api.status_code == 200
    told = api.json()
    openapi_validator("PracticeRun").validate(told)
    assert told["state"] == "done" and told["passed"] == 0 and len(told["checks"]) == 2
    assert {check["sentence"] for check in told["checks"]} == set(sentences().values())
    assert all(set(check) == {"question", "sentence", "passed", "status"} for check in told["checks"])
    page = client.get(f"/assignments/{NAME}/").content.decode()
    for face, text in {"check()": printed, "API": api.content.decode(), "page": page}.items():
        assert "SECRET" not in text, face
        assert [line for line in hidden_code() if line in text] == [], face
        assert not re.search(r"\[\[?-?\d+\.\d+", text), face  # no array of inputs or expected values

    other_user, other = student()
    other_token = ApiToken.issue(other_user)
    assert Client().get(f"/api/v1/practice/{run.id}", HTTP_AUTHORIZATION=f"Token {other_token}").status_code == 404
    assert other.get(f"/api/v1/practice/{run.id}").status_code == 404
    assert Client().get(f"/api/v1/practice/{run.id}").status_code == 401
    assert "No run yet." in live(other)  # a student's page shows their own runs alone
    anonymous = Client().get(f"/assignments/{NAME}/practice?part=live")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_the_hourly_limit_refuses_with_retry_after_and_takes_no_hand_in():
    """Three runs an hour: the fourth request is 429 with Retry-After, and the page says when the next
    is possible instead of its button; the student may still hand in, and an assignment without
    practice checks refuses a run, saying so."""
    user, client = student()
    token = ApiToken.issue(user)
    api = Client()

    def ask(assignment: str = NAME):
        return api.post(
            f"/api/v1/assignments/{assignment}/practice",
            {"file": SimpleUploadedFile(CORRECT.name, CORRECT.read_bytes())},
            HTTP_AUTHORIZATION=f"Token {token}",
        )

    answers = [ask() for _ in range(PER_HOUR + 1)]
    assert [a.status_code for a in answers] == [201] * PER_HOUR + [429]
    assert answers[0].json()["state"] == "queued" and answers[0].json()["notebook"] == CORRECT.name
    refused = answers[-1]
    assert refused.json()["error"].startswith(f"{PER_HOUR} runs of the practice checks per hour: the next one")
    assert 0 < int(refused["Retry-After"]) <= 3600
    page = client.get(f"/assignments/{NAME}/").content.decode()
    assert "runs of the practice checks per hour" in page and "Run the practice checks" not in page
    listed = {
        a["name"]: a for a in api.get("/api/v1/assignments", HTTP_AUTHORIZATION=f"Token {token}").json()["assignments"]
    }
    assert listed[NAME]["practice_checks"] == 2 and listed[NAME]["can_submit"] is True
    assert listed["sequences-and-attention"]["practice_checks"] == 0
    plain = ask("sequences-and-attention")
    assert plain.status_code == 404 and plain.json()["error"] == "this assignment has no practice checks"
    PracticeJob.objects.filter(student__student_id=user.username).update(state=PracticeJob.DONE)  # none left to run


def test_a_worker_that_lost_a_runs_lease_ends_nothing_and_keeps_its_notebook():
    """A worker paused past its lease while another claimed the run: its end writes nothing and
    leaves the notebook sent for the run, which the run's new holder still has to read."""
    from service.handin.practice import _claim, _end, request_practice

    user, _ = student()
    owner = Student.objects.get(student_id=user.username)
    run = request_practice(state(), owner, assignment_or_404(NAME), (CORRECT.name, CORRECT.read_bytes()))
    notebook = state() / run.file
    claimed = _claim("paused-worker", state())
    assert claimed is not None and claimed.id == run.id and notebook.is_file()
    PracticeJob.objects.filter(id=run.id).update(lease="another-workers-token")  # its lease taken meanwhile
    _end(claimed, state(), state=PracticeJob.DONE, result={"checks": []})
    assert PracticeJob.objects.get(id=run.id).state == PracticeJob.RUNNING  # the new holder's, unchanged
    assert notebook.is_file()
    PracticeJob.objects.filter(id=run.id).delete()  # not for a later test's worker
