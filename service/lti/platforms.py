"""The course platforms this tool is registered with, and what a platform asks of the tool.

A registration is the platform's issuer, the client id it gave the tool, its deployment ids and
three endpoints (OIDC authorization, OAuth2 token, JWKS). The tool's own RSA key is made on first
need and published at its JWKS address, never shown otherwise."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import transaction
from pydantic import BaseModel, Field, field_validator

from service.errors import LtiError


class PlatformSettings(BaseModel):
    """What an instructor copies from the platform's page for the tool."""

    name: str = Field(min_length=1, max_length=255)
    issuer: str = Field(min_length=1, max_length=255)
    client_id: str = Field(min_length=1, max_length=255)
    deployment_ids: list[str] = Field(min_length=1)
    auth_url: str
    token_url: str
    keyset_url: str

    @field_validator("auth_url", "token_url", "keyset_url")
    @classmethod
    def _web_address(cls, value: str) -> str:
        parts = urlsplit(value)
        loopback = parts.hostname in {"127.0.0.1", "localhost", "::1"}
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise ValueError(f"{value!r} is not an https:// address (http:// only on this machine, for tests)")
        return value

    @field_validator("deployment_ids")
    @classmethod
    def _named(cls, value: list[str]) -> list[str]:
        cleaned = [item.strip() for item in value if item.strip()]
        if not cleaned or any(len(item) > 255 for item in cleaned):
            raise ValueError("give at least one deployment id, each at most 255 characters")
        return cleaned


class ToolAddresses(BaseModel):
    """What the platform asks for when the tool is added to it."""

    login: str  # OIDC login initiation (Canvas: "OpenID Connect Initiation Url"; Moodle: "Initiate login URL")
    login_for_this_platform: str  # the same, naming the registration (a platform that sends no client_id)
    launch: str  # redirect URI and target link URI (Moodle: "Tool URL", "Redirection URI(s)")
    deep_linking: str  # Moodle: "Content Selection URL"; Canvas: the placement's target link URI
    jwks: str  # public keyset URL


def ensure_tool_key() -> None:
    """The tool's signing key, made on first need."""
    from lti_tool.models import Key

    if not Key.objects.active().exists():
        Key.objects.generate()


def add_platform(settings: PlatformSettings):
    """Register a platform (or update the registration of the same issuer and client id); its
    deployments are active at once. Returns the registration."""
    from lti_tool.models import LtiDeployment, LtiRegistration

    ensure_tool_key()
    with transaction.atomic():
        registration, _ = LtiRegistration.objects.update_or_create(
            issuer=settings.issuer,
            client_id=settings.client_id,
            defaults={
                "name": settings.name,
                "auth_url": settings.auth_url,
                "token_url": settings.token_url,
                "keyset_url": settings.keyset_url,
                "is_active": True,
            },
        )
        for deployment_id in settings.deployment_ids:
            LtiDeployment.objects.update_or_create(
                registration=registration, deployment_id=deployment_id, defaults={"is_active": True}
            )
    return registration


def register_platform(server: str, **fields) -> tuple[str, ToolAddresses]:
    """``autograder lti add-platform``: the platform described by ``fields`` (``PlatformSettings``'
    fields) registered; its name, and the tool's addresses on the site at ``server`` to give it."""
    registration = add_platform(platform_settings(**fields))
    return registration.name, tool_addresses(server, registration)


# What a field left empty or too long is told, in words (pydantic's own messages name its types).
_REQUIRED = "required: copy it from the platform's page for the tool"


def platform_problems(**fields) -> dict[str, str]:
    """Each field's own problem, in words, by the field's name (empty: the settings are right): what
    a form shows beside each field, all of them at once."""
    from pydantic import ValidationError

    try:
        PlatformSettings.model_validate(fields)
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "name"
            if error["type"] in {"missing", "string_too_short", "too_short"}:
                said = _REQUIRED
            elif error["type"] == "string_too_long":
                said = "at most 255 characters"
            else:
                said = error["msg"].removeprefix("Value error, ")
            problems.setdefault(name, said)
        return problems
    return {}


def platform_settings(**fields) -> PlatformSettings:
    """Settings from a form or the command line; one line naming the field when one is wrong."""
    from pydantic import ValidationError

    try:
        return PlatformSettings.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "platform"
        raise LtiError(f"{where}: {error['msg'].removeprefix('Value error, ')}") from None


def tool_addresses(base_url: str, registration) -> ToolAddresses:
    """The tool's addresses for one registration, on the site at ``base_url``."""
    from django.urls import reverse

    base = base_url.rstrip("/")
    return ToolAddresses(
        login=base + reverse("lti-login"),
        login_for_this_platform=base + reverse("lti-login-for", args=[registration.uuid]),
        launch=base + reverse("lti-launch"),
        deep_linking=base + reverse("lti-launch"),
        jwks=base + reverse("lti-jwks"),
    )


def registrations():
    from lti_tool.models import LtiRegistration

    return LtiRegistration.objects.prefetch_related("deployments").order_by("name", "id")
