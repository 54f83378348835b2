"""Every page and endpoint needs a signed-in member of the course: an anonymous visitor is sent to
the sign-in page (401 from the API), an account that is not a member reaches nothing."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import URLPattern

from .served import POSTED
from .site_routes import site_routes

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


# The platform's LTI requests carry their own proof (a signed token; the deep linking choice, the
# launch's id): tests/test_lti.py attacks them.
OPEN_TO_ALL = {
    "login",
    "welcome",
    "api-token",
    "api-openapi",
    "home",
    "lti-login",
    "lti-login-for",
    "lti-launch",
    "lti-deep-link",
    "lti-jwks",
    # The hub's OAuth: its callback carries the hub's proof (a code for the hub's token); tests/test_hub.py.
    "hub-login",
    "hub-oauth-callback",
}
# The operator's probes answer without a session by design (service/operations/probes.py): /healthz and /readyz
# for a proxy or an orchestrator, which never sign in; /metrics is a 404 unless GRADEWRIGHT_METRICS
# opens it (tests/test_operations.py checks who may read it). None shows a grade.
# test_the_probes_answer_anyone_as_documented checks what they answer instead.
PROBES = {"healthz", "readyz", "metrics"}


@pytest.mark.parametrize(
    "name",
    sorted(
        pattern.name
        for pattern in site_routes()
        if isinstance(pattern, URLPattern)  # the site's own routes; an included app's are its own tests'
        and pattern.name not in OPEN_TO_ALL | PROBES
        and pattern.name != "logout"
    ),
)
def test_every_page_and_endpoint_needs_a_signed_in_member(name):
    """Anonymous: a page sends to the sign-in page, an API call is 401; an account that is not a member
    of the course reaches nothing."""
    from django.urls import reverse

    name_of = ["sequences-and-attention"]
    arguments = {
        "assignment": name_of,
        "notebook": name_of,
        "submission": [1],
        "api-submission": [1],
        "api-grades": name_of,
        "api-notebook": name_of,
        "api-practice-request": name_of,
        "api-practice": [1],
        "practice": name_of,
        "gradebook": name_of,
        "statistics": name_of,
        "statistics-chart": name_of + ["overview"],
        "student": ["someone"],
        "marking": ["attention-not-explanation"],
        "mark-start": ["attention-not-explanation", "written"],
        "mark-answer": ["attention-not-explanation", "written", 1],
        "mark-group": ["attention-not-explanation", "written"],
        "exam-mark-group": ["midterm", "q"],
        "override": [1],
        "rubric-edit": ["attention-not-explanation", "written"],
        "mark-empty": ["attention-not-explanation", "written"],
        "exam-mark-empty": ["midterm", "q"],
        "platforms": [],
        "regrade": name_of,
        "choose-counted": name_of,
        "publish-grades": name_of,
        "similarity": name_of,
        "review-answer": [1],
        "review-ask": [1],
        "diff": ["someone", 1, 2],
        "exam-start": ["midterm", "q"],
        "exam-mark": ["midterm", "q", "someone"],
        **{
            route: ["midterm"]
            for route in (
                "exam-take",
                "exam-save",
                "exam-submit",
                "exam-state",
                "exam-online",
                "exam-room",
                "exam-publish",
            )
        },
        "exam-log": ["midterm", 1],
        "exam-result": ["midterm", "scores.csv"],
        "extensions": ["sequences-and-attention"],
        "lesson": ["module-10-question-bank"],
    }

    url = reverse(name, args=arguments.get(name, []))
    posted = name in POSTED
    anonymous = Client().post(url) if posted else Client().get(url)
    if name.startswith("api-"):
        assert anonymous.status_code == 401
    else:
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    outsider = Client()
    outsider.force_login(User.objects.create_user(f"o{uuid.uuid4().hex[:8]}"))  # an account, not a member
    assert (outsider.post(url) if posted else outsider.get(url)).status_code == 404


def test_the_probes_answer_anyone_as_documented():
    """/healthz answers; /readyz is 200 (ready: the site serves) while no worker is alive, and says
    so, and says grading is ok once one is, with the site's security headers either way; /metrics is
    a 404 while the operator has not opened it."""
    from django.utils import timezone

    from service.operations.models import WorkerSeen

    anonymous = Client()
    assert anonymous.get("/healthz").content == b"ok\n"
    WorkerSeen.objects.all().delete()
    no_worker = anonymous.get("/readyz")
    assert no_worker.status_code == 200 and no_worker.json()["ready"] is True
    assert no_worker.json()["grading"] == "no worker alive: hand-ins are taken and wait in the queue until one starts"
    WorkerSeen.objects.create(name=f"w{uuid.uuid4().hex[:8]}", seen_at=timezone.now())
    try:
        ready = anonymous.get("/readyz")
    finally:
        WorkerSeen.objects.all().delete()
    assert ready.status_code == 200 and ready.json()["ready"] is True and ready.json()["grading"] == "ok"
    for answer in (no_worker, ready):
        assert "frame-ancestors 'none'" in answer["Content-Security-Policy"]
        assert answer["X-Frame-Options"] == "DENY" and answer["X-Content-Type-Options"] == "nosniff"
    with override_settings(GRADEWRIGHT_METRICS="off"):
        assert anonymous.get("/metrics").status_code == 404
