"""The service's log, in one configuration (Django's ``LOGGING``, built by ``configuration()``): a
line for every request answered (``gradewright.requests``, by the ``LogRequests`` middleware: method,
path, status, seconds, the user's id, the client's address as the trusted proxy gave it, the request
id), the site's request errors with their tracebacks (``django.request``), each job's outcome
(``gradewright.jobs``, through ``job_outcome``), each delivery of a score to a course platform
(``gradewright.lti``), each sign-in refused (``gradewright.sign_in``). One line per event, plain by
default or one JSON object per line (``GRADEWRIGHT_LOG_FORMAT=json``), to standard error or the file
``GRADEWRIGHT_LOG_FILE`` names (autograder/environment.py); a crash too (``crashed``, and an
exception no thread caught).

Every line logged while a request is answered carries its request id (returned to the client in
X-Request-ID), and every line a worker logs while grading a job carries the job's id and its
submission's: the context (``log_context``, a contextvar, so each of waitress's threads has its own)
is added to each record by the handler's ``WithContext`` filter.

What is expected is said without a traceback: a refusal (4xx), however Django raised it. A 500 and
any error our code logs keep theirs."""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from autograder.environment import read
from service.errors import ServiceSetupError

JOBS = "gradewright.jobs"
LTI = "gradewright.lti"
SIGN_IN = "gradewright.sign_in"
REQUESTS = "gradewright.requests"
PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s%(context)s"
FORMATS = ("plain", "json")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
OURS = ("gradewright", "service", "autograder", "gradebook", "course", "waitress")
# Fields of Django's records that are objects for a handler, not values for a log line.
NOT_LOGGED = ("request", "server_time", "context")
# A request id taken from the trusted proxy's X-Request-ID: letters, digits and . _ : -, 8 to 128 of
# them (a UUID, nginx's $request_id); anything else is replaced by one of ours.
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{7,127}")
# The parts of an address that are secrets (service/urls.py: welcome/<secret>/), never logged.
SECRET_PARTS = ("secret", "token")
# The orchestrator's and Prometheus's probes, every few seconds: their lines only at DEBUG.
PROBES = frozenset({"/healthz", "/readyz", "/metrics"})

jobs_log = logging.getLogger(JOBS)
lti_log = logging.getLogger(LTI)
sign_in_log = logging.getLogger(SIGN_IN)
requests_log = logging.getLogger(REQUESTS)
_context: ContextVar[dict[str, Any]] = ContextVar("gradewright_log_context", default={})  # noqa: B039 (never mutated)


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Every line logged within carries ``fields`` (those not None), besides the outer context's."""
    token = _context.set({**_context.get(), **{name: value for name, value in fields.items() if value is not None}})
    try:
        yield
    finally:
        _context.reset(token)


def job_context(job: Any) -> Any:
    """The context of a worker's lines while it grades ``job`` (a service.models.Job)."""
    return log_context(job_id=job.id, submission_id=job.submission_id)


class WithContext(logging.Filter):
    """Adds the context's fields to each record (for JSON) and ``context``, them as text (for plain
    lines: `` [request_id=... job_id=...]``); a field the line gave itself is kept as it gave it."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _context.get()
        for name, value in fields.items():
            if not hasattr(record, name):
                setattr(record, name, value)
        record.context = " [" + " ".join(f"{name}={value}" for name, value in fields.items()) + "]" if fields else ""
        return True


class ExpectedWithoutTraceback(logging.Filter):
    """A refusal (a record with a status under 500: Django's 403 for PermissionDenied, a 400, a 404)
    is logged as one line; Django gives such records their exception's traceback. So is a 503 for
    the database away (service/core/outage.py), as a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        elif status == 503 and record.exc_info and _database_lost(record.exc_info[1]):
            # The database away for a while (a restart) is the machine's, not a bug: one warning
            # line per request answered 503, never a traceback.
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _database_lost(exception: BaseException | None) -> bool:
    from .outage import database_lost  # Django's database layer, loaded once settings are

    return database_lost(exception)


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
        "filters": ["expected", "context"],
        **(
            {"class": "logging.FileHandler", "filename": path, "encoding": "utf-8"}
            if path
            else {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
        ),
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"expected": {"()": ExpectedWithoutTraceback}, "context": {"()": WithContext}},
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
            "submission_id": job.submission_id,
            "outcome": outcome,
            "student": student,
            "assignment": job.assignment,
            "duration_seconds": seconds,
            "error": error,
        },
    )


