"""The service's API: a token, or a session with its CSRF token, for every call; the OpenAPI
description covers every route and matches every answer, a graded report's included."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from service.handin.models import Job

from .conftest import needs_sandbox
from .served import CORRECT, PARTIAL, grade_queue, hand_in, openapi_validator, student
from .site_routes import site_routes

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


def test_the_api_needs_a_token_or_a_session_with_its_csrf_token(tmp_path):
    user, client = student()
    token = Client().post("/api/v1/token", {"username": user.username, "password": "a long password 123"})
    assert token.status_code == 201
    secret = token.json()["token"]
    assert Client().post("/api/v1/token", {"username": user.username, "password": "wrong"}).status_code == 401

    with_token = Client(HTTP_AUTHORIZATION=f"Token {secret}")
    assert [a["name"] for a in with_token.get("/api/v1/assignments").json()["assignments"]] == [
        "sequences-and-attention",
        "attention-not-explanation",
    ]
    created = with_token.post(
        "/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")}
    )
    assert created.status_code == 201 and created.json()["state"] == "queued"
    assert Client(HTTP_AUTHORIZATION="Token forged").get("/api/v1/assignments").status_code == 401
    assert Client().get("/api/v1/assignments").status_code == 401

    # A session (a page's own script) must send the CSRF token with an unsafe method, as a form does.
    client.get("/assignments/")
    refused = client.post("/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")})
    assert refused.status_code == 403
    accepted = client.post(
        "/api/v1/submissions",
        {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert accepted.status_code == 201
    # A form posted from another site without the token is refused too.
    assert client.post("/assignments/sequences-and-attention/", {}).status_code == 403
    assert with_token.post("/api/v1/submissions", {"assignment": "no-such"}).status_code == 404
    Job.objects.filter(student__student_id=user.username).delete()  # not for other tests' workers


def test_the_openapi_description_covers_every_route_and_matches_the_answers():

    document = json.loads(Client().get("/api/v1/openapi.json").content)
    assert document["openapi"] == "3.1.0"
    routes = {
        "/"
        + str(pattern.pattern).removeprefix("api/v1/").replace("<id:job_id>", "{id}").replace("<str:name>", "{name}")
        for pattern in site_routes()
        if str(pattern.pattern).startswith("api/v1/") and "openapi" not in str(pattern.pattern)
    }
    assert routes == set(document["paths"])

    user, _ = student()
    token = Client().post("/api/v1/token", {"username": user.username, "password": "a long password 123"}).json()
    api = Client(HTTP_AUTHORIZATION=f"Token {token['token']}")
    for assignment in api.get("/api/v1/assignments").json()["assignments"]:
        openapi_validator("Assignment").validate(assignment)
    created = api.post("/api/v1/submissions", {"assignment": "sequences-and-attention", "file": CORRECT.open("rb")})
    openapi_validator("Submission").validate(created.json())
    openapi_validator("Submission").validate(api.get(f"/api/v1/submissions/{created.json()['id']}").json())
    for answer in (api.get("/api/v1/submissions/999999"), Client().get("/api/v1/assignments")):
        openapi_validator("Error").validate(answer.json())
    Job.objects.filter(id=created.json()["id"]).delete()


@needs_sandbox
def test_a_graded_report_matches_the_openapi_description():
    user, client = student()
    hand_in(client, PARTIAL)
    grade_queue()
    job = Job.objects.get(student__student_id=user.username)
    answer = client.get(f"/api/v1/submissions/{job.id}").json()
    openapi_validator("Submission").validate(answer)
    assert answer["report"]["hidden_results"] == "shown"
    # A report that carried the grader's own fields would not match.
    from jsonschema import ValidationError

    with pytest.raises(ValidationError):
        openapi_validator("Report").validate({**answer["report"], "sandbox": "bubblewrap"})
