"""JupyterHub sign-in: the site as a JupyterHub service.

A hub user opening the site is signed in through the hub's OAuth (``/hub/login/`` here starts it,
``/hub/oauth_callback/`` finishes it; JupyterHub's own client, ``HubOAuth``, makes the requests,
with PKCE), and the API takes a hub token (``Authorization: token <hub token>``, JupyterHub's
format). Either way the token is verified with the hub itself (``GET /hub/api/user`` with that
token), never a username the request merely states: the hub says whose token it is and which
groups they are in. The username (``GRADEWRIGHT_HUB_USERNAME_CLAIM`` of the hub's user model,
``name`` by default) is matched to the roster's student_id; the hub's groups give the role
(service/settings.py: ``GRADEWRIGHT_HUB_INSTRUCTOR_GROUPS``, ``..._TA_GROUPS``; anyone else is a
student, who must be on the roster).

Refusals, each with its own clear message: a token the hub does not know (expired, revoked, never
a hub token), a token of another hub user than the request names (``X-Gradewright-Hub-User``, sent
by ``gradewright.submit()``), a hub user not on the roster, and a hub that cannot be reached.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from functools import cache
from hashlib import sha256
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_safe

from gradebook.models import Student
from service.errors import ServiceError

from .models import Member

# The header gradewright.submit() sends with the name of the hub user it runs as ($JUPYTERHUB_USER):
# a token that is someone else's is then refused, rather than handing in as them.
CLAIMED_USER_HEADER = "X-Gradewright-Hub-User"
SESSION_STATE = "gradewright_hub_oauth"


class HubRefused(ServiceError):
    """A hub sign-in or hub token refused: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class HubUser:
    name: str  # the username claim's value: matched to the roster's student_id
    groups: frozenset[str]


def config() -> dict[str, Any] | None:
    """The hub's settings (service/settings.py), or None when the site is not a hub service."""
    return getattr(settings, "GRADEWRIGHT_HUB", None)


def enabled() -> bool:
    return config() is not None


def _config() -> dict[str, Any]:
    """The hub's settings where the site is a hub service (its views ask ``enabled`` first)."""
    hub = config()
    if hub is None:
        raise HubRefused(404, "this site is not a JupyterHub service")
    return hub


# --- verifying a token with the hub ---------------------------------------------------------------

_cache: dict[str, tuple[float, dict[str, Any] | None]] = {}
_cache_lock = threading.Lock()


def _hub_model(token: str) -> dict[str, Any]:
    """The hub's user model for ``token`` (``GET <hub api>/user`` with it), cached for a few seconds
    by the token's SHA-256 (never the token itself): a revoked token is refused again within them."""
    import httpx

    hub = _config()
    key = sha256(token.encode("utf-8", "replace")).hexdigest()
    now = time.monotonic()
    with _cache_lock:
        for old in [k for k, (at, _) in _cache.items() if now - at > hub["cache_seconds"]]:
            del _cache[old]
        cached = _cache.get(key)
    if cached is not None:
        model = cached[1]
    else:
        url = f"{hub['api_url']}/user"
        try:
            response = httpx.get(url, headers={"Authorization": f"token {token}"}, timeout=hub["timeout"])
        except httpx.HTTPError as exc:
            raise HubRefused(
                503,
                f"the hub ({hub['api_url']}) cannot be reached to check the token "
                f"({type(exc).__name__}); try again in a minute",
            ) from None
        if response.status_code in {401, 403, 404}:
            model = None  # the hub knows no such token: never one, expired, or revoked
        elif response.status_code != 200:
            raise HubRefused(
                503,
                f"the hub ({hub['api_url']}) answered {response.status_code} when asked "
                "about the token; try again in a minute",
            )
        else:
            try:
                model = response.json()
            except ValueError:
                model = None
            if not isinstance(model, dict):
                raise HubRefused(503, f"the hub ({hub['api_url']}) answered something that is not a user")
        with _cache_lock:
            _cache[key] = (time.monotonic(), model)
    if model is None:
        raise HubRefused(
            401,
            "the hub does not accept this token: it has expired, was revoked or is "
            "not a hub token; restart your server from the hub, or sign in again",
        )
    return model


