"""The site's settings, built for one course folder. The service keeps its state beside the course,
in ``<course>/.gradewright/`` (the secret key, uploads, reports, released notebooks), and its
database is the gradebook's: ``<course>/.gradewright/gradebook.db`` by default, or the database
``$GRADEWRIGHT_DATABASE_URL`` names."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from autograder.environment import read
from course.private_files import made_once

from .errors import ServiceSetupError

STATE_FOLDER = ".gradewright"
# In a course folder's root, this file marks it as the demo (`autograder serve --demo`, service/demo.py):
# every page then says "Demo course".
DEMO_MARK = "DEMO.txt"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # a notebook larger than this is refused before it is stored
CACHE_TABLE = "gradewright_cache"
CONNECTION_SECONDS = 60  # a PostgreSQL connection kept open for reuse (Django's CONN_MAX_AGE)
# Sign-in throttling (service/accounts/throttle.py, README "Security"): a (username, address) pair is locked
# after PAIR_FAILURE_LIMIT failures, an address alone only after ADDRESS_FAILURE_LIMIT, many more (one
# campus NAT is a whole class), a username alone never; until COOL_OFF has passed since the last one.
PAIR_FAILURE_LIMIT = 10
ADDRESS_FAILURE_LIMIT = 100
COOL_OFF = timedelta(minutes=15)
# Every page's Content-Security-Policy (django-csp): scripts, styles, images and connections from the
# site itself only, and no inline script or style at all, so that markup slipped into a page (a
# student's answer, a file name) can run nothing and load nothing; no plugin; not framed by any
# other site (the LTI pages a course platform shows in its frame excepted: service/lti/views.py);
# forms post to the site only. Charts are PNGs the site serves, not data: URIs.
CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "object-src": ["'none'"],
    "frame-ancestors": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
}


METRICS_ACCESS = ("off", "staff", "open")  # who may read /metrics (service/operations/probes.py)


def metrics_access() -> str:
    access = read("GRADEWRIGHT_METRICS").lower()
    if access not in METRICS_ACCESS:
        raise ServiceSetupError(f"GRADEWRIGHT_METRICS is {access!r}: give one of {', '.join(METRICS_ACCESS)}")
    return access


def course_state_folder(course: Path | None, must_exist: bool) -> Path | None:
    """The state folder of the course (``course``, else the course.toml here or above), for a
    backup (``must_exist``: only where there is one) or a restore; None outside any course."""
    from course.errors import CourseError
    from course.folder import find_course

    try:
        folder = find_course(course).root / STATE_FOLDER
    except CourseError:
        if course is not None:
            raise
        return None
    return folder if folder.is_dir() or not must_exist else None


def course_gradebook(course: Path | None, create: bool) -> Path:
    """The gradebook a command uses when none is named: in a course (``course``, else the course.toml
    here or above) the site's own, <course>/.gradewright/gradebook.db (its folder made with
    ``create``), as ``gradebook backup`` finds it; outside any course ./gradebook.db."""
    folder = course_state_folder(course, must_exist=False)
    if folder is None:
        return Path("gradebook.db")
    if create:
        state_folder(folder.parent)
    return folder / "gradebook.db"


def state_folder(course_root: Path) -> Path:
    folder = course_root / STATE_FOLDER
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ServiceSetupError(f"{folder}: cannot create the service's state folder ({exc.strerror})") from None
    return folder


def secret_key(folder: Path) -> str:
    """The site's secret key: made on first start, readable by its owner only."""
    return made_once(folder / "secret_key", lambda: secrets.token_urlsafe(50))


