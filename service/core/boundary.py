"""What the site answers a request it cannot use, in one place: the error pages (HTML for the pages,
``{"error": "..."}`` JSON for every address under ``/api/v1/``, whatever view, converter or
middleware refused it), a 405 that says in ``Allow`` what is allowed, the ids the addresses take,
and the parsing of posted ids and numbers. A malformed id or parameter is a 400 or a 404 here,
never a 500 in a view; a real 500 is a plain page with no traceback."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable, Iterable

from django import forms
from django.core.exceptions import BadRequest, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import escape

API_PREFIX = "/api/v1/"
# The largest id a database's 64-bit key holds: a longer number is no id of ours, and a query with
# it would overflow the driver (SQLite's, psycopg's) before it could miss.
MAX_ID = 2**63 - 1
logger = logging.getLogger("service")


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def error_json(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


class IdConverter:
    """``<id:job_id>``: a database id, 1 to 19 digits and at most MAX_ID, so that anything else
    (letters, a sign, a number too large for the database) is a 404 before any view runs."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 0 < number <= MAX_ID:
            raise ValueError("not an id")  # the resolver takes it as no match: a 404
        return number

    def to_url(self, value: int) -> str:
        return str(int(value))


def posted_id(text: str | None) -> int:
    """A posted id (a job's, a submission's), or ValueError: a whole number the database can hold."""
    try:
        return forms.IntegerField(min_value=1, max_value=MAX_ID).clean(text)
    except ValidationError:
        raise ValueError(f"{text!r} is not an id") from None


def number(text: str | None) -> float:
    """A posted or queried number (a score, points, a threshold), or ValueError: finite, so that
    ``nan`` or ``inf`` never reaches a mark or a comparison."""
    try:
        value = float(text or "")
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a number")
    return value


def not_allowed(request: HttpRequest, methods: Iterable[str]) -> HttpResponse:
    """405 with ``Allow``: JSON under /api/v1/, as every other API answer."""
    allowed = ", ".join(sorted(methods))
    if is_api(request):
        response: HttpResponse = error_json(405, f"{request.method} is not allowed here; use {allowed}")
    else:
        response = HttpResponse(
            f"{escape(request.method or '')} is not allowed here", status=405, content_type="text/plain; charset=utf-8"
        )
    response["Allow"] = allowed
    return response


def _message(exception: Exception | None, default: str) -> str:
    """The one line our own code raised with (Http404("no such assignment")); the resolver's own
    404 carries a dict of the patterns it tried, which is no reader's business."""
    if exception is not None and exception.args and isinstance(exception.args[0], str) and exception.args[0]:
        return exception.args[0].splitlines()[0]
    return default


def _page(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    if is_api(request):
        return error_json(status, message)
    return render(request, "service/error.html", {"title": title, "message": message}, status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    # Django's SuspiciousOperation says things for the log (a host header, a field count), not for
    # the reader; our own BadRequest says what was wrong with the request.
    told = exception if isinstance(exception, BadRequest) else None
    return _page(request, 400, "Bad request", _message(told, "the request could not be read"))


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _page(request, 403, "Refused", _message(exception, "you may not do this"))


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _page(request, 404, "Not found", _message(exception, "no such page"))


SERVER_ERROR = "the service failed on this request; it is logged, and nothing was changed by this answer"


UNAVAILABLE = "the service cannot reach its database just now (a restart, most likely); nothing was changed: try again in a few seconds"


def server_error(request: HttpRequest) -> HttpResponse:
    """A real bug: a plain answer, rendered from no template (a broken template may be the bug),
    with no traceback; Django logs the exception itself (django.request). The database away for a
    while (service/core/outage.py: a restart) is no bug: a 503 that asks to come back in RETRY_AFTER
    seconds, from whatever view or middleware met it (Django calls this with the exception being
    handled)."""
    from .outage import RETRY_AFTER, database_lost

    if database_lost(sys.exc_info()[1]):
        response = _unavailable(request)
        response["Retry-After"] = str(RETRY_AFTER)
        return response
    if is_api(request):
        return error_json(500, SERVER_ERROR)
    return HttpResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Server error · Gradewright</title>'
        f"</head><body><h1>Server error</h1><p>{SERVER_ERROR}.</p></body></html>",
        status=500,
        content_type="text/html; charset=utf-8",
    )


def _unavailable(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return error_json(503, UNAVAILABLE)
    return HttpResponse(  # from no template and no database: neither is there to be had
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unavailable · Gradewright</title>'
        f"</head><body><h1>Back in a moment</h1><p>{UNAVAILABLE}.</p></body></html>",
        status=503,
        content_type="text/html; charset=utf-8",
    )


def _has_null(values: Iterable[str]) -> bool:
    return any("\x00" in value for value in values)


class RefuseNullCharacters:
    """A NUL character in the address, a query value, a posted value or an uploaded file's name is a
    400, before any view: no database stores one in text (PostgreSQL refuses it with an error), and
    no name or id has one. (A field's name is only ever compared with the names a view reads.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        fields = [request.path_info, *(value for _, values in request.GET.lists() for value in values)]
        if request.method == "POST" and request.content_type in {
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        }:
            fields += [value for _, values in request.POST.lists() for value in values]
            fields += [upload.name or "" for _, uploads in request.FILES.lists() for upload in uploads]
        if _has_null(fields):
            return bad_request(request, BadRequest("a NUL character is in the address or a field"))
        return self.get_response(request)
