"""The operator's commands (issue #37, part A), each through the real command: Django's management
commands with the site's settings and our own system checks, a port in use said in one line (its
holder named when it is the course's own earlier site), a site started by a hub with no demo
accounts, the course's own gradebook by default, and every environment variable in one list."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys

import pytest

from .conftest import ROOT
from .served import autograder, commands_env, course_copy

HUB = {
    "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api",
    "JUPYTERHUB_API_TOKEN": "x",
    "JUPYTERHUB_CLIENT_ID": "service-g",
}
# Holds a port, and reads as `autograder serve` in its command line: a site left running by a dead hub.
ORPHAN = "import socket, sys, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\nprint(s.getsockname()[1], flush=True); time.sleep(300)"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_hubs_site_has_no_demo_accounts_and_a_port_in_use_is_one_line_naming_its_own_orphan(tmp_path):
    course = course_copy(tmp_path)
    env = commands_env(tmp_path)
    orphan = subprocess.Popen([sys.executable, "-c", ORPHAN, "autograder", "serve"], stdout=subprocess.PIPE, text=True)
    try:
        port = orphan.stdout.readline().strip()
        (course / ".gradewright").mkdir(mode=0o700)
        (course / ".gradewright" / "serve.pid").write_text(f"{orphan.pid} 127.0.0.1 {port}\n")
        started = autograder("--course", course, "serve", "--port", port, "--workers", "0", env={**env, **HUB})
    finally:
        orphan.kill()
        orphan.wait()
    assert started.returncode == 2
    assert "started by JupyterHub: no demo accounts" in started.stdout
    assert not [line for line in started.stdout.splitlines() if line.startswith("demo ")]
    assert started.stderr.splitlines() == [
        f"autograder: port {port} is held by this course's own earlier site (process {orphan.pid}), still running "
        f"after what started it stopped; stop it with `kill {orphan.pid}` and start again"
    ], started.stderr
    with sqlite3.connect(course / ".gradewright" / "gradebook.db") as database:
        assert database.execute("SELECT count(*) FROM auth_user").fetchone()[0] == 0
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = str(held.getsockname()[1])
        started = autograder("--course", course, "serve", "--port", taken, "--workers", "0", env=env)
    assert started.returncode == 2 and started.stderr.splitlines() == [
        f"autograder: port {taken} on 127.0.0.1 is in use by another program; stop it, or serve on another port "
        "with --port"
    ]
    # The site's database, as it is, through Django's commands and our checks.
    shown = autograder("--course", course, "manage", "showmigrations", "service", env=env)
    assert shown.returncode == 0 and "[X] 0018_worker_seen" in shown.stdout, shown.stderr
    key = course / ".gradewright" / "secret_key"
    key.chmod(0o644)
    checked = autograder("--course", course, "manage", "check", "--deploy", env={**env, "GRADEWRIGHT_HTTPS": "1"})
    assert checked.returncode == 1, checked.stderr
    for found in ("gradewright.W001", "GRADEWRIGHT_ALLOWED_HOSTS", "gradewright.E002", f"chmod 600 {key}"):
        assert found in checked.stderr
    assert "gradewright.W003" in checked.stderr  # no worker: the site above served none
    # Django's deployment habit: no STATIC_ROOT to stop on, one line saying no step is needed.
    collected = autograder("--course", course, "manage", "collectstatic", "--noinput", env=env)
    assert (collected.returncode, collected.stderr) == (0, "")
    assert collected.stdout.startswith("collectstatic: nothing to collect: the site serves its static files")


@pytest.mark.timeout(120)
def test_roster_import_in_a_course_folder_writes_the_courses_gradebook(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    env = commands_env(tmp_path)
    imported = autograder("roster", "import", ROOT / "docs" / "walkthrough" / "roster.csv", env=env, cwd=course)
    assert imported.returncode == 0, imported.stderr
    assert not (course / "gradebook.db").exists()
    gradebook = course / ".gradewright" / "gradebook.db"
    assert gradebook.is_file() and (gradebook.parent.stat().st_mode & 0o777) == 0o700
    with sqlite3.connect(gradebook) as database:
        assert database.execute("SELECT count(*) FROM gradebook_student").fetchone()[0] > 0


def test_the_log_is_json_on_request_with_the_jobs_fields():
    from service.core.logs import ExpectedWithoutTraceback, json_formatter

    record = logging.LogRecord("gradewright.jobs", logging.INFO, __file__, 1, "job %s graded", (7,), None)
    record.__dict__.update(job_id=7, student="s1", duration_seconds=1.5, request=object())
    line = json.loads(json_formatter().format(record))
    assert line["message"] == "job 7 graded" and line["logger"] == "gradewright.jobs" and line["level"] == "INFO"
    assert (line["job_id"], line["student"], line["duration_seconds"]) == (7, "s1", 1.5) and "request" not in line
    try:
        raise PermissionError("refused")
    except PermissionError:
        import sys

        refusal = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden", (), sys.exc_info())
    refusal.status_code = 403
    assert ExpectedWithoutTraceback().filter(refusal) and refusal.exc_info is None


def test_every_variable_read_is_listed_and_an_old_name_still_works_with_a_warning(caplog):
    from autograder import environment

    assert environment.read("GRADEWRIGHT_GRADEBOOK_WAIT", {}) == "30"
    assert (
        environment.read("GRADEWRIGHT_DATABASE_URL", {"GRADEWRIGHT_DATABASE_URL": "postgresql://a/b"})
        == "postgresql://a/b"
    )
    environment._warned.discard("AUTOGRADER_ZYGOTE")
    with caplog.at_level(logging.WARNING, "gradewright.settings"):
        assert environment.read("GRADEWRIGHT_ZYGOTE", {"AUTOGRADER_ZYGOTE": "off"}) == "off"
        assert environment.read("GRADEWRIGHT_ZYGOTE", {"AUTOGRADER_ZYGOTE": "off"}) == "off"
    assert [r.getMessage() for r in caplog.records] == [
        "$AUTOGRADER_ZYGOTE is read as $GRADEWRIGHT_ZYGOTE; rename it (the old name will stop working)"
    ]
    names = {setting.name for setting in environment.SETTINGS}
    assert all(
        name.startswith("GRADEWRIGHT_") for name in names if not name.startswith(("JUPYTERHUB_", "JPY_", "DASK_"))
    )
    assert all(setting.description and setting.used_by for setting in environment.SETTINGS)
    # Every GRADEWRIGHT_ name the code mentions is one of them (the settings Django keeps aside).
    mentioned = set()
    for package in ("autograder", "course", "gradebook", "service", "commands", "gradewright", "untrusted"):
        for path in (ROOT / package).rglob("*.py"):
            mentioned |= set(re.findall(r"\bGRADEWRIGHT_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    django_settings = {
        "GRADEWRIGHT_COURSE",
        "GRADEWRIGHT_STATE",
        "GRADEWRIGHT_DEMO",
        "GRADEWRIGHT_HUB",
        "GRADEWRIGHT_ADDRESS_FAILURE_LIMIT",
    }
    assert mentioned - django_settings - {"GRADEWRIGHT_TEST_POSTGRES"} <= names, sorted(
        mentioned - django_settings - names
    )
    assert os.environ.get("GRADEWRIGHT_REFERENCE_CACHE")  # the tests' own, read through environment.read


def test_a_new_password_or_unlock_ends_a_lock_and_an_unknown_account_is_said():
    from axes.models import AccessAttempt
    from django.contrib.auth.models import User

    from service.accounts.members import set_password, unlock
    from service.errors import ServiceError

    name = f"locked{os.getpid()}"
    User.objects.create_user(name, password="a long password 123")
    for address in ("10.0.0.1", "10.0.0.2"):
        AccessAttempt.objects.create(
            username=name,
            ip_address=address,
            user_agent="",
            http_accept="",
            path_info="/",
            get_data="",
            post_data="",
            failures_since_start=10,
        )
    set_password(name, "another long password 456")
    assert not AccessAttempt.objects.filter(username=name).exists()
    with pytest.raises(ServiceError, match="^no account named 'nobody"):
        unlock("nobody")
    with pytest.raises(ServiceError, match="^name an account to unlock"):
        unlock()


def test_a_course_folder_the_workers_cannot_read_is_a_check_error(tmp_path):
    from django.test import override_settings

    from service.operations.checks import course_folders_unreadable

    assert course_folders_unreadable() == []  # the tests' own course, readable
    with override_settings(GRADEWRIGHT_COURSE=str(tmp_path / "moved"), GRADEWRIGHT_STATE=str(tmp_path / "gone")):
        found = course_folders_unreadable()
    assert [(message.id, message.msg.split(":")[0]) for message in found] == [
        ("gradewright.E004", str(tmp_path / "moved")),
        ("gradewright.E004", str(tmp_path / "gone")),
    ]