def build(
    course_root: Path, database_url: str | None = None, debug: bool = False, state: Path | None = None
) -> dict[str, Any]:
    """Django settings for the service of the course at ``course_root`` (its state in ``state``,
    by default the course's ``.gradewright/``)."""
    from gradebook.database import database_url as url_of
    from gradebook.database import sqlite_options

    from .core.logs import configuration as logging_configuration

    folder = state_folder(course_root) if state is None else state
    url = url_of(database_url)
    if url:
        import dj_database_url

        # Each of the site's threads keeps its connection between requests (PostgreSQL forks a process
        # for each new one: 4 to 6 ms of the machine's time a request, more than most requests' own
        # queries), checked before its first query of a request, so one the database dropped (a restart)
        # is opened again. SQLite's file opens in microseconds: closed after each request, as before.
        database = dj_database_url.parse(url, conn_max_age=CONNECTION_SECONDS, conn_health_checks=True)
    else:
        database = {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(folder / "gradebook.db"),
            "OPTIONS": sqlite_options(),
        }
    return {
        "DEBUG": debug,
        "SECRET_KEY": read("GRADEWRIGHT_SECRET_KEY") or secret_key(folder),
        "ALLOWED_HOSTS": [host.strip() for host in read("GRADEWRIGHT_ALLOWED_HOSTS").split(",")],
        "INSTALLED_APPS": [
            "django.contrib.auth",
            "django.contrib.contenttypes",
            # Django's admin, the instructor's fallback console at /admin/ (service/operations/console.py).
            "service.apps.ConsoleConfig",
            "django.contrib.sessions",
            "django.contrib.messages",
            "axes",
            "django.contrib.staticfiles",
            "csp",
            "lti_tool",
            "gradebook",
            "service",
        ],
        "MIDDLEWARE": [
            # Outermost: each request's id in every line logged while it is answered, and its line.
            "service.core.logs.LogRequests",
            "service.operations.metrics.CountRequests",  # every answer counted, whichever layer gave it
            "django.middleware.security.SecurityMiddleware",
            # The site's security headers, first: every response gets them, whichever layer answers
            # (whitenoise's files, a NUL refused below, a host refused by CommonMiddleware).
            "django.middleware.clickjacking.XFrameOptionsMiddleware",
            "csp.middleware.CSPMiddleware",
            # The site's own stylesheet and scripts, served by the site itself (whitenoise): the
            # same under `autograder serve`, in the tests and offline, never from a CDN.
            "whitenoise.middleware.WhiteNoiseMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",
            "service.core.boundary.RefuseNullCharacters",  # a NUL in the address or a field: 400, before any view
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.contrib.messages.middleware.MessageMiddleware",
            # Last, as axes asks: it turns a locked sign-in's answer into AXES_LOCKOUT_CALLABLE's.
            "axes.middleware.AxesMiddleware",
        ],
        "ROOT_URLCONF": "service.urls",
        # axes's backend first: it refuses a locked sign-in before the password is checked.
        # Every password a person sets (the welcome link's form, `autograder accounts password`):
        # Django's own four checks, so "password" or a student id is never one.
        "AUTH_PASSWORD_VALIDATORS": [
            {"NAME": f"django.contrib.auth.password_validation.{name}"}
            for name in (
                "UserAttributeSimilarityValidator",
                "MinimumLengthValidator",
                "CommonPasswordValidator",
                "NumericPasswordValidator",
            )
        ],
        "AUTHENTICATION_BACKENDS": ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"],
        "AXES_HANDLER": "service.accounts.throttle.PairThenAddressHandler",
        "AXES_LOCKOUT_PARAMETERS": [["username", "ip_address"]],
        "AXES_FAILURE_LIMIT": PAIR_FAILURE_LIMIT,
        "GRADEWRIGHT_ADDRESS_FAILURE_LIMIT": ADDRESS_FAILURE_LIMIT,
        "AXES_COOLOFF_TIME": COOL_OFF,
        "AXES_RESET_ON_SUCCESS": True,  # a student's own typos are forgotten once they sign in
        # A try while locked is refused without its password being checked, so it need not count:
        # a lock ends COOL_OFF after the failure that made it, as the refusal says, however often
        # a student tries in between.
        "AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT": False,
        "AXES_CLIENT_IP_CALLABLE": "service.accounts.throttle.address_of",
        "AXES_USERNAME_CALLABLE": "service.accounts.throttle.username_of",
        "AXES_LOCKOUT_CALLABLE": "service.accounts.throttle.refused",
        # axes would keep a row for every sign-in, for ever; the throttle needs only the failures.
        "AXES_DISABLE_ACCESS_LOG": True,
        "AXES_ENABLE_ADMIN": False,
        "TEMPLATES": [
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                # The console's own additions to the admin's templates, found before the admin's.
                "DIRS": [Path(__file__).resolve().parent / "console_templates"],
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                        "service.accounts.hub.context",  # the sign-in page's "Sign in with JupyterHub"
                        "service.demo.context",  # every page's "Demo course" notice, when it is the demo
                        "service.marking.reviews.context",  # the staff's count of review requests waiting
                        "service.core.live_settings.context",  # the staff's banner: a settings file that does not read
                    ]
                },
            }
        ],
        "DATABASES": {"default": database},
        # LTI logins keep their state and nonce between the platform's two requests in the cache: in
        # the database, so that every process of the site (and any number of them) shares it.
        "CACHES": {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}},
        "USE_TZ": True,
        "TIME_ZONE": "UTC",
        # Dates in the admin as on every page ("1 Dec 2026, 14:44 UTC"), not Django's own format.
        "FORMAT_MODULE_PATH": "service.formats",
        "DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField",
        "LOGIN_URL": "login",
        "LOGIN_REDIRECT_URL": "assignments",
        "LOGOUT_REDIRECT_URL": "login",
        # Uploads: Django keeps what it reads within these bounds; uploads.py checks the rest.
        "DATA_UPLOAD_MAX_MEMORY_SIZE": MAX_UPLOAD_BYTES + 64 * 1024,
        "FILE_UPLOAD_MAX_MEMORY_SIZE": MAX_UPLOAD_BYTES + 64 * 1024,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "CSRF_COOKIE_SAMESITE": "Lax",
        "X_FRAME_OPTIONS": "DENY",
        "CONTENT_SECURITY_POLICY": {"DIRECTIVES": CONTENT_SECURITY_POLICY},
        "STATIC_URL": "/static/",
        # Static files straight from the installed packages (service/static/), found at start by
        # Django's finders: no `collectstatic` step to forget, and no stale copy after an upgrade.
        # They are a few small files, read once when the site starts (no autorefresh).
        "WHITENOISE_USE_FINDERS": True,
        "WHITENOISE_AUTOREFRESH": False,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "LOGGING": logging_configuration(),
        "GRADEWRIGHT_METRICS": metrics_access(),
        "GRADEWRIGHT_COURSE": str(course_root),
        "GRADEWRIGHT_STATE": str(folder),
        "GRADEWRIGHT_DEMO": (course_root / DEMO_MARK).is_file(),
        **(_behind_https(service_prefix()) if read("GRADEWRIGHT_HTTPS") == "1" else {}),
        **_hub(),
    }


