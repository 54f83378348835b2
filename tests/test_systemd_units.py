"""The systemd units `autograder systemd` writes (service/operations/systemd/, service/operations/units.py): systemd's own
`systemd-analyze verify` reads each without a complaint, each restarts what stops within limits, runs
as the course's account with its settings, and is hardened; a path the units could not hold is one
line. docs/operators/install.md uses them (tests/test_install_page.py runs that page)."""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.errors import ServiceError
from service.operations.units import UNITS, Install, write_units

ANALYZE = shutil.which("systemd-analyze")
pytestmark = pytest.mark.skipif(
    ANALYZE is None and not os.environ.get("GRADEWRIGHT_REQUIRE_SYSTEMD"),
    reason="no systemd-analyze here (apt-get install systemd); .ci/run installs it",
)


def settings(path: Path) -> dict[str, list[str]]:
    """A unit's settings: each key's values, in order."""
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def test_the_units_verify_and_are_supervised_and_hardened(tmp_path):
    assert ANALYZE is not None, "systemd-analyze is missing: apt-get install systemd"
    course = tmp_path / "course"
    subprocess.run([sys.executable, "-m", "course", "init", str(course)], check=True, capture_output=True, timeout=120)
    user = getpass.getuser()  # an account that exists here (the units name gradewright by default)
    made = subprocess.run(
        [sys.executable, "-m", "autograder", "--course", str(course), "systemd", "--out", str(tmp_path / "units")]
        + ["--user", user],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    # systemd starts no unit whose ReadWritePaths is missing: the state folder is there, the account's.
    assert (course / ".gradewright").stat().st_mode & 0o777 == 0o700
    assert (course / ".gradewright").owner() == user
    units = tmp_path / "units"
    assert made.stdout.splitlines() == [str(units / name) for name in UNITS]
    # The template unit is verified as systemd starts it: as an instance.
    (units / "gradewright-worker@1.service").symlink_to("gradewright-worker@.service")
    for name in (
        "gradewright.service",
        "gradewright-worker@1.service",
        "gradewright-backup.service",
        "gradewright-backup.timer",
    ):
        verified = subprocess.run([ANALYZE, "verify", str(units / name)], capture_output=True, text=True, timeout=60)
        assert (verified.returncode, verified.stdout + verified.stderr) == (0, ""), name
    site, worker, backup = (settings(units / name) for name in UNITS[:3])
    program = str(Path(sys.executable).parent / "autograder")
    assert site["ExecStart"] == [f"{program} --course {course} serve --host 127.0.0.1 --port 8000 --workers 0"]
    assert worker["ExecStart"] == [f"{program} --course {course} worker"]
    for unit in (site, worker):
        assert unit["Restart"] == ["always"] and unit["StartLimitBurst"] == ["10"]
        assert unit["User"] == [user] and unit["EnvironmentFile"] == ["/etc/gradewright/site.env"]
    for unit in (site, worker, backup):
        assert unit["ProtectSystem"] == ["strict"] and unit["PrivateTmp"] == ["yes"]
        assert unit["NoNewPrivileges"] == ["yes"] and unit["ReadWritePaths"][0].startswith(f"{course}/.gradewright")
    # The site runs no student's code: it may make no namespace; the workers' sandbox must.
    assert site["RestrictNamespaces"] == ["yes"] and site["CapabilityBoundingSet"] == [""]
    assert "RestrictNamespaces" not in worker and "ProtectKernelTunables" not in worker
    assert "Persistent=true" in (units / "gradewright-backup.timer").read_text()


@pytest.mark.parametrize("field, value", [("course", Path("course")), ("backups", Path("/var/backups/my backups"))])
def test_a_path_the_units_cannot_hold_is_one_line(tmp_path, field, value):
    install = Install(**{"course": Path("/srv/course"), field: value})
    with pytest.raises(ServiceError, match="the units need an absolute path without spaces"):
        write_units(tmp_path, install, autograder=Path("/opt/gradewright/bin/autograder"))
    assert list(tmp_path.iterdir()) == []  # nothing half written
