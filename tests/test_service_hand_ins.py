"""Students hand in on the assignment's page and read their own feedback, and nothing else: a bad
file refused before anything is stored, a file's name shown inert, the manifest's submission limits
and hidden results, an assignment the instructor closes to hand-ins. Django's test client (CSRF
enforced, as a browser meets it), jobs graded by the real worker in the real sandbox."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from autograder.assignment import load_assignment
from autograder.known import known_sentences
from gradebook.models import Extension, Student
from service.accounts.models import Member
from service.core.access import assignments, state
from service.handin.models import Job
from service.handin.uploads import allowance, stored_upload
from service.settings import MAX_UPLOAD_BYTES
from untrusted.mathml import plain_text_math

from .conftest import needs_sandbox
from .served import CORRECT, PARTIAL, grade_queue, hand_in, openapi_validator, student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


def zombie_children() -> list[int]:
    """This process's children that have ended and not been reaped."""
    zombies = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state == "Z":
                zombies.append(int(child))
    return zombies


@needs_sandbox
def test_a_student_hands_in_and_reads_only_their_own_feedback():
    alice, as_alice = student()
    bob, as_bob = student()
    instructor, as_instructor = student(Member.INSTRUCTOR)
    assert hand_in(as_instructor, CORRECT).status_code == 302  # staff may try the site
    answer = hand_in(as_alice, PARTIAL)
    assert answer.status_code == 302
    job = Job.objects.get(student__student_id=alice.username)
    assert answer["Location"] == f"/submissions/{job.id}/"
    assert job.state == Job.QUEUED
    assert as_alice.get(f"/submissions/{job.id}/").content.decode().count('data-state="queued"') == 1
    left_before = set(zombie_children())  # another test's, not this worker's to reap
    assert grade_queue() >= 1
    assert set(zombie_children()) - left_before == set()  # a long-running worker reaps every process its grading left

    page = as_alice.get(f"/submissions/{job.id}/").content.decode()
    assert "Score: 7.38 / 10" in page and "missing_sqrt.py" in page  # rounded on the page, not in the API
    api = as_alice.get(f"/api/v1/submissions/{job.id}").json()
    assert api["state"] == "graded" and api["report"]["score"] == 7.375
    assert not {"submission", "reference", "sandbox"} & set(api["report"])  # the grader's paths and tools
    attention = next(q for q in api["report"]["questions"] if q["id"] == "attention")
    assert attention["status"] == "partial" and attention["feedback"]
    # Its known mistake named first (its math as MathML, issue #49), then the mutant it matches (issue #50),
    # then the failing checks as a list, not a block of lines (issue #41).
    sentence = known_sentences(load_assignment(PARTIAL.parent.parent))[PARTIAL.name]
    mutant = "Your scaled_dot_product_attention matches one that does not divide by np.sqrt(d_k)."
    assert attention["feedback"].startswith(f"{sentence}\n{mutant}\n")
    assert "<msqrt>" in plain_text_math(sentence)
    assert (
        page.index(f'<p class="mb-1 fw-semibold">{plain_text_math(sentence)}</p>')
        < page.index(f'<p class="mb-1">{escape(mutant)}</p>')
        < page.index('<ul class="failing-checks')
    )
    assert "<pre>" not in page.split('class="question-feedback"')[1].split("</td>")[0]

    # Bob sees none of it: the page, the API and the lists answer as if it did not exist.
    assert as_bob.get(f"/submissions/{job.id}/").status_code == 404
    assert as_bob.get(f"/api/v1/submissions/{job.id}").status_code == 404
    assert as_bob.get("/api/v1/submissions").json() == {"submissions": []}
    assert alice.username not in as_bob.get("/assignments/sequences-and-attention/").content.decode()
    # Staff see every submission.
    _, as_ta = student(Member.TA)
    assert as_ta.get(f"/api/v1/submissions/{job.id}").json()["report"]["score"] == 7.375
    # The staff read everyone's grades through the API; a student may not.
    grades = as_ta.get("/api/v1/assignments/sequences-and-attention/grades").json()
    openapi_validator("Grade").validate(grades["grades"][0])
    alices = next(g for g in grades["grades"] if g["student_id"] == alice.username)
    assert (alices["score"], alices["final_score"], alices["questions"]["attention"]) == (7.375, 7.375, 0.375)
    assert as_bob.get("/api/v1/assignments/sequences-and-attention/grades").status_code == 403
    # The staff's own tries are kept, and never counted in grades.
    from gradebook.grades import current_grades
    from service.core.access import book

    graded = {grade.student_id for grade in current_grades(book(), assignments()["sequences-and-attention"])}
    assert alice.username in graded and not any(student_id.startswith("staff:") for student_id in graded)
    assert Job.objects.get(student__student_id=f"staff:{instructor.username}").state == Job.GRADED
    # Signed out: the sign-in page, or 401 from the API.
    anonymous = Client()
    assert anonymous.get(f"/submissions/{job.id}/").status_code == 302
    assert anonymous.get(f"/api/v1/submissions/{job.id}").status_code == 401