def user_for_token(token: str, claimed: str | None = None) -> HubUser:
    """The hub user whose token ``token`` is, as the hub says; refused if the request named another."""
    model = _hub_model(token)
    hub = _config()
    if model.get("kind", "user") != "user":
        raise HubRefused(403, "this is a hub service's token, not a hub user's: hand in with your own")
    name = model.get(hub["username_claim"])
    if not isinstance(name, str) or not name:
        raise HubRefused(403, f"the hub's account has no {hub['username_claim']!r} to match to the roster")
    scope = hub.get("access_scope")
    granted = model.get("scopes")
    if scope and not (isinstance(granted, list) and (scope in granted or "access:services" in granted)):
        raise HubRefused(
            403,
            f"this hub token is not one for this site: it lacks the scope {scope!r}, which "
            'the hub\'s administrator grants (README "On your JupyterHub")',
        )
    if claimed is not None and claimed != name:
        raise HubRefused(403, f"this hub token is another user's, not {claimed!r}'s: hand in with your own")
    groups = model.get("groups")
    return HubUser(
        name=name,
        groups=frozenset(g for g in groups if isinstance(g, str)) if isinstance(groups, list) else frozenset(),
    )


def role_of(user: HubUser) -> str:
    """The course role the hub's groups give: instructor, teaching assistant, else student."""
    hub = _config()
    if user.groups & hub["instructor_groups"]:
        return Member.INSTRUCTOR
    if user.groups & hub["ta_groups"]:
        return Member.TA
    return Member.STUDENT


def account_for(user: HubUser) -> User:
    """The site's account for a verified hub user: for a student, the roster student's (the same
    account their password or course platform sign-in has, if any); for staff, one of their name."""
    role = role_of(user)
    if role != Member.STUDENT:
        account, _ = User.objects.get_or_create(username=user.name[:150])
        member = Member.objects.filter(user=account).first()
        if member is None:
            Member.objects.create(user=account, role=role)
        elif member.role != role:
            member.role = role  # the hub's groups decide: moved between groups, the role follows
            member.save(update_fields=["role"])
        return account
    row = Student.objects.filter(student_id=user.name, on_roster=True).first()
    if row is None:
        raise HubRefused(403, f"hub user {user.name!r} is not on the course's roster; ask your instructor")
    linked = Member.objects.filter(student=row).select_related("user").first()
    if linked is not None:
        if linked.is_staff_member:
            raise HubRefused(403, f"the site's account for {user.name!r} is a staff account; ask your instructor")
        return linked.user
    account, _ = User.objects.get_or_create(username=user.name[:150], defaults={"email": row.email})
    member = Member.objects.filter(user=account).first()
    if member is not None and (member.is_staff_member or member.student_id not in {None, row.id}):
        raise HubRefused(403, f"the site's account {account.username!r} is someone else's; ask your instructor")
    Member.objects.update_or_create(user=account, defaults={"student": row, "role": Member.STUDENT})
    return account


def account_for_token(token: str, claimed: str | None = None) -> User:
    """The API's check of ``Authorization: token <hub token>``."""
    account = account_for(user_for_token(token, claimed))
    if not account.is_active:
        raise HubRefused(403, "this account is disabled; ask your instructor")
    return account


# --- signing in through the hub's OAuth ----------------------------------------------------------


