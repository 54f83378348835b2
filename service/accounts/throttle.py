"""Sign-in throttling, by django-axes, on every path that checks a password (the sign-in page and
the API's token endpoint both call Django's ``authenticate``, where axes's backend stands first).

The policy (README, "Security"), with the figures in settings.py:

1. a (username, address) pair is locked after ``AXES_FAILURE_LIMIT`` failures, until
   ``AXES_COOLOFF_TIME`` has passed since its last one;
2. an address alone is locked only at ``GRADEWRIGHT_ADDRESS_FAILURE_LIMIT`` failures across all
   usernames, many more: a password-spraying script, not a class behind one NAT making typos;
3. a username alone is never locked: guessing alice's password from one address locks only
   (alice, that address), and alice still signs in from her own.

A locked pair or address is refused even with the right password, so guessing cannot go on. The
tries of one pair are made one after another (``one_try_at_a_time``), so a burst sent at once is
counted as the same tries one by one would be: sixteen guesses at once get nine answers, not sixteen.

axes locks by (username, address) on its own. It compares one count with one limit, however, so an
address's own, higher limit cannot be said in its settings: ``PairThenAddressHandler`` adds it,
over axes's own records of failures."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.conf import settings
from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.contrib.auth.forms import AuthenticationForm
from django.db import connection
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from course.wording import plural
from service.settings import COOL_OFF

_LATER = f"try again in {plural(COOL_OFF.seconds // 60, 'minute')}"
PAIR_REFUSED = f"too many failed sign-ins for this username from your address; {_LATER}"
ADDRESS_REFUSED = f"too many failed sign-ins from your address; {_LATER}"


def address_of(request: HttpRequest) -> str | None:
    """The address a sign-in comes from: the connection's, REMOTE_ADDR, only. X-Forwarded-For is
    anyone's to write, so it is never read here: behind a proxy, waitress itself puts the client's
    address in REMOTE_ADDR when told to trust that proxy (GRADEWRIGHT_TRUSTED_PROXY, server.py)."""
    return request.META.get("REMOTE_ADDR") or None


def username_of(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str | None:
    """The username a sign-in tries, as axes records it, cut to a username's length (150): Django's
    sign-in form does not check it, and PostgreSQL refuses a longer one than axes's column holds."""
    given = credentials.get("username") if credentials else request.POST.get("username")
    return None if given is None else str(given)[:150]


def address_failures(request: HttpRequest) -> int:
    """Failed sign-ins from the request's address, for any username, within the cool-off."""
    address = getattr(request, "axes_ip_address", None)
    if address is None:
        return 0
    recent = AccessAttempt.objects.filter(ip_address=address, attempt_time__gte=get_cool_off_threshold(request))
    return recent.aggregate(total=Sum("failures_since_start"))["total"] or 0


class PairThenAddressHandler(AxesDatabaseHandler):
    """axes's database handler, whose count for the pair (AXES_LOCKOUT_PARAMETERS) reaches its
    limit also once the address has reached the address's own, higher limit. axes asks this count
    both before a password is checked and after a failure is recorded, so the one override does."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        pair = super().get_failures(request, credentials)
        if address_failures(request) >= settings.GRADEWRIGHT_ADDRESS_FAILURE_LIMIT:
            return max(pair, settings.AXES_FAILURE_LIMIT)
        return pair


# Locks for the pairs trying at once in this process, striped: a pair's tries wait for each other,
# and another pair's only when it shares the stripe (memory stays bounded however many try).
_STRIPES = [threading.Lock() for _ in range(64)]


def one_try_at_a_time(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A sign-in view (a password checked, a failure recorded) run for one (username, address) pair
    at a time: axes counts a pair's failures before checking its password and records one after,
    so tries arriving together would each read the same count and all be checked. In this process
    by a lock, and across the service's processes on PostgreSQL by an advisory lock. Only the pair
    waits: a class signing in from one NAT address is not made to queue."""

    @wraps(view)
    def serialised(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        pair = f"{username_of(request)}\0{address_of(request)}".encode("utf-8", "surrogatepass")
        key = int.from_bytes(hashlib.blake2b(pair, digest_size=8).digest(), "big", signed=True)
        with _STRIPES[key % len(_STRIPES)], _across_processes(key):
            return view(request, *args, **kwargs)

    return serialised


@contextmanager
def _across_processes(key: int) -> Iterator[None]:
    if connection.vendor != "postgresql":  # SQLite: one process serves the site (autograder serve)
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def refused(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """What a locked sign-in gets (AXES_LOCKOUT_CALLABLE): the API a JSON error, the page itself
    again with the reason, both 429 Too Many Requests."""
    locked_address = address_failures(request) >= settings.GRADEWRIGHT_ADDRESS_FAILURE_LIMIT
    message = ADDRESS_REFUSED if locked_address else PAIR_REFUSED
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message}, status=429)
    context = {"form": AuthenticationForm(request), "refused": message, "next": request.POST.get("next", "")}
    return render(request, "service/accounts/login.html", context, status=429)