@pytest.mark.parametrize(
    "name, content, refusal",
    [
        ("notes.txt", b"print(1)", "hand in a notebook (.ipynb) or a Python file (.py)"),
        ("big.py", b"#" * (MAX_UPLOAD_BYTES + 1), "the limit is 5 MB"),
        ("broken.ipynb", b"{not json", "the notebook is not valid JSON"),
        ("list.ipynb", b"[1, 2]", "the notebook has no list of cells"),
        ("binary.py", b"\x00\x01\x02", "the file is binary"),
        ("latin.py", "x = 'caf\u00e9'".encode("latin-1"), "the file is not UTF-8 text"),
        ("empty.py", b"", "the file is empty"),
    ],
    ids=["type", "size", "json", "not-a-notebook", "binary", "encoding", "empty"],
)
def test_a_bad_hand_in_is_refused_before_it_is_stored(tmp_path, name, content, refusal):
    user, client = student()
    path = tmp_path / "upload"
    path.write_bytes(content)
    answer = hand_in(client, path, name=name)
    assert answer.status_code == 302 and answer["Location"] == "/assignments/sequences-and-attention/"
    assert refusal in client.get(answer["Location"]).content.decode()
    assert not Job.objects.filter(student__student_id=user.username).exists()
    uploads = state() / "uploads"
    before = sorted(uploads.rglob("*")) if uploads.exists() else []
    from django.core.files.uploadedfile import SimpleUploadedFile

    api = client.post(
        "/api/v1/submissions",
        {"assignment": "sequences-and-attention", "file": SimpleUploadedFile(name, content)},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert api.status_code == 400 and refusal in api.json()["error"]
    assert (sorted(uploads.rglob("*")) if uploads.exists() else []) == before


def test_a_file_name_that_is_html_reaches_the_pages_inert(tmp_path):
    user, client = student()
    path = tmp_path / "x.py"
    path.write_text("def softmax(x):\n    return x\n")
    answer = hand_in(client, path, name="<img src=x onerror=alert(1)>.py")
    page = client.get(answer["Location"]).content.decode()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;.py" in page
    job = Job.objects.get(student__student_id=user.username)
    # Stored under the server's name, in the uploads folder; the job keeps it relative to the state
    # folder (service/handin/uploads.py: stored_upload), so it is resolved against it.
    stored = stored_upload(state(), job.file)
    assert not Path(job.file).is_absolute() and stored.name == "submission.py" and stored.is_file()
    assert stored.resolve().is_relative_to((state() / "uploads").resolve())
    Job.objects.filter(id=job.id).delete()


def test_submission_limits_and_hidden_results_follow_the_manifest():
    user, _ = student()
    row = Student.objects.get(student_id=user.username)
    spec = assignments()["sequences-and-attention"]
    limited = spec.model_copy(update={"max_submissions": 2, "submissions_per_hour": 1})
    assert allowance(row, limited) is None
    Job.objects.create(
        student=row, assignment=spec.name, file="x", original_name="x.py", size=1, sha256="0" * 64, state=Job.GRADED
    )
    assert allowance(row, limited).startswith("1 submission per hour: the next one is possible at ")
    Job.objects.filter(student=row).update(created_at=timezone.now() - timedelta(hours=2))
    assert allowance(row, limited) is None
    Job.objects.create(
        student=row, assignment=spec.name, file="x", original_name="x.py", size=1, sha256="1" * 64, state=Job.FAILED
    )
    assert allowance(row, limited) is None  # a submission the grader failed on does not count
    Job.objects.filter(student=row).update(state=Job.GRADED)
    assert allowance(row, limited) == "you have used all 2 submissions of this assignment"

    from service.core.access import hidden_results_visible

    now = timezone.now()
    assert hidden_results_visible(spec, row)
    assert not hidden_results_visible(spec.model_copy(update={"feedback": "hidden"}), row)
    after_due = spec.model_copy(update={"feedback": "after_due", "due": now + timedelta(days=1)})
    assert not hidden_results_visible(after_due, row)
    assert hidden_results_visible(after_due.model_copy(update={"due": now - timedelta(minutes=1)}), row)
    from gradebook.models import Assignment as AssignmentRow

    assignment_row, _ = AssignmentRow.objects.get_or_create(name=spec.name)
    Extension.objects.create(student=row, assignment=assignment_row, until=now + timedelta(days=2), granted_at=now)
    assert not hidden_results_visible(after_due.model_copy(update={"due": now - timedelta(minutes=1)}), row)


def test_the_instructor_closes_and_opens_an_assignment_to_hand_ins():
    _, as_student = student()
    _, instructor = student(Member.INSTRUCTOR)
    _, assistant = student(Member.TA)
    page = "/assignments/sequences-and-attention/"

    def press(client, value):
        client.get(page)
        return client.post(page, {"submissions": value, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})

    assert press(assistant, "close").status_code == 404  # a course setting: the instructor's
    assert press(as_student, "close").status_code == 404
    try:
        assert press(instructor, "close").status_code == 302
        shown = as_student.get(page).content.decode()
        assert "the instructor has closed this assignment to submissions" in shown and 'name="notebook"' not in shown
        refused = hand_in(as_student, PARTIAL)
        assert "closed this assignment" in as_student.get(refused["Location"]).content.decode()
        from service.accounts.models import ApiToken  # the API refuses it too

        secret = ApiToken.issue(User.objects.get(username=as_student.get(page).wsgi_request.user.username))
        with PARTIAL.open("rb") as handle:
            api = Client(HTTP_AUTHORIZATION=f"Token {secret}").post(
                "/api/v1/submissions", {"assignment": "sequences-and-attention", "file": handle}
            )
        assert api.status_code >= 400 and "closed this assignment" in api.content.decode()
        assert "Open submissions" in instructor.get(page).content.decode()
    finally:
        press(instructor, "open")
    assert 'name="notebook"' in as_student.get(page).content.decode()
