"""JupyterHub sign-in (service/accounts/hub.py): every hub token is checked with the hub, never a username the
request states; hub groups give the role; each kind of refusal reads clearly.

A fake hub on loopback answers the two calls the site makes (``GET /hub/api/user`` with a token, and
the OAuth code exchange ``POST /hub/api/oauth2/token``, PKCE checked); the real hub is in
tests/test_hub_browser.py."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from gradebook.models import Student
from service.accounts import hub
from service.accounts.models import ApiToken, Member

from .conftest import ASSIGNMENTS

pytestmark = pytest.mark.timeout(120)
NOTEBOOK = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_fresh_notebook.ipynb"
SERVICE_TOKEN = "the-service-own-token"


class FakeHub:
    """Tokens -> user models, codes -> (token, PKCE challenge); counts the token checks it answers."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict] = {}
        self.codes: dict[str, tuple[str, str]] = {}
        self.checks = 0
        self.slow = False
        hub_state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path != "/hub/api/user":
                    return self.answer(404, {"message": "not found"})
                hub_state.checks += 1
                if hub_state.slow:
                    time.sleep(3)
                scheme, _, token = self.headers.get("Authorization", "").partition(" ")
                model = hub_state.tokens.get(token) if scheme == "token" else None
                self.answer(200, model) if model else self.answer(403, {"message": "Forbidden"})

            def do_POST(self) -> None:
                form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                one = {key: values[0] for key, values in form.items()}
                pending = hub_state.codes.pop(one.get("code", ""), None)
                verifier = one.get("code_verifier", "")
                digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
                if (
                    self.path != "/hub/api/oauth2/token"
                    or pending is None
                    or one.get("client_secret") != SERVICE_TOKEN
                    or one.get("client_id") != "service-gradewright"
                    or digest != pending[1]
                ):
                    return self.answer(400, {"error": "invalid_grant"})
                self.answer(200, {"access_token": pending[0], "token_type": "Bearer"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.handle_error = lambda *args: None  # the slow answer's reader gone: nothing to report
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token_for(self, name: str, groups: tuple[str, ...] = (), kind: str = "user") -> str:
        token = secrets.token_hex(16)
        self.tokens[token] = {
            "kind": kind,
            "name": name,
            "groups": list(groups),
            "admin": False,
            "scopes": ["access:services!service=gradewright", f"read:users:name!user={name}"],
        }
        return token


@pytest.fixture(scope="module")
def fake_hub():
    made = FakeHub()
    yield made
    made.server.shutdown()
    made.server.server_close()


def hub_settings(api_url: str, **changes) -> dict:
    return {
        "api_url": api_url,
        "api_token": SERVICE_TOKEN,
        "client_id": "service-gradewright",
        "callback_url": "http://testserver/oauth_callback",
        "authorize_url": f"{api_url}/oauth2/authorize",
        "username_claim": "name",
        "instructor_groups": frozenset({"instructors"}),
        "ta_groups": frozenset({"teaching-assistants"}),
        "timeout": 1.0,
        "cache_seconds": 0.0,
        "access_scope": "access:services!service=gradewright",
        **changes,
    }


@pytest.fixture
def on_hub(fake_hub):
    """The site as the fake hub's service, no token check remembered between requests."""
    hub._cache.clear()
    hub._oauth.cache_clear()
    with override_settings(GRADEWRIGHT_HUB=hub_settings(f"{fake_hub.url}/hub/api"), LOGIN_URL="hub-login"):
        yield fake_hub
    hub._cache.clear()
    hub._oauth.cache_clear()


def roster_student() -> str:
    name = f"h{uuid.uuid4().hex[:10]}"
    Student.objects.create(student_id=name, name=name.title(), on_roster=True)
    return name


def api(token: str, path: str = "/api/v1/submissions", claimed: str | None = None, **options):
    headers = {"Authorization": f"token {token}"}
    if claimed is not None:
        headers[hub.CLAIMED_USER_HEADER] = claimed
    client = Client(enforce_csrf_checks=True)
    if "data" in options:
        return client.post(path, headers=headers, **options)
    return client.get(path, headers=headers)


def hand_in(token: str):
    with NOTEBOOK.open("rb") as handle:
        upload = SimpleUploadedFile("attempt.ipynb", handle.read())
    return api(token, data={"assignment": "sequences-and-attention", "file": upload})


def test_a_roster_students_hub_token_hands_in_as_them_and_another_students_token_is_refused_it(on_hub):
    first, second = roster_student(), roster_student()
    first_token, second_token = on_hub.token_for(first), on_hub.token_for(second)
    handed = hand_in(first_token)
    assert handed.status_code == 201, handed.content
    job_id = handed.json()["id"]
    assert User.objects.get(username=first).member.student.student_id == first  # the roster's student
    mine = api(first_token, f"/api/v1/submissions/{job_id}")
    assert mine.status_code == 200 and mine.json()["assignment"] == "sequences-and-attention"
    theirs = api(second_token, f"/api/v1/submissions/{job_id}")
    assert theirs.status_code == 404 and theirs.json() == {"error": "no such submission"}
    assert api(second_token).json() == {"submissions": []}
    # Naming the first student while holding the second's token: refused, never taken at its word.
    posing = api(second_token, f"/api/v1/submissions/{job_id}", claimed=first)
    assert posing.status_code == 403
    assert posing.json()["error"] == f"this hub token is another user's, not {first!r}'s: hand in with your own"
    assert api(first_token, claimed=first).status_code == 200


def test_a_token_the_hub_does_not_know_or_has_revoked_is_refused(on_hub):
    name = roster_student()
    token = on_hub.token_for(name)
    assert api(token).status_code == 200
    del on_hub.tokens[token]  # revoked (or expired) at the hub
    revoked = api(token)
    assert revoked.status_code == 401
    assert revoked.json()["error"].startswith("the hub does not accept this token: it has expired, was revoked")
    never = api("0123456789abcdef0123456789abcdef")
    assert never.status_code == 401 and never.json() == revoked.json()


def test_a_hub_that_is_down_or_too_slow_is_a_clear_refusal(on_hub):
    name = roster_student()
    token = on_hub.token_for(name)
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with override_settings(GRADEWRIGHT_HUB=hub_settings(f"http://127.0.0.1:{port}/hub/api")):
        down = api(token)
    assert down.status_code == 503
    assert down.json()["error"].startswith(f"the hub (http://127.0.0.1:{port}/hub/api) cannot be reached to check")
    on_hub.slow = True  # answers after three seconds; the site waits one
    try:
        slow = api(token)
    finally:
        on_hub.slow = False
    assert slow.status_code == 503 and "cannot be reached to check the token (ReadTimeout)" in slow.json()["error"]


def test_hub_users_off_the_roster_and_services_tokens_are_refused(on_hub):
    stranger = api(on_hub.token_for("not-on-the-roster"))
    assert stranger.status_code == 403
    assert stranger.json()["error"] == "hub user 'not-on-the-roster' is not on the course's roster; ask your instructor"
    service = api(on_hub.token_for("announcer", kind="service"))
    assert service.status_code == 403 and "a hub service's token, not a hub user's" in service.json()["error"]


def test_a_hub_token_without_access_to_the_site_is_refused(on_hub):
    name = roster_student()
    token = on_hub.token_for(name)
    on_hub.tokens[token]["scopes"] = [f"read:users:name!user={name}"]  # a token made for something else
    refused = api(token)
    assert refused.status_code == 403
    assert refused.json()["error"].startswith(
        "this hub token is not one for this site: it lacks the scope 'access:services!service=gradewright'"
    )
    on_hub.tokens[token]["scopes"] = ["access:services"]  # every service's: this one's too
    assert api(token).status_code == 200


def test_hub_groups_give_the_role(on_hub):
    teacher = f"t{uuid.uuid4().hex[:8]}"
    assistant = f"a{uuid.uuid4().hex[:8]}"
    teacher_token = on_hub.token_for(teacher, ("instructors", "everyone"))
    assistant_token = on_hub.token_for(assistant, ("teaching-assistants",))
    assert api(teacher_token, "/api/v1/assignments/sequences-and-attention/grades").status_code == 200
    assert User.objects.get(username=teacher).member.role == Member.INSTRUCTOR
    assert api(assistant_token, "/api/v1/assignments/sequences-and-attention/grades").status_code == 200
    assert User.objects.get(username=assistant).member.role == Member.TA
    student = roster_student()
    refused = api(on_hub.token_for(student, ("everyone",)), "/api/v1/assignments/sequences-and-attention/grades")
    assert refused.status_code == 403 and refused.json() == {"error": "only the course's staff see everyone's grades"}
    # Out of the hub's group, out of the role: the hub decides at every check (not on the roster,
    # the former assistant is refused as a student would be).
    on_hub.tokens[assistant_token]["groups"] = []
    assert api(assistant_token, "/api/v1/assignments/sequences-and-attention/grades").status_code == 403


def test_the_username_claim_is_configurable(on_hub, fake_hub):
    name = roster_student()
    token = on_hub.token_for("someone-else")
    on_hub.tokens[token]["student_number"] = name
    with override_settings(GRADEWRIGHT_HUB=hub_settings(f"{fake_hub.url}/hub/api", username_claim="student_number")):
        assert api(token).status_code == 200
    assert User.objects.filter(username=name).exists() and not User.objects.filter(username="someone-else").exists()


def test_the_check_is_remembered_a_few_seconds_by_the_tokens_hash_only(on_hub, fake_hub):
    name = roster_student()
    token = on_hub.token_for(name)
    with override_settings(GRADEWRIGHT_HUB=hub_settings(f"{fake_hub.url}/hub/api", cache_seconds=30.0)):
        before = on_hub.checks
        assert api(token).status_code == 200 and api(token).status_code == 200
        assert on_hub.checks == before + 1
        assert token not in json.dumps(list(hub._cache)) and hashlib.sha256(token.encode()).hexdigest() in hub._cache


def test_the_sites_own_tokens_still_work_beside_the_hubs(on_hub):
    name = roster_student()
    user = User.objects.create_user(f"own-{name}", password="a long password 123")
    Member.objects.create(user=user, role=Member.STUDENT, student=Student.objects.get(student_id=name))
    own = ApiToken.issue(user)
    before = on_hub.checks
    assert Client().get("/api/v1/submissions", headers={"Authorization": f"Token {own}"}).status_code == 200
    assert on_hub.checks == before  # the site's own token is never sent to the hub
    # A hub token of that roster student reaches the same account.
    assert api(on_hub.token_for(name)).status_code == 200
    assert Member.objects.filter(student__student_id=name).count() == 1


def start_sign_in(client: Client, next_url: str = "/assignments/") -> dict[str, str]:
    started = client.get("/hub/login/", {"next": next_url})
    assert started.status_code == 302
    location = urlparse(started["Location"])
    query = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert location.path == "/hub/api/oauth2/authorize" and query["client_id"] == "service-gradewright"
    assert query["redirect_uri"] == "http://testserver/oauth_callback" and query["code_challenge_method"] == "S256"
    return query


def test_a_hub_user_is_signed_in_through_the_hubs_oauth(on_hub):
    name = roster_student()
    client = Client()
    assert client.get("/assignments/")["Location"].startswith("/hub/login/?next=")  # no second password asked
    query = start_sign_in(client)
    code = secrets.token_hex(8)
    on_hub.codes[code] = (on_hub.token_for(name), query["code_challenge"])  # the hub's authorize page, approved
    back = client.get("/oauth_callback", {"code": code, "state": query["state"]})
    assert back.status_code == 302 and back["Location"] == "/assignments/"
    page = client.get("/assignments/")
    assert page.status_code == 200 and b"sequences-and-attention" in page.content
    assert int(client.session["_auth_user_id"]) == User.objects.get(username=name).id
    # The same code or state again: refused (a sign-in is used once).
    again = client.get("/oauth_callback", {"code": code, "state": query["state"]})
    assert again.status_code == 400 and b"has been used already" in again.content


def test_the_oauth_sign_in_refusals(on_hub, fake_hub):
    name = roster_student()
    client = Client()
    query = start_sign_in(client)
    forged = client.get("/oauth_callback", {"code": "x", "state": "not-the-state"})
    assert forged.status_code == 400 and b"not started here" in forged.content
    query = start_sign_in(client)
    denied = client.get("/oauth_callback", {"error": "access_denied", "state": query["state"]})
    assert denied.status_code == 403 and b"the hub did not authorize the sign-in: access_denied" in denied.content
    query = start_sign_in(client)
    stranger = secrets.token_hex(8)
    on_hub.codes[stranger] = (on_hub.token_for("nobody-here"), query["code_challenge"])
    off = client.get("/oauth_callback", {"code": stranger, "state": query["state"]})
    assert off.status_code == 403 and b"is not on the course&#x27;s roster" in off.content
    query = start_sign_in(client)
    bad = client.get("/oauth_callback", {"code": "never-issued", "state": query["state"]})
    assert bad.status_code == 503 and b"the hub could not complete the sign-in" in bad.content
    assert "_auth_user_id" not in client.session
    # The password sign-in is still there, and offers the hub's.
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b"Sign in with JupyterHub" in page.content and b'type="password"' in page.content
    assert name


def test_the_prefix_of_the_hubs_proxy_moves_to_the_script_name():
    seen = {}

    def app(environ, start_response):
        seen.update(script=environ.get("SCRIPT_NAME", ""), path=environ["PATH_INFO"])
        return []

    stripped = hub.StripPrefix(app, "/services/gradewright/")
    stripped({"PATH_INFO": "/services/gradewright/api/v1/submissions"}, None)
    assert seen == {"script": "/services/gradewright", "path": "/api/v1/submissions"}
    stripped({"PATH_INFO": "/services/gradewrighter/x"}, None)
    assert seen == {"script": "", "path": "/services/gradewrighter/x"}


def test_a_closed_assignment_refuses_a_hub_token_in_the_sites_own_words(on_hub):
    from service.handin.models import ClosedAssignment
    from service.handin.uploads import allowance

    name = roster_student()
    token = on_hub.token_for(name)
    closed = ClosedAssignment.objects.create(name="attention-not-explanation", closed_by="test")
    try:
        with NOTEBOOK.open("rb") as handle:
            upload = SimpleUploadedFile("attempt.ipynb", handle.read())
        refused = api(token, data={"assignment": "attention-not-explanation", "file": upload})
        from service.core.access import assignments

        site_says = allowance(Student.objects.get(student_id=name), assignments()["attention-not-explanation"])
    finally:
        closed.delete()
    assert refused.status_code == 400
    assert (
        refused.json() == {"error": site_says}
        and site_says == "the instructor has closed this assignment to submissions"
    )


def test_submit_from_a_cell_signs_in_with_the_hubs_token_else_autograder_logins(tmp_path, monkeypatch):
    from gradewright import GradewrightError
    from gradewright.cell import assignment_of, connect, current_notebook

    for key in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER", "GRADEWRIGHT_URL", "JPY_SESSION_NAME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with pytest.raises(GradewrightError, match="no server to hand in to: pass server=URL, set GRADEWRIGHT_URL"):
        connect()
    saved = tmp_path / "config" / "gradewright" / "servers.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(
        json.dumps({"_last": "https://grades.example.edu", "https://grades.example.edu": {"token": "own"}})
    )
    assert connect().headers == {"Authorization": "Token own"}  # autograder login's
    monkeypatch.setenv("GRADEWRIGHT_URL", "https://hub.example.edu/services/gradewright/")
    with pytest.raises(GradewrightError, match="not signed in to https://hub.example.edu/services/gradewright: run"):
        connect()
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hubs")
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    hub_side = connect()
    assert hub_side.server == "https://hub.example.edu/services/gradewright"
    assert hub_side.headers == {"Authorization": "token hubs", hub.CLAIMED_USER_HEADER: "ada"}
    # The notebook this kernel runs, as Jupyter's server names it, and its assignment.
    with pytest.raises(GradewrightError, match="cannot tell which notebook this is"):
        current_notebook()
    notebook = tmp_path / "work" / "mine.ipynb"
    notebook.parent.mkdir()
    notebook.write_text(
        json.dumps({"cells": [], "metadata": {"gradewright": {"assignment": "sequences-and-attention"}}})
    )
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    assert current_notebook() == notebook
    assert assignment_of(notebook, ["sequences-and-attention"]) == "sequences-and-attention"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}}))
    with pytest.raises(GradewrightError, match="mine.ipynb: which assignment is it"):
        assignment_of(notebook, ["sequences-and-attention"])
