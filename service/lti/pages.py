"""The instructor's page of course platforms: the registrations, the addresses to give each
platform, a form to register one (as `autograder lti add-platform`), and the scores not sent to
the platforms yet (pending, or failed with the reason), the failed ones to be tried again. Course
settings: the instructor's only, never a teaching assistant's."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from service.core.access import instructor_required
from service.errors import LtiError

from . import forms
from .models import ScoreToSend
from .outbox import retry_failed, unsent
from .platforms import add_platform, platform_problems, platform_settings, registrations, tool_addresses

FIELDS = ("name", "issuer", "client_id", "auth_url", "token_url", "keyset_url")


@login_required
@require_http_methods(["GET", "POST"])
@instructor_required
def platforms_page(request: HttpRequest) -> HttpResponse:
    form = forms.Platform(request.POST)
    if request.method == "POST" and form.value("action") == "retry":
        count = retry_failed()
        messages.success(
            request,
            ngettext("%d failed score will be sent again", "%d failed scores will be sent again", count) % count,
        )
        return redirect("platforms")
    if request.method == "POST":
        # Every field is text here, checked by platform_problems: each refused field told beside it.
        fields = {name: form.value(name, "") for name in FIELDS}
        fields["deployment_ids"] = form.value("deployment_ids", [])
        problems = platform_problems(**fields)
        for name, problem in problems.items():
            form.add_error(name if name in form.fields else None, problem)
        if problems:
            return render(request, "service/lti/platforms.html", _context(request, form), status=400)
        try:
            registration = add_platform(platform_settings(**fields))
        except LtiError as exc:
            form.add_error(None, str(exc))
            return render(request, "service/lti/platforms.html", _context(request, form), status=400)
        messages.success(request, f"{registration.name} is registered")
        return redirect("platforms")
    return render(request, "service/lti/platforms.html", _context(request, forms.Platform()))


def _context(request: HttpRequest, form: forms.Platform) -> dict:
    base, now = request.build_absolute_uri("/"), timezone.now()
    rows = [
        {
            "registration": registration,
            "addresses": tool_addresses(base, registration),
            "deployments": [d.deployment_id for d in registration.deployments.all() if d.is_active],
        }
        for registration in registrations()
    ]
    return {
        "rows": rows,
        "form": form,
        "unsent": [
            (score, f"{score.score_given:g}", f"{score.score_maximum:g}", *delivery(score, now))
            for score in unsent()[:500]
        ],
    }


def delivery(score: ScoreToSend, now) -> tuple[str, str]:
    """Where a score not sent stands, in words, and why. A sender that claims a score moves its next
    attempt past the claim (outbox.CLAIM): one never tried whose next attempt is ahead is being sent."""
    if score.state == ScoreToSend.FAILED:
        return "failed", score.last_error
    if score.attempts == 0 and score.next_attempt_at > now:
        return "being sent", "a worker's sender is sending it now; if it does not finish, it is tried again"
    if score.attempts:
        return "to be tried again", score.last_error or "the last attempt did not reach the platform"
    return "waiting", "the workers' sender takes it on its next pass (or `autograder lti send-scores` at once)"