def _csv(name: str) -> frozenset[str]:
    return frozenset(part.strip() for part in read(name).split(",") if part.strip())


def started_by_hub() -> bool:
    """Whether a JupyterHub runs the site as its service (it gave it an OAuth client)."""
    return all(read(name) for name in ("JUPYTERHUB_API_URL", "JUPYTERHUB_CLIENT_ID", "JUPYTERHUB_API_TOKEN"))


def service_prefix() -> str:
    """The address prefix the hub's proxy serves the site under (``/services/gradewright``), or ""
    where no hub runs the site: Django's addresses, and so ``request.path``, begin with it."""
    if not started_by_hub():
        return ""
    prefix = "/" + read("JUPYTERHUB_SERVICE_PREFIX").strip("/")
    return "" if prefix == "/" else prefix


def _hub() -> dict[str, Any]:
    """The site as a JupyterHub service (service/accounts/hub.py, docs/operators/jupyterhub.md), when the hub
    gave it an OAuth client: JupyterHub's own variables, which the hub sets for a service it starts
    (for one started otherwise, the administrator sets them the same), and the site's own
    ``GRADEWRIGHT_HUB_...``; each is described in autograder/environment.py's SETTINGS."""
    if not started_by_hub():
        return {}
    api_url = read("JUPYTERHUB_API_URL").rstrip("/")
    client_id = read("JUPYTERHUB_CLIENT_ID")
    api_token = read("JUPYTERHUB_API_TOKEN")
    prefix = service_prefix()
    base = "/" + read("JUPYTERHUB_BASE_URL").strip("/")
    host = read("JUPYTERHUB_HOST").rstrip("/")
    try:
        timeout = float(read("GRADEWRIGHT_HUB_TIMEOUT"))
        cache_seconds = min(30.0, float(read("GRADEWRIGHT_HUB_CACHE_SECONDS")))
    except ValueError:
        raise ServiceSetupError(
            "GRADEWRIGHT_HUB_TIMEOUT and GRADEWRIGHT_HUB_CACHE_SECONDS are numbers of seconds"
        ) from None
    hub = {
        "api_url": api_url,
        "api_token": api_token,
        "client_id": client_id,
        "callback_url": read("JUPYTERHUB_OAUTH_CALLBACK_URL") or f"{prefix}/oauth_callback",
        "authorize_url": f"{host}{base.rstrip('/')}/hub/api/oauth2/authorize",
        "username_claim": read("GRADEWRIGHT_HUB_USERNAME_CLAIM"),
        "instructor_groups": _csv("GRADEWRIGHT_HUB_INSTRUCTOR_GROUPS"),
        "ta_groups": _csv("GRADEWRIGHT_HUB_TA_GROUPS"),
        "timeout": timeout,
        "cache_seconds": max(0.0, cache_seconds),
        # A hub token is taken only if the hub lets it reach this service, as JupyterHub's own
        # services check: the OAuth sign-in's token has the scope, a user's server's token has it
        # once the administrator adds it to the `server` role (README "On your JupyterHub").
        "access_scope": read("GRADEWRIGHT_HUB_ACCESS_SCOPE")
        or (f"access:services!service={service}" if (service := read("JUPYTERHUB_SERVICE_NAME")) else ""),
    }
    extra: dict[str, Any] = {"GRADEWRIGHT_HUB": hub, "LOGIN_URL": "hub-login"}
    if prefix:
        # Under the hub's proxy (service/accounts/hub.py StripPrefix): addresses, static files and cookies
        # within the service's own prefix, apart from the hub's and the users' servers'.
        extra.update(
            FORCE_SCRIPT_NAME=prefix,
            STATIC_URL=f"{prefix}/static/",
            SESSION_COOKIE_PATH=f"{prefix}/",
            CSRF_COOKIE_PATH=f"{prefix}/",
            SESSION_COOKIE_NAME="gradewright-session",
            CSRF_COOKIE_NAME="gradewright-csrftoken",
        )
    return extra


