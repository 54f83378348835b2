"""Logs to debug with: one line per request (method, path, status, seconds, the user's id, the client's
address) with a request id that the answer returns in X-Request-ID and that every line logged while
answering carries; an id from the trusted proxy is kept when sane, anyone else's never; a worker's
lines carry the job's and the submission's ids; a crash in JSON mode is one JSON object."""

from __future__ import annotations

import argparse
import json
import logging
import uuid
from types import SimpleNamespace

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

from commands import common
from service.core.logs import PLAIN, REQUESTS, WithContext, job_context, job_outcome, json_formatter

PASSWORD = "the secret never in a log 41"
CLIENT = "198.51.100.23"


@pytest.fixture
def logged(caplog):
    """The records of the site's loggers, with the context the site's handler adds."""
    caplog.handler.addFilter(WithContext())
    caplog.set_level(logging.INFO)
    yield caplog
    caplog.handler.removeFilter(caplog.handler.filters[-1])
    AccessAttempt.objects.filter(ip_address=CLIENT).delete()


def test_a_requests_id_is_in_its_answer_and_every_line_it_logged(logged):
    username = f"log-{uuid.uuid4().hex[:8]}"
    User.objects.create_user(username, password=PASSWORD)
    client = Client(REMOTE_ADDR=CLIENT)
    answer = client.post("/accounts/login/", {"username": username, "password": PASSWORD + "wrong"})
    request_id = answer["X-Request-ID"]
    assert len(request_id) == 32
    lines = [record for record in logged.records if getattr(record, "request_id", None) == request_id]
    loggers = [record.name for record in lines]
    assert "gradewright.sign_in" in loggers and loggers[-1] == REQUESTS  # the refusal, then the request's line
    line = lines[-1]
    assert (line.method, line.path, line.status, line.user_id, line.address) == (
        "POST",
        "/accounts/login/",
        answer.status_code,
        None,
        CLIENT,
    )
    as_json = json.loads(json_formatter().format(line))
    assert as_json["request_id"] == request_id and as_json["status"] == answer.status_code
    assert {"method", "path", "duration_seconds", "user_id", "address", "time", "level"} <= set(as_json)
    plain = logging.Formatter("%(message)s%(context)s").format(line)
    assert plain.startswith(f"POST /accounts/login/ {answer.status_code} ") and plain.endswith(
        f"from {CLIENT} [request_id={request_id}]"
    )
    assert not [record for record in logged.records if PASSWORD in record.getMessage() or PASSWORD in str(vars(record))]
    # Signed in: the user's id, never their name or password.
    user = User.objects.get(username=username)
    client.force_login(user)
    page = client.get("/assignments/")
    (line,) = [
        r for r in logged.records if getattr(r, "request_id", None) == page["X-Request-ID"] and r.name == REQUESTS
    ]
    assert line.user_id == user.pk and f"user {user.pk} from {CLIENT}" in line.getMessage()


