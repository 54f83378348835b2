"""The service's log, in one configuration (Django's ``LOGGING``, built by ``configuration()``): the
site's request errors with their tracebacks (``django.request``), each job's outcome
(``gradewright.jobs``, through ``job_outcome``), each delivery of a score to a course platform
(``gradewright.lti``), each sign-in refused (``gradewright.sign_in``). One line per event, plain by
default or one JSON object per line (``GRADEWRIGHT_LOG_FORMAT=json``), to standard error or the file
``GRADEWRIGHT_LOG_FILE`` names (autograder/environment.py).

What is expected is said without a traceback: a refusal (4xx), however Django raised it. A 500 and
any error our code logs keep theirs."""

from __future__ import annotations

import logging
from typing import Any

from autograder.environment import read

from .errors import ServiceSetupError

JOBS = "gradewright.jobs"
LTI = "gradewright.lti"
SIGN_IN = "gradewright.sign_in"
PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FORMATS = ("plain", "json")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
OURS = ("gradewright", "service", "autograder", "gradebook", "course", "waitress")
# Fields of Django's records that are objects for a handler, not values for a log line.
NOT_LOGGED = ("request", "server_time")

jobs_log = logging.getLogger(JOBS)
lti_log = logging.getLogger(LTI)
sign_in_log = logging.getLogger(SIGN_IN)


class ExpectedWithoutTraceback(logging.Filter):
    """A refusal (a record with a status under 500: Django's 403 for PermissionDenied, a 400, a 404)
    is logged as one line; Django gives such records their exception's traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True


def json_formatter() -> logging.Formatter:
    """python-json-logger's formatter: the record's fields and any ``extra`` as one JSON object."""
    from pythonjsonlogger.core import RESERVED_ATTRS
    from pythonjsonlogger.json import JsonFormatter

    return JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s",
        reserved_attrs=[*RESERVED_ATTRS, *NOT_LOGGED],
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger", "exc_info": "traceback"},
    )


def configuration() -> dict[str, Any]:
    """Django's LOGGING for the site and its workers, from the environment."""
    log_format = read("GRADEWRIGHT_LOG_FORMAT").lower()
    level = read("GRADEWRIGHT_LOG_LEVEL").upper()
    if log_format not in FORMATS:
        raise ServiceSetupError(f"GRADEWRIGHT_LOG_FORMAT is {log_format!r}: give {' or '.join(FORMATS)}")
    if level not in LEVELS:
        raise ServiceSetupError(f"GRADEWRIGHT_LOG_LEVEL is {level!r}: give one of {', '.join(LEVELS)}")
    path = read("GRADEWRIGHT_LOG_FILE")
    handler: dict[str, Any] = {
        "formatter": log_format,
        "filters": ["expected"],
        **(
            {"class": "logging.FileHandler", "filename": path, "encoding": "utf-8"}
            if path
            else {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
        ),
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"expected": {"()": ExpectedWithoutTraceback}},
        "formatters": {"plain": {"format": PLAIN}, "json": {"()": json_formatter}},
        "handlers": {"log": handler},
        # A library's chatter (httpx's line per request, say) only when it warns; ours and Django's
        # at the level asked for.
        "root": {"handlers": ["log"], "level": "WARNING"},
        "loggers": {
            **{name: {"level": level} for name in OURS},
            # Django's own handlers (mail to ADMINS, the console when DEBUG) give way to ours.
            "django": {"handlers": ["log"], "level": level, "propagate": False},
            # One line per SQL query at DEBUG is no operator's business.
            "django.db.backends": {"level": "INFO"},
            # axes's start-up banner and each reset: our own lines say what an operator needs.
            "axes": {"level": "WARNING"},
        },
    }


def job_outcome(job: Any, outcome: str, seconds: float | None = None, error: str = "") -> None:
    """Log one job's outcome (claimed, graded, failed, retried, released, ...) with its id, student,
    assignment and the seconds it took. ``job`` is a service.models.Job; what the student did wrong
    is in their report, never an error here. (The metrics count jobs from the database: every
    worker's, whichever process is scraped.)"""
    student = getattr(getattr(job, "student", None), "student_id", "") or ""
    took = "" if seconds is None else f" in {seconds:.2f} s"
    why = f": {error}" if error else ""
    level = logging.WARNING if outcome in {"failed", "retried", "lost"} else logging.INFO
    jobs_log.log(
        level,
        "job %s %s (student %s, %s)%s%s",
        job.id,
        outcome,
        student,
        job.assignment,
        took,
        why,
        extra={
            "job_id": job.id,
            "outcome": outcome,
            "student": student,
            "assignment": job.assignment,
            "duration_seconds": seconds,
            "error": error,
        },
    )


def _address(request: Any) -> str:
    return (getattr(request, "META", None) or {}).get("REMOTE_ADDR", "") or ""


def sign_in_refused(how: str, username: str, request: Any, reason: str) -> None:
    """One sign-in refused: a wrong password, a lock, the hub's no."""
    sign_in_log.info(
        "sign-in refused (%s) for %r from %s: %s",
        how,
        username,
        _address(request) or "an unknown address",
        reason,
        extra={"how": how, "username": username, "address": _address(request), "reason": reason},
    )


def _password_failed(sender: Any, credentials: dict[str, Any], request: Any = None, **_: Any) -> None:
    # Django's own signal, for every failed authenticate(); its credentials have the password masked.
    sign_in_refused("password", str(credentials.get("username", ""))[:150], request, "wrong username or password")


def _locked_out(sender: Any, request: Any = None, username: str = "", ip_address: str = "", **_: Any) -> None:
    sign_in_log.warning(
        "sign-ins locked for %r from %s: too many failures",
        username,
        ip_address,
        extra={"how": "lockout", "username": username, "address": ip_address},
    )


def connect_signals() -> None:
    """Sign-in refusals reach the log (called once, when the app is ready)."""
    from axes.signals import user_locked_out
    from django.contrib.auth.signals import user_login_failed

    user_login_failed.connect(_password_failed, dispatch_uid="gradewright-sign-in-failed")
    user_locked_out.connect(_locked_out, dispatch_uid="gradewright-locked-out")
