"""The site's settings, built for one course folder. The service keeps its state beside the course,
in ``<course>/.gradewright/`` (the secret key, uploads, reports, released notebooks), and its
database is the gradebook's: ``<course>/.gradewright/gradebook.db`` by default, or the database
``$AUTOGRADER_DATABASE_URL`` names."""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from .errors import ServiceSetupError

STATE_FOLDER = ".gradewright"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # a notebook larger than this is refused before it is stored
CACHE_TABLE = "gradewright_cache"
# Sign-in throttling (service/throttle.py, README "Security"): a (username, address) pair is locked
# after PAIR_FAILURE_LIMIT failures, an address alone only after ADDRESS_FAILURE_LIMIT, many more (one
# campus NAT is a whole class), a username alone never; until COOL_OFF has passed since the last one.
PAIR_FAILURE_LIMIT = 10
ADDRESS_FAILURE_LIMIT = 100
COOL_OFF = timedelta(minutes=15)


def state_folder(course_root: Path) -> Path:
    folder = course_root / STATE_FOLDER
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ServiceSetupError(f"{folder}: cannot create the service's state folder ({exc.strerror})") from None
    return folder


def secret_key(folder: Path) -> str:
    """The site's secret key: made on first start, readable by its owner only."""
    path = folder / "secret_key"
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def build(
    course_root: Path, database_url: str | None = None, debug: bool = False, state: Path | None = None
) -> dict[str, Any]:
    """Django settings for the service of the course at ``course_root`` (its state in ``state``,
    by default the course's ``.gradewright/``)."""
    from gradebook.database import SQLITE_OPTIONS
    from gradebook.database import database_url as url_of

    folder = state_folder(course_root) if state is None else state
    url = url_of(database_url)
    if url:
        import dj_database_url

        database = dj_database_url.parse(url)
    else:
        database = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(folder / "gradebook.db"),
                    "OPTIONS": dict(SQLITE_OPTIONS)}  # fmt: skip
    return {
        "DEBUG": debug,
        "SECRET_KEY": os.environ.get("GRADEWRIGHT_SECRET_KEY") or secret_key(folder),
        "ALLOWED_HOSTS": [host.strip() for host in os.environ.get("GRADEWRIGHT_ALLOWED_HOSTS", "*").split(",")],
        "INSTALLED_APPS": [
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "django.contrib.messages",
            "django.contrib.staticfiles",
            "axes",
            "lti_tool",
            "gradebook",
            "service",
        ],
        "MIDDLEWARE": [
            "django.middleware.security.SecurityMiddleware",
            # The site's own scripts (service/static/), served from the apps' folders without collectstatic.
            "whitenoise.middleware.WhiteNoiseMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",
            "service.boundary.RefuseNullCharacters",  # a NUL in the address or a field: 400, before any view
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.contrib.messages.middleware.MessageMiddleware",
            "django.middleware.clickjacking.XFrameOptionsMiddleware",
            # Last, as axes asks: it turns a locked sign-in's answer into AXES_LOCKOUT_CALLABLE's.
            "axes.middleware.AxesMiddleware",
        ],
        "ROOT_URLCONF": "service.urls",
        "STATIC_URL": "/static/",
        "WHITENOISE_USE_FINDERS": True,
        "WHITENOISE_AUTOREFRESH": debug,
        # axes's backend first: it refuses a locked sign-in before the password is checked.
        "AUTHENTICATION_BACKENDS": ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"],
        "AXES_HANDLER": "service.throttle.PairThenAddressHandler",
        "AXES_LOCKOUT_PARAMETERS": [["username", "ip_address"]],
        "AXES_FAILURE_LIMIT": PAIR_FAILURE_LIMIT,
        "GRADEWRIGHT_ADDRESS_FAILURE_LIMIT": ADDRESS_FAILURE_LIMIT,
        "AXES_COOLOFF_TIME": COOL_OFF,
        "AXES_RESET_ON_SUCCESS": True,  # a student's own typos are forgotten once they sign in
        # A try while locked is refused without its password being checked, so it need not count:
        # a lock ends COOL_OFF after the failure that made it, as the refusal says, however often
        # a student tries in between.
        "AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT": False,
        "AXES_CLIENT_IP_CALLABLE": "service.throttle.address_of",
        "AXES_USERNAME_CALLABLE": "service.throttle.username_of",
        "AXES_LOCKOUT_CALLABLE": "service.throttle.refused",
        # axes would keep a row for every sign-in, for ever; the throttle needs only the failures.
        "AXES_DISABLE_ACCESS_LOG": True,
        "AXES_ENABLE_ADMIN": False,
        "TEMPLATES": [
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                    ]
                },
            }
        ],
        "DATABASES": {"default": database},
        # LTI logins keep their state and nonce between the platform's two requests in the cache: in
        # the database, so that every process of the site (and any number of them) shares it.
        "CACHES": {
            "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}
        },  # fmt: skip
        "USE_TZ": True,
        "TIME_ZONE": "UTC",
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
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "GRADEWRIGHT_COURSE": str(course_root),
        "GRADEWRIGHT_STATE": str(folder),
        **(_behind_https() if os.environ.get("GRADEWRIGHT_HTTPS") == "1" else {}),
    }


def _behind_https() -> dict[str, Any]:
    """Production: the site is reached over HTTPS, through a proxy that terminates TLS and says so
    in X-Forwarded-Proto. With these, ``django-admin check --deploy`` passes."""
    return {
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
        "SECURE_SSL_REDIRECT": True,
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
