"""What an orchestrator, a proxy and Prometheus ask the site: ``/healthz`` (the process answers),
``/readyz`` (it can do its work: service/operations/health.py) and ``/metrics`` (service/operations/metrics.py), the last
to whom ``GRADEWRIGHT_METRICS`` lets read it: nobody (off, the default: a 404), the course's staff
signed in or a scraper with ``GRADEWRIGHT_METRICS_TOKEN`` (staff), anyone (open)."""

from __future__ import annotations

import secrets

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from autograder.environment import read


@never_cache
@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


@never_cache
@require_safe
def readyz(request: HttpRequest) -> HttpResponse:
    """200 when this site can serve (the database answers, its migrations are applied), whether or
    not a grading worker is alive or a settings file reads (both said: service/operations/health.py); 503 with
    the facts otherwise (JSON either way)."""
    from .health import readiness

    facts = readiness()
    return JsonResponse(facts.as_dict(), status=200 if facts.ready else 503)


def _may_read_metrics(request: HttpRequest) -> bool:
    from django.conf import settings

    access = settings.GRADEWRIGHT_METRICS  # checked when the site starts (service/settings.py)
    if access == "open":
        return True
    if access == "off":
        return False
    token = read("GRADEWRIGHT_METRICS_TOKEN")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if token and scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode()):
        return True
    if not request.user.is_authenticated:
        return False
    from service.accounts.models import Member

    member = Member.objects.filter(user=request.user).first()
    return member is not None and member.is_staff_member


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    if not _may_read_metrics(request):
        raise Http404("no such page")  # as any page one may not see: it reveals nothing
    from prometheus_client import CONTENT_TYPE_LATEST

    from .metrics import exposition

    return HttpResponse(exposition(request.GET.get("scope", "")), content_type=CONTENT_TYPE_LATEST)
