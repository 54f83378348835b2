"""Every environment variable Gradewright reads, in one place: its name, its default, what it does and
who reads it (``SETTINGS``, from which the operators' reference table is generated), and ``read()``,
the one function that reads them.

Our own variables are named ``GRADEWRIGHT_...``. Five were named ``AUTOGRADER_...`` before; the old
name is still read, with a warning on the log (once per process), when the new one is not set. The
others here are set by the platforms the site runs on (JupyterHub, Dask, Jupyter) and keep their
names. This module imports nothing of the project's, so that anything may import it."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

PREFIX = "GRADEWRIGHT_"
logger = logging.getLogger("gradewright.settings")


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``default`` as it would be written ("" when unset means off or
    none), ``used_by`` the part of Gradewright that reads it, ``old_name`` its name before, still read."""

    name: str
    default: str
    description: str
    used_by: str
    old_name: str = ""


SITE = "the site (autograder serve)"
WORKER = "the grading workers (autograder worker, and serve's own)"
COMMANDS = "every command that opens the gradebook, the site and its workers"
GRADING = "grading (autograder grade, check, verify, the workers)"
HUB = "the site, started as a JupyterHub service (set by the hub)"
STUDENT = "the student's side (from gradewright import submit; the JupyterLab extension)"

SETTINGS: tuple[Setting, ...] = (
    # The gradebook and the grader.
    Setting(
        "GRADEWRIGHT_DATABASE_URL",
        "",
        "The gradebook's database, e.g. postgresql://user@host/db; unset: the SQLite file "
        "<course>/.gradewright/gradebook.db (the --database-url option wins over it).",
        COMMANDS,
        "AUTOGRADER_DATABASE_URL",
    ),
    Setting(
        "GRADEWRIGHT_GRADEBOOK_WAIT",
        "30",
        "Seconds a writer of an SQLite gradebook waits for another's transaction before it gives up.",
        COMMANDS,
        "AUTOGRADER_GRADEBOOK_WAIT",
    ),
    Setting(
        "GRADEWRIGHT_SECRET",
        "",
        "The grader's secret (what the hidden tests' random inputs are drawn from); unset: the course's "
        ".grader-secret file, made on first use.",
        GRADING,
        "AUTOGRADER_SECRET",
    ),
    Setting(
        "GRADEWRIGHT_ZYGOTE",
        "on",
        "off: a sandbox started afresh for each submission, instead of forked from a warm zygote.",
        GRADING,
        "AUTOGRADER_ZYGOTE",
    ),
    Setting(
        "GRADEWRIGHT_REFERENCE_CACHE",
        "",
        "The folder of reference values remembered between runs; unset: ~/.cache/gradewright/reference-values.",
        GRADING,
    ),
    Setting(
        "DASK_SCHEDULER_ADDRESS",
        "",
        "Dask's own variable: the cluster that grade and the workers send the sandboxes to (--scheduler wins).",
        GRADING,
    ),
    # The site.
    Setting(
        "GRADEWRIGHT_SECRET_KEY",
        "",
        "Django's secret key; unset: <course>/.gradewright/secret_key, made on first start (owner-only).",
        SITE,
    ),
    Setting(
        "GRADEWRIGHT_ALLOWED_HOSTS",
        "*",
        "The host names the site answers to, comma-separated (Django's ALLOWED_HOSTS); name yours in "
        "production (a check warns about * with GRADEWRIGHT_HTTPS=1).",
        SITE,
    ),
    Setting(
        "GRADEWRIGHT_HTTPS",
        "",
        "1: the site is reached over HTTPS through a proxy that says so in X-Forwarded-Proto (secure "
        "cookies, HSTS, redirects to https).",
        SITE,
    ),
    Setting(
        "GRADEWRIGHT_TRUSTED_PROXY",
        "",
        "The address of the proxy in front of the site: from it alone X-Forwarded-For and "
        "X-Forwarded-Proto are believed.",
        SITE,
    ),
    Setting(
        "GRADEWRIGHT_WORKER_POLL",
        "2",
        "Seconds between an idle worker's slow looks at the queue (above 0, at most 86400).",
        WORKER,
    ),
    Setting(
        "GRADEWRIGHT_LOG_FORMAT",
        "plain",
        "plain: one line per event; json: one JSON object per line (for a log collector).",
        "the site, its workers and the service's commands",
    ),
    Setting(
        "GRADEWRIGHT_LOG_FILE",
        "",
        "A file the log is appended to; unset: standard error.",
        "the site, its workers and the service's commands",
    ),
    Setting(
        "GRADEWRIGHT_LOG_LEVEL",
        "INFO",
        "The least level logged: DEBUG, INFO, WARNING or ERROR.",
        "the site, its workers and the service's commands",
    ),
    Setting(
        "GRADEWRIGHT_METRICS",
        "off",
        "Who may read /metrics (Prometheus): off (nobody), staff (a signed-in instructor, or the "
        "token), open (anyone who reaches the site).",
        SITE,
    ),
    Setting(
        "GRADEWRIGHT_METRICS_TOKEN",
        "",
        "A bearer token a Prometheus scraper sends (Authorization: Bearer TOKEN) to read /metrics when "
        "GRADEWRIGHT_METRICS is staff.",
        SITE,
    ),
    # JupyterHub (service/accounts/hub.py).
    Setting(
        "GRADEWRIGHT_HUB_USERNAME_CLAIM",
        "name",
        "The field of the hub's user model matched to the roster's student_id.",
        HUB,
    ),
    Setting(
        "GRADEWRIGHT_HUB_INSTRUCTOR_GROUPS",
        "instructors",
        "Hub groups, comma-separated, whose members are the course's instructors.",
        HUB,
    ),
    Setting(
        "GRADEWRIGHT_HUB_TA_GROUPS",
        "teaching-assistants",
        "Hub groups, comma-separated, whose members are teaching assistants; anyone else is a student.",
        HUB,
    ),
    Setting(
        "GRADEWRIGHT_HUB_ACCESS_SCOPE",
        "",
        "The scope a hub token must have; unset: access:services!service=$JUPYTERHUB_SERVICE_NAME.",
        HUB,
    ),
    Setting("GRADEWRIGHT_HUB_TIMEOUT", "5", "Seconds to wait for the hub's API.", HUB),
    Setting("GRADEWRIGHT_HUB_CACHE_SECONDS", "5", "Seconds a hub token's check is remembered (at most 30).", HUB),
    Setting("JUPYTERHUB_API_URL", "", "The hub's API, e.g. http://127.0.0.1:8081/hub/api.", HUB),
    Setting("JUPYTERHUB_API_TOKEN", "", "The service's token (its OAuth client secret); a user's server's token.", HUB),
    Setting("JUPYTERHUB_CLIENT_ID", "", "The service's OAuth client id, service-<name>.", HUB),
    Setting("JUPYTERHUB_SERVICE_NAME", "", "The service's name in the hub's configuration.", HUB),
    Setting(
        "JUPYTERHUB_OAUTH_CALLBACK_URL", "", "Where the hub sends the browser back; unset: <prefix>oauth_callback.", HUB
    ),
    Setting("JUPYTERHUB_SERVICE_PREFIX", "/", "The site's addresses under the hub's proxy, /services/<name>/.", HUB),
    Setting("JUPYTERHUB_BASE_URL", "/", "The hub's base address.", HUB),
    Setting("JUPYTERHUB_HOST", "", "The hub's host, when it is not the site's.", HUB),
    Setting(
        "GRADEWRIGHT_ROOT",
        "/autograder",
        "Where a Gradescope bundle's run_autograder finds its files (set it to try the bundle outside Gradescope).",
        "the Gradescope bundle's run_autograder script",
        "AUTOGRADER_ROOT",
    ),
    # The student's side.
    Setting("GRADEWRIGHT_URL", "", "The service a notebook hands in to (else the last autograder login's).", STUDENT),
    Setting("JUPYTERHUB_USER", "", "The hub's user of this server (set by the hub).", STUDENT),
    Setting("JPY_SESSION_NAME", "", "The notebook this kernel runs (set by Jupyter's server).", STUDENT),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}
_warned: set[str] = set()


def read(name: str, environment: Mapping[str, str] | None = None) -> str:
    """The variable's value: set and not empty, else its old name's (with a warning), else its
    default. ``name`` must be one of ``SETTINGS`` (a KeyError otherwise: every variable is listed)."""
    setting = BY_NAME[name]
    environment = os.environ if environment is None else environment
    value = environment.get(name, "")
    if value:
        return value
    if setting.old_name and environment.get(setting.old_name):
        if setting.old_name not in _warned:
            _warned.add(setting.old_name)
            logger.warning("$%s is read as $%s; rename it (the old name will stop working)", setting.old_name, name)
        return environment[setting.old_name]
    return setting.default


def is_set(name: str, environment: Mapping[str, str] | None = None) -> bool:
    return read(name, environment) != ""


def without(environment: MutableMapping[str, str], name: str) -> MutableMapping[str, str]:
    """``environment`` with the variable unset, under its name and its old name (a child's environment)."""
    environment.pop(name, None)
    if BY_NAME[name].old_name:
        environment.pop(BY_NAME[name].old_name, None)
    return environment
