"""No address of the site answers 500: every route (read from service.urls, so that a new one is
walked too), as an anonymous visitor, a student and the staff, with bad ids (letters, a number too
large for the database, negative, zero, unknown, unicode, path-like, NUL), malformed posted fields
and bodies, and a method it does not take. Under /api/v1/ every answer is JSON, an error with its
"error"; every 405 says in Allow what is allowed."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver

from gradebook.models import Student
from service.accounts.models import Member
from service.handin.models import Job

pytestmark = pytest.mark.timeout(600)

# A distinct address for this module's clients: the walk posts empty sign-ins, which the sign-in
# throttle counts by address, and 127.0.0.1 is every other test's.
ADDRESS = "192.0.2.77"

# One good value for each of the routes' parameters (by name), so that a bad value in one place
# reaches the view behind the others.
GOOD = {
    "name": "attention-not-explanation",
    "question_id": "written",
    "question": "q1",
    "student_id": "someone",
    "chart_name": "overview",
    "secret": "no-such-link",
    "registration_uuid": str(uuid.UUID(int=1)),
    "first": "1",
    "second": "2",
    "submission_id": "1",
    "review_id": "1",
    "job_id": "1",
}
BAD = [
    "abc",
    "99999999999999999999",
    "9223372036854775808",
    "-1",
    "0",
    "123456789",
    "\u00e9\U0001f642",
    "..",
    "..%2F..%2Fetc%2Fpasswd",
    "%00",
    "%ff",
    " ",
]
# Every field any form of the site posts, each malformed.
MALFORMED = {
    "job": "abc",
    "student": "\u202enobody",
    "question": "../x",
    "score": "nan",
    "adjustment": "inf",
    "points": "1e999",
    "reason": "",
    "message": "",
    "rubric": ["nope", ""],
    "item": "zz",
    "text": "",
    "then": "next",
    "seen": "garbage",
    "format": "zzz",
    "assignment": ["nope", ""],
    "missing": "?",
    "back": "//elsewhere.example/",
    "action": "zz",
    "submissions": "zz",
    "launch_id": "lti1p3-launch-nope",
    "username": "",
    "password": "",
    "issuer": "not a url",
    "client_id": "",
    "deployment_ids": ",,,",
    "new_password1": "",
    "new_password2": "",
    "names": "1",
    "members": ["nope", "99999999999999999999", ""],
}
# The same fields well chosen but for their numbers and ids, so that a form's choices pass and its
# numbers are read: each malformed (not a number, out of range, not finite).
NUMBERS = {
    "job": "99999999999999999999",
    "score": "nan",
    "adjustment": "inf",
    "points": "-1e999",
    "question": "attention",
    "reason": "a reason",
    "message": "a message",
    "text": "an item",
    "format": "canvas",
    "assignment": "sequences-and-attention",
    "seen": "",
    "then": "next",
}
BROKEN_MULTIPART = b'--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.py"\r\n\r\nprint(1)'
FINE = {200, 201, 301, 302}
REFUSED = {301, 302, 400, 401, 403, 404, 405}
# /readyz answers 503 by design while the site cannot serve (its database away, a migration missing): the
# orchestrator's documented signal (service/operations/probes.py), not a server error. Only that route, only a
# GET, and only with its "not ready" body; tests/test_service_access.py checks it turns 200.
NOT_READY_IS_AN_ANSWER = {"readyz"}


def _routes(patterns=None, prefix: str = "") -> list[tuple[str, str]]:
    """(name, route) for every pattern the site resolves, includes followed."""
    found = []
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            found += _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            found.append((pattern.name or str(pattern.pattern), prefix + str(pattern.pattern)))
    return found


ROUTES = _routes()
PARAMETER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<parameter>[^>]+)>")


def _address(route: str, values: dict[str, str]) -> str:
    return "/" + PARAMETER.sub(lambda found: values[found["parameter"]], route)


def addresses(route: str) -> list[tuple[str, bool]]:
    """(address, is a bad one): the route with good values, then with each parameter bad in turn."""
    names = [found["parameter"] for found in PARAMETER.finditer(route)]
    good = {name: GOOD.get(name, "x") for name in names}
    made = [(_address(route, good), False)]
    for name in names:
        made += [(_address(route, {**good, name: bad}), True) for bad in BAD]
    return made


def account(role: str | None) -> Client:
    """A client: anonymous (None), or a new member of the course signed in."""
    client = Client(REMOTE_ADDR=ADDRESS)
    if role is not None:
        name = f"b{uuid.uuid4().hex[:10]}"
        user = User.objects.create_user(name, password="a long password 123")
        row = Student.objects.create(student_id=name, on_roster=True) if role == Member.STUDENT else None
        Member.objects.create(user=user, role=role, student=row)
        client.force_login(user)
        client.user = user  # type: ignore[attr-defined]
    return client


@pytest.fixture(scope="module")
def clients():
    made = {"anonymous": account(None), "student": account(Member.STUDENT), "staff": account(Member.INSTRUCTOR)}
    yield made
    from axes.models import AccessAttempt

    AccessAttempt.objects.filter(ip_address=ADDRESS).delete()


def check(response, address: str, expected: set[int], what: str) -> None:
    where = f"{what} {address}"
    assert response.status_code < 500, f"{where}: {response.status_code}"
    assert response.status_code in expected, f"{where}: {response.status_code} {response.content[:200]!r}"
    if response.status_code == 405:
        assert response.get("Allow"), f"{where}: a 405 without Allow"
    if address.startswith("/api/v1/") and response.status_code not in {301, 302}:
        assert response["Content-Type"].startswith("application/json"), f"{where}: {response['Content-Type']}"
        if response.status_code >= 400:
            body = json.loads(response.content)
            assert isinstance(body.get("error"), str) and body["error"], f"{where}: {body}"
            assert "Traceback" not in body["error"]


def _again(client: Client) -> None:
    """Signing out is one of the routes walked (and a refused LTI launch starts a session of its
    own): the walk's member signs in again after it."""
    if hasattr(client, "user") and "_auth_user_id" not in client.session:
        client.force_login(client.user)