@cache
def _oauth() -> Any:
    """JupyterHub's own OAuth client, configured from the hub's settings. Its requests wait at most
    the settings' timeout (HubAuth has no option for it: its requests' own arguments carry it)."""
    import aiohttp
    from jupyterhub.services.auth import HubOAuth

    hub = _config()
    timeout = float(hub["timeout"])

    class TimedHubOAuth(HubOAuth):
        async def _api_request(self, method: str, url: str, /, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", aiohttp.ClientTimeout(total=timeout))
            return await super()._api_request(method, url, **kwargs)

    return TimedHubOAuth(
        api_url=hub["api_url"],
        api_token=hub["api_token"],
        oauth_client_id=hub["client_id"],
        oauth_redirect_uri=hub["callback_url"],
        oauth_authorization_url=hub["authorize_url"],
        cache_max_age=hub["cache_seconds"],
    )


def _refusal(request: HttpRequest, refused: HubRefused) -> HttpResponse:
    from service.core.logs import sign_in_refused

    sign_in_refused("hub", "", request, str(refused))
    return render(request, "service/accounts/hub_refused.html", {"refused": str(refused)}, status=refused.status)


@require_safe
def hub_login(request: HttpRequest) -> HttpResponse:
    """Off to the hub's authorization page, with a state (kept in this browser's session) and PKCE."""
    if not enabled():
        return _refusal(request, HubRefused(404, "this site is not a JupyterHub service; sign in with your password"))
    oauth = _oauth()
    from .forms import HubLogin

    next_url = HubLogin(request.GET).value("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = ""
    verifier, challenge, method = oauth.generate_pkce_code_challenge()
    state = secrets.token_urlsafe(24)
    request.session[SESSION_STATE] = {"state": state, "verifier": verifier, "next": next_url}
    query = {
        "client_id": oauth.oauth_client_id,
        "redirect_uri": oauth.oauth_redirect_uri,
        "response_type": "code",
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": method,
    }
    return redirect(f"{oauth.oauth_authorization_url}?{urlencode(query)}")


@require_safe
def oauth_callback(request: HttpRequest) -> HttpResponse:
    """The hub sends the browser back with a code: exchanged for the user's token, which the hub
    then says is whose; that account is signed in."""
    if not enabled():
        return _refusal(request, HubRefused(404, "this site is not a JupyterHub service"))
    from .forms import HubCallback

    pending = request.session.pop(SESSION_STATE, None)
    answer = HubCallback(request.GET)
    if error := answer.value("error"):
        return _refusal(
            request,
            HubRefused(
                403,
                f"the hub did not authorize the sign-in: {answer.value('error_description') or error}"[:300],
            ),
        )
    code, state = answer.value("code", ""), answer.value("state", "")
    if not isinstance(pending, dict) or not code or not secrets.compare_digest(state, str(pending.get("state", ""))):
        return _refusal(
            request,
            HubRefused(
                400, "this sign-in was not started here or has been used already; open the site again from the hub"
            ),
        )
    try:
        try:
            token = _oauth().token_for_code(code, code_verifier=pending.get("verifier"))
        except Exception as exc:  # tornado's HTTPError, an aiohttp error, a timeout: the hub failed us
            raise HubRefused(
                503,
                f"the hub could not complete the sign-in ({getattr(exc, 'log_message', None) or type(exc).__name__}); "
                "try again in a minute",
            ) from None
        account = account_for_token(token)
    except HubRefused as refused:
        return _refusal(request, refused)
    login(request, account, backend="django.contrib.auth.backends.ModelBackend")
    return redirect(pending.get("next") or reverse("assignments"))


class StripPrefix:
    """The site under the hub's proxy: JupyterHub's proxy passes ``/services/<name>/...`` on whole;
    the prefix moves from PATH_INFO to SCRIPT_NAME, so that Django's addresses carry it."""

    def __init__(self, application: Any, prefix: str) -> None:
        self.application, self.prefix = application, prefix.rstrip("/")

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        if self.prefix and (path == self.prefix or path.startswith(self.prefix + "/")):
            environ["SCRIPT_NAME"] = self.prefix
            environ["PATH_INFO"] = path[len(self.prefix) :] or "/"
        return self.application(environ, start_response)


def context(request: HttpRequest) -> dict[str, Any]:
    """The pages' context: whether to offer "Sign in with JupyterHub"."""
    return {"hub_sign_in": enabled()}