@pytest.mark.parametrize(
    "proxy, forwarded, given, kept",
    [
        ("127.0.0.1", CLIENT, "nginx-3f2a9c0d1e", True),  # through the trusted proxy: its id kept
        ("127.0.0.1", "", "nginx-3f2a9c0d1e", False),  # straight to the site: anyone's to write
        ("", CLIENT, "nginx-3f2a9c0d1e", False),  # no proxy trusted at all
        ("127.0.0.1", CLIENT, "id with spaces\nand a line", False),  # not sane
        ("127.0.0.1", CLIENT, "x" * 200, False),
    ],
)
def test_an_incoming_request_id_is_kept_only_from_the_trusted_proxy_and_sane(
    monkeypatch, proxy, forwarded, given, kept
):
    monkeypatch.setenv("GRADEWRIGHT_TRUSTED_PROXY", proxy)
    headers = {"HTTP_X_REQUEST_ID": given, **({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {})}
    answer = Client(REMOTE_ADDR=CLIENT).get("/healthz", **headers)
    assert (answer["X-Request-ID"] == given) is kept
    if not kept:
        assert len(answer["X-Request-ID"]) == 32


def test_a_workers_lines_carry_the_job_and_its_submission(logged):
    job = SimpleNamespace(id=812, submission_id=4417, assignment="sequences-and-attention", student=None)
    with job_context(job):
        logging.getLogger("gradewright.worker").warning("the sandbox said something")
        job_outcome(job, "graded", 1.5)
    lines = [record for record in logged.records if getattr(record, "job_id", None) == 812]
    assert len(lines) == 2 and all(record.submission_id == 4417 for record in lines)
    assert logging.Formatter("%(message)s%(context)s").format(lines[0]).endswith("[job_id=812 submission_id=4417]")


def test_a_crash_in_json_mode_is_one_json_object_with_its_traceback(monkeypatch, logged, capsys):
    monkeypatch.setenv("GRADEWRIGHT_LOG_FORMAT", "json")

    def bug(args: argparse.Namespace) -> int:
        raise KeyError("oops")

    def parser() -> argparse.ArgumentParser:
        made = common.parser("autograder", "a test")
        made.set_defaults(handler=bug)
        return made

    assert common.run("autograder", parser, [], "interrupted") == 2
    assert capsys.readouterr().err == ""  # no plain line beside the JSON one
    (crash,) = [record for record in logged.records if record.levelno == logging.CRITICAL]
    said = json.loads(json_formatter().format(crash))
    assert said["message"] == "autograder: internal error (KeyError: 'oops'); please report it"
    assert "Traceback" in said["traceback"] and "KeyError" in said["traceback"]
    monkeypatch.setenv("GRADEWRIGHT_LOG_FORMAT", "plain")
    assert common.run("autograder", parser, [], "interrupted") == 2
    assert capsys.readouterr().err == "autograder: internal error (KeyError: 'oops'); please report it\n"


def test_an_exception_no_thread_caught_reaches_the_log_with_its_traceback(logged):
    import threading

    from service.core.logs import connect_signals

    connect_signals()  # as the site's start does (pytest puts its own hook in place for each test)

    def fail() -> None:
        raise RuntimeError("the sender fell over")

    thread = threading.Thread(target=fail, name="lti-sender")
    thread.start()
    thread.join()
    (crash,) = [record for record in logged.records if record.levelno == logging.CRITICAL]
    said = json.loads(json_formatter().format(crash))
    assert said["message"] == "lti-sender stopped: the sender fell over"
    assert "RuntimeError: the sender fell over" in said["traceback"]


def test_djangos_line_for_a_refusal_carries_the_request_id_too(logged):
    django_log = logging.getLogger("django")  # which keeps its lines to the site's handler (propagate off)
    django_log.addHandler(logged.handler)
    try:
        answer = Client(REMOTE_ADDR=CLIENT).get("/no-such-page")
    finally:
        django_log.removeHandler(logged.handler)
    lines = [record for record in logged.records if getattr(record, "request_id", None) == answer["X-Request-ID"]]
    assert [(record.name, record.levelname) for record in lines] == [("django.request", "WARNING"), (REQUESTS, "INFO")]
    assert lines[0].getMessage() == "Not Found: /no-such-page" and lines[0].exc_info is None
    assert len([record for record in logged.records if record.name == "django.request"]) == 1  # written once


def test_a_one_time_links_secret_never_reaches_the_log(logged):
    secret = "s3cr3t-" + uuid.uuid4().hex
    django_log = logging.getLogger("django")
    django_log.addHandler(logged.handler)
    try:
        answer = Client(REMOTE_ADDR=CLIENT).get(f"/welcome/{secret}/")
    finally:
        django_log.removeHandler(logged.handler)
    lines = [record for record in logged.records if getattr(record, "request_id", None) == answer["X-Request-ID"]]
    assert lines and lines[-1].path == "/welcome/***/"
    formatted = [json_formatter().format(record) for record in lines]
    formatted += [logging.Formatter(PLAIN).format(record) for record in lines]
    assert formatted and not [line for line in formatted if secret in line]


def test_a_503_for_the_database_away_is_one_warning_line_and_a_bug_keeps_its_traceback():
    from django.db import InterfaceError

    from service.core.logs import ExpectedWithoutTraceback

    def record(status: int, error: BaseException) -> logging.LogRecord:
        try:
            raise error
        except type(error):
            import sys

            made = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "%s", ("x",), sys.exc_info())
        made.status_code = status
        ExpectedWithoutTraceback().filter(made)
        return made

    away = record(503, InterfaceError("connection already closed"))
    assert (away.levelname, away.exc_info) == ("WARNING", None)
    bug = record(500, ValueError("a real bug"))
    assert bug.levelname == "ERROR" and bug.exc_info is not None
