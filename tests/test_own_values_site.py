"""A notebook of one's own on the site (issue #52): the assignment page's download, the API's (what
gradewright.fetch() and JupyterLab's Fetch call) each give a student the notebook with the values
drawn for them; a notebook handed in with another's values is named on the staff's pages, and
whose values it holds (escaped: student ids and names are the students' text)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from autograder.batch import GradeOptions
from autograder.own_values import assigned_values, student_values
from gradebook.models import SimilarityRun, Student
from service.accounts.models import ApiToken, Member
from service.core.access import assignment_or_404, course, reread_course, state
from service.handin.models import Job
from service.handin.releases import released_notebook
from service.handin.worker import run_worker

from .conftest import ROOT, needs_sandbox
from .served import hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")

NAME = "attention-of-your-own"
PLAIN = "sequences-and-attention"
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module", autouse=True)
def own_values_course(tmp_path_factory):
    """The site serving the shipped course with the assignment of one's own added (its assignments
    and lessons the shipped folders themselves)."""
    folder = tmp_path_factory.mktemp("course")
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    listed = '"assignments/attention-not-explanation"'
    assert listed in text
    (folder / "course.toml").write_text(text.replace(listed, f'{listed}, "assignments/{NAME}"'), encoding="utf-8")
    for shared in ("assignments", "lesson_data"):
        (folder / shared).symlink_to(ROOT / shared)
    with override_settings(GRADEWRIGHT_COURSE=str(folder)):
        reread_course()
        try:
            yield folder
        finally:
            reread_course()


def values_of(body: bytes) -> dict:
    notebook = json.loads(body)
    spec = assignment_or_404(NAME)
    cells = ["".join(c["source"]) for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", [])]
    return assigned_values(cells, spec.parameters)


def test_each_student_gets_their_own_notebook_from_the_page_and_the_api():
    """ada gets the same values twice, from the page and from the API alike, the file named as
    released; grace gets hers; an assignment without parameters is the released file, byte for byte."""
    spec = assignment_or_404(NAME)
    users, clients = zip(student(), student(), strict=True)
    got = {}
    for user, client in zip(users, clients, strict=True):
        page = client.get(f"/assignments/{NAME}/notebook")
        again = client.get(f"/assignments/{NAME}/notebook?student=someone-else")  # no say in whose it is
        api = client.get(f"/api/v1/assignments/{NAME}/notebook")
        for response in (page, again, api):
            assert response.status_code == 200
            assert response["Content-Type"] == "application/json"
            assert response["Content-Disposition"] == f'attachment; filename="{spec.released_notebook}"'
        assert page.content == again.content == api.content
        own = student_values(spec, user.username)
        assert values_of(page.content) == own
        assert json.loads(page.content)["metadata"]["gradewright"]["student"] == user.username
        got[user.username] = own
    assert len({json.dumps(values, sort_keys=True) for values in got.values()}) == 2  # their own, not one for all

    plain = clients[0].get(f"/assignments/{PLAIN}/notebook")
    released = released_notebook(assignment_or_404(PLAIN), state()).read_bytes()
    assert plain.status_code == 200 and plain.content == released
    assert clients[0].get(f"/api/v1/assignments/{PLAIN}/notebook").content == released


def test_gradewright_fetch_writes_the_students_own_values(tmp_path, monkeypatch):
    """gradewright.fetch() (JupyterLab's Fetch calls it) through the API with the student's token:
    the notebook it writes holds the values drawn for that student."""
    from gradewright import cell

    user, _ = student()
    token = ApiToken.issue(user)
    server = "http://testserver"

    def through_the_site(method, url, headers, timeout, **options):  # httpx's request, answered by the site
        answer = Client().generic(method, urlsplit(url).path, HTTP_AUTHORIZATION=headers["Authorization"])
        return httpx.Response(answer.status_code, headers=dict(answer.items()), content=answer.content)

    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    monkeypatch.setattr("service.handin.client.saved_logins", lambda: {server: {"token": token}})
    monkeypatch.setattr(cell.httpx, "request", through_the_site)
    path = cell.fetch(NAME, folder=tmp_path, server=server)
    assert path.name == assignment_or_404(NAME).released_notebook
    assert values_of(path.read_bytes()) == student_values(assignment_or_404(NAME), user.username)


def test_the_download_is_refused_to_anonymous_users_and_outsiders():
    for url in (f"/assignments/{NAME}/notebook", f"/api/v1/assignments/{NAME}/notebook"):
        anonymous = Client().get(url)
        if url.startswith("/api/"):
            assert anonymous.status_code == 401
        else:
            assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
        outsider = Client()
        outsider.force_login(User.objects.create_user(f"o{uuid.uuid4().hex[:8]}"))  # not a member
        assert outsider.get(url).status_code == 404
        assert b"cells" not in outsider.get(url).content


def _member(student_id: str) -> Client:
    """A student whose id is ``student_id`` (the roster's text, which may be hostile)."""
    user = User.objects.create_user(f"u{uuid.uuid4().hex[:10]}")
    row = Student.objects.create(student_id=student_id, name=student_id, on_roster=True)
    Member.objects.create(user=user, role=Member.STUDENT, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _staff() -> Client:
    user = User.objects.create_user(f"t{uuid.uuid4().hex[:10]}")
    Member.objects.create(user=user, role=Member.TA)
    client = Client()
    client.force_login(user)
    return client


@needs_sandbox
def test_a_notebook_handed_in_with_anothers_values_is_named_on_the_staffs_pages(tmp_path):
    """grace hands in the notebook ada downloaded: graded with grace's values, and the staff's record
    of grace and the submission's page say it holds ada's (her id escaped: it is hostile text)."""
    ada_id = f"ada-{uuid.uuid4().hex[:6]}{HOSTILE}"
    ada = _member(ada_id)
    grace_user, grace = student()
    copied = tmp_path / assignment_or_404(NAME).released_notebook
    copied.write_bytes(ada.get(f"/assignments/{NAME}/notebook").content)
    assert hand_in(grace, copied, assignment=NAME).status_code == 302
    assert run_worker(course(), state(), GradeOptions(jobs=1, reference="solution"), once=True) == 1
    job = Job.objects.get(student__student_id=grace_user.username, assignment=NAME)
    assert job.state == Job.GRADED
    assert job.submission.own_values["matches"] is False
    assert job.submission.own_values["student"] == student_values(assignment_or_404(NAME), grace_user.username)

    staff = _staff()
    escaped = ada_id.replace("<", "&lt;").replace(">", "&gt;")
    for url in (f"/staff/students/{grace_user.username}/", f"/submissions/{job.id}/"):
        page = staff.get(url)
        text = page.content.decode()
        assert page.status_code == 200
        assert f"The notebook holds {escaped}&#x27;s values, not the ones drawn for {grace_user.username}" in text
        assert HOSTILE not in text
    # grace's own page tells her the values are not hers (the grader's sentence), never whose they are
    own_page = grace.get(f"/submissions/{job.id}/").content.decode()
    assert "values are not the ones drawn for you" in own_page and "not-their-values" not in own_page


def test_the_similarity_page_lists_notebooks_that_hold_anothers_values():
    """The stored report's values: each named with whose values it holds, escaped."""
    tag = uuid.uuid4().hex[:6]
    SimilarityRun.objects.filter(assignment=NAME).delete()
    report = {
        "assignment": NAME,
        "compared": 3,
        "values": [{"student": f"grace-{tag}", "holds": f"ada-{tag}{HOSTILE}"}, {"student": f"alan-{tag}"}],
    }
    now = datetime.now(UTC)
    SimilarityRun.objects.create(
        assignment=NAME, threshold=0.5, state=SimilarityRun.DONE, requested_at=now, finished_at=now, report=report
    )
    page = _staff().get(f"/staff/similarity/{NAME}/")
    text = page.content.decode()
    assert page.status_code == 200 and 'id="not-their-values"' in text
    assert f"grace-{tag}&#x27;s notebook holds ada-{tag}&lt;img src=x onerror=alert(1)&gt;&#x27;s values" in text
    assert f"alan-{tag}&#x27;s notebook holds values drawn for no one in the class" in text
    assert HOSTILE not in text
    assert f'href="/staff/students/grace-{tag}/"' in text