@pytest.mark.slow
@pytest.mark.parametrize("who", ["anonymous", "student", "staff"])
def test_every_route_answers_bad_ids_and_malformed_requests_without_a_server_error(clients, who):
    client = clients[who]
    walked, reached = 0, set()
    for name, route in ROUTES:
        for address, bad in addresses(route):
            expected = REFUSED if bad else FINE | REFUSED
            answer = client.get(address)
            if name in NOT_READY_IS_AN_ANSWER and answer.status_code == 503:
                assert json.loads(answer.content)["ready"] is False, f"{who} GET {address}"
            else:
                check(answer, address, expected, f"{who} GET")
            if answer.status_code == 200:
                reached.add(name)
            _again(client)
            check(client.post(address, MALFORMED), address, expected, f"{who} POST")
            _again(client)
            walked += 1
        address = addresses(route)[0][0]
        # PATCH is no route's: a 405 with Allow (an anonymous visitor is sent to sign in first on a
        # page). A bad address is a 404 before any method is looked at, as GET and POST found.
        check(
            client.generic("PATCH", address, b"{}", "application/json"),
            address,
            {301, 302, 400, 404, 405},
            f"{who} PATCH",
        )
        _again(client)
        check(client.post(address, NUMBERS), address, FINE | REFUSED, f"{who} POST (malformed numbers)")
        _again(client)
        check(
            client.generic("POST", address, BROKEN_MULTIPART, "multipart/form-data"),
            address,
            FINE | REFUSED,
            f"{who} POST (a broken multipart body)",
        )
        _again(client)
    assert walked == sum(len(addresses(route)) for _, route in ROUTES) > 5 * len(ROUTES)
    # The walk reached the views, not only the sign-in page: the staff open most pages.
    assert len(reached) >= {"anonymous": 3, "student": 5, "staff": 15}[who], sorted(reached)