def _behind_https(prefix: str = "") -> dict[str, Any]:
    """Production: the site is reached over HTTPS, through a proxy that terminates TLS and says so
    in X-Forwarded-Proto. With these, ``django-admin check --deploy`` passes. ``prefix``: the hub's
    (``service_prefix``), which the paths Django's redirect compares begin with."""
    under = re.escape(prefix.strip("/") + "/") if prefix.strip("/") else ""
    return {
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
        "SECURE_SSL_REDIRECT": True,
        # The orchestrator's and Prometheus's probes come over plain HTTP from inside (service/operations/probes.py).
        "SECURE_REDIRECT_EXEMPT": [rf"^{under}(?:healthz|readyz|metrics)$"],
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        # HSTS for the whole domain, or its preloading, is the domain's owners' decision, not a
        # course tool's: a university's other sites may not all be on HTTPS.
        "SILENCED_SYSTEM_CHECKS": ["security.W005", "security.W021"],
    }


def configure(
    course_root: Path, database_url: str | None = None, debug: bool = False, state: Path | None = None
) -> None:
    """Configure Django for the service (once per process)."""
    import django
    from django.conf import settings

    if settings.configured:
        if getattr(settings, "GRADEWRIGHT_COURSE", None) == str(course_root):
            return  # this course's service, configured already (a test, or a second command in one process)
        raise ServiceSetupError(
            "Django is configured already in this process; start the service in a process of its own"
        )
    settings.configure(**build(course_root, database_url, debug, state))
    django.setup()


NO_COLLECTSTATIC = (
    "collectstatic: nothing to collect: the site serves its static files from the installed package itself "
    "(whitenoise, found at start), so no step is needed after an install or an upgrade"
)


def manage(course_root: Path, database_url: str | None, arguments: list[str]) -> int:
    """``autograder manage``: one of Django's management commands for the course's site (its
    settings, its database), as ``django-admin`` would run it with them. Its exit status."""
    from django.core.management import execute_from_command_line

    if arguments[:1] == ["collectstatic"]:
        # Django's deployment habit, which would stop on the STATIC_ROOT the site has no need of.
        print(NO_COLLECTSTATIC)
        return 0
    configure(course_root, database_url)
    try:
        execute_from_command_line(["autograder manage", *arguments])
    except SystemExit as ended:  # a command that failed (check with errors, a bad option) exits by itself
        return ended.code if isinstance(ended.code, int) else 1
    return 0