def incoming_request_id(request: Any) -> str | None:
    """The request id the trusted proxy sent (X-Request-ID), when it is sane and the request came
    through that proxy: waitress keeps X-Forwarded-For only from GRADEWRIGHT_TRUSTED_PROXY, and puts
    its last address in REMOTE_ADDR (service/server.py proxy_options). From anyone else, None."""
    meta = request.META
    given = meta.get("HTTP_X_REQUEST_ID", "")
    if not read("GRADEWRIGHT_TRUSTED_PROXY").strip() or not SANE_REQUEST_ID.fullmatch(given):
        return None
    hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    return given if hops and hops[-1] == meta.get("REMOTE_ADDR") else None


def logged_path(request: Any) -> str:
    """The request's path as the log shows it: a secret the address carries (a one-time sign-in
    link's) as ``***``, never itself."""
    path = request.path
    match = getattr(request, "resolver_match", None)
    for name in SECRET_PARTS:
        value = match.kwargs.get(name) if match is not None else None
        if value:
            path = path.replace(str(value), "***")
    return path


class LogRequests:
    """Middleware, outermost: each request's id (the proxy's, or a new one), in the context of every
    line logged while it is answered and in the answer's X-Request-ID; then one line for it."""

    def __init__(self, get_response: Callable[[Any], Any]):
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        request_id = incoming_request_id(request) or uuid.uuid4().hex
        started = time.perf_counter()
        with log_context(request_id=request_id):
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            path = logged_path(request)
            if response.status_code >= 400 and not getattr(response, "_has_been_logged", False):
                # Django's own line for a refusal (a 404, a 403), which it would write once this
                # middleware has returned, outside the request's context: written here, within it.
                from django.utils.log import log_response

                log_response("%s: %s", response.reason_phrase, path, response=response, request=request)
            user = getattr(request, "user", None)
            user_id = user.pk if user is not None and user.is_authenticated else None
            took = time.perf_counter() - started
            status = response.status_code
            level = logging.DEBUG if request.path_info in PROBES else logging.WARNING if status >= 500 else logging.INFO
            requests_log.log(
                level,
                "%s %s %s %.3f s user %s from %s",
                request.method,
                path,
                status,
                took,
                user_id if user_id is not None else "-",
                _address(request) or "-",
                extra={
                    "method": request.method,
                    "path": path,
                    "status": status,
                    "duration_seconds": round(took, 6),
                    "user_id": user_id,
                    "address": _address(request),
                },
            )
        return response


def crashed(prog: str, exc: BaseException) -> bool:
    """A command ended by an error of ours: in the log with its traceback, as one JSON object, where
    the site's log is set up and is JSON (the site's and the workers' processes). Whether that line
    went to standard error, where the command's own plain line would otherwise go."""
    from django.conf import settings

    if not settings.configured or read("GRADEWRIGHT_LOG_FORMAT").lower() != "json":
        return False
    logging.getLogger("gradewright").critical(
        "%s: internal error (%s: %s); please report it", prog, type(exc).__name__, exc, exc_info=exc
    )
    return not read("GRADEWRIGHT_LOG_FILE")


def _thread_crashed(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    logging.getLogger("gradewright").critical("%s stopped: %s", name, args.exc_value, exc_info=args.exc_value or True)


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
    """Sign-in refusals reach the log, and so does an exception no thread caught (called once, when
    the app is ready)."""
    from axes.signals import user_locked_out
    from django.contrib.auth.signals import user_login_failed

    user_login_failed.connect(_password_failed, dispatch_uid="gradewright-sign-in-failed")
    user_locked_out.connect(_locked_out, dispatch_uid="gradewright-locked-out")
    threading.excepthook = _thread_crashed