def test_the_issues_examples_answer_400_or_404_in_the_right_format(clients):
    staff, student = clients["staff"], clients["student"]
    unknown = staff.get("/staff/students/nobody-at-all/")
    assert unknown.status_code == 404 and "no such student" in unknown.content.decode()
    staff.get("/staff/gradebook/sequences-and-attention/")
    regrade = staff.post("/staff/regrade/sequences-and-attention/", {"job": "abc"})
    assert regrade.status_code == 400 and "a whole number" in regrade.content.decode()
    for address in ("/api/v1/submissions/abc", "/api/v1/submissions/99999999999999999999", "/api/v1/nothing"):
        answer = student.get(address)
        assert answer.status_code == 404 and answer.json()["error"], address
    page = student.get("/submissions/abc/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    refused = student.delete("/api/v1/submissions")
    assert refused.status_code == 405 and refused["Allow"] == "GET, POST" and "DELETE" in refused.json()["error"]
    assert Client().get("/api/v1/token")["Allow"] == "POST"
    assert (
        student.put("/api/v1/submissions/1").json()["error"] and student.put("/api/v1/submissions/1")["Allow"] == "GET"
    )
    assert student.get("/submissions/1/review/")["Allow"] == "POST"
    nul = student.get("/api/v1/submissions", {"assignment": "a\x00b"})
    assert nul.status_code == 400 and "NUL" in nul.json()["error"]
    assert student.post("/assignments/sequences-and-attention/", {"notebook": "x\x00"}).status_code == 400
    broken = student.generic("POST", "/api/v1/submissions", BROKEN_MULTIPART, "multipart/form-data")
    assert broken.status_code == 400 and broken.json()["error"]


def test_a_malformed_number_is_refused_not_stored(clients):
    """nan and inf are no score: a posted number must be finite (service.core.boundary.number)."""
    from service.core.boundary import number, posted_id

    for text in ("nan", "inf", "-inf", "1e999", "", "x", None):
        with pytest.raises(ValueError):
            number(text)
    assert number(" 2.5 ") == 2.5
    for text in ("0", "-3", "1.5", "99999999999999999999", "", "x"):
        with pytest.raises(ValueError):
            posted_id(text)
    assert posted_id("42") == 42


def test_the_gradebooks_unknown_query_is_ignored_safely(clients):
    staff = clients["staff"]
    for query in (
        {"sort": "nope"},
        {"show": "nope"},
        {"below": "nan"},
        {"below": "inf"},
        {"below": "x"},
        {"sort": ["score", "x"], "page": "-1"},
    ):
        answer = staff.get("/staff/gradebook/sequences-and-attention/", query)
        assert answer.status_code == 200, query
    for threshold in ("nan", "-inf", "x", "1e999"):
        assert staff.get("/staff/similarity/sequences-and-attention/", {"threshold": threshold}).status_code == 200


def test_a_server_error_is_a_plain_answer_without_a_traceback():
    from django.urls import get_resolver

    from service.core import boundary

    resolver = get_resolver()
    assert resolver.resolve_error_handler(500) is boundary.server_error
    assert resolver.resolve_error_handler(404) is boundary.page_not_found
    assert resolver.resolve_error_handler(400) is boundary.bad_request
    assert resolver.resolve_error_handler(403) is boundary.permission_denied
    factory = RequestFactory()
    api = boundary.server_error(factory.get("/api/v1/assignments"))
    assert api.status_code == 500 and json.loads(api.content) == {"error": boundary.SERVER_ERROR}
    page = boundary.server_error(factory.get("/assignments/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")
    assert b"Traceback" not in page.content and boundary.SERVER_ERROR.encode() in page.content
    from django.conf import settings

    assert settings.DEBUG is False  # Django's technical pages (tracebacks) are for DEBUG only


def test_a_real_bug_answers_500_in_the_apis_format(clients, monkeypatch):
    """A view that fails (here made to) answers the handler's plain 500, JSON under /api/v1/."""
    from service.handin import api

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug with a secret path /srv/x")

    monkeypatch.setattr(api, "_job", broken)
    user = clients["student"].user
    Job.objects.create(
        student=Student.objects.get(student_id=user.username),
        assignment="sequences-and-attention",
        file="/nonexistent",
        original_name="a.py",
        size=1,
        sha256="0" * 64,
    )
    client = Client(raise_request_exception=False, REMOTE_ADDR=ADDRESS)
    client.force_login(user)
    answer = client.get("/api/v1/submissions")
    assert answer.status_code == 500 and answer.json()["error"] and "/srv/x" not in answer.content.decode()
    Job.objects.filter(student__student_id=user.username).delete()
