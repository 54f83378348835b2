"""The install page (docs/operators/install.md) run as it is written, as root on a Debian machine: its
blocks marked "tests/test_install_page.py runs it" in order, each command as the page shows it and
checked against the lines shown under it. The machine's own system is left as it was: the commands run
in bubblewrap, with /etc a copy, and /opt, /srv, /var/backups and PostgreSQL's folders the test's own,
so ``adduser``, ``createuser`` and the written units land there. The project's install (pip, from the
index, minutes) runs first; the rest in a network of its own, where a PostgreSQL cluster of the test's
own listens as Debian's would. What ``systemctl enable --now`` would start, the test starts itself:
each unit's ExecStart as its User with its EnvironmentFile (the site, two workers), until the site is
ready with both workers; then the page's account, ``check --deploy`` and the backup unit's command.

Marked ``install`` (the CI step of install tests, .ci/run); it needs root, bubblewrap, PostgreSQL's
server programs, runuser and systemd-analyze, and skips saying which is missing, except on CI
(GRADEWRIGHT_REQUIRE_POSTGRES), where it fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .docs_examples import Step, not_shown

PAGE = ROOT / "docs/operators/install.md"
RUN_HERE = "tests/test_install_page.py runs it)"
BLOCK = re.compile(r"<!-- docs-test: skip \((?P<why>[^)]*\)) -->\s*\n```console\n(?P<body>.*?)```", re.DOTALL)
ENVIRONMENT = re.compile(r"```ini\n(?P<body>GRADEWRIGHT_DATABASE_URL=.*?)```", re.DOTALL)
# root's PATH on Debian: python3 is the system's, as on a server.
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
POSTGRES = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the install page's commands run as root"
    for program in ("bwrap", "runuser", "adduser", "pg_createcluster", "systemd-analyze", "curl"):
        if shutil.which(program, path=DEBIAN_PATH) is None:
            return f"no {program} here"
    return None if POSTGRES else "no PostgreSQL server programs (/usr/lib/postgresql/*/bin/initdb)"


MISSING = _missing()
pytestmark = [
    pytest.mark.install,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(
        MISSING is not None and not os.environ.get("GRADEWRIGHT_REQUIRE_POSTGRES"), reason=MISSING or ""
    ),
]


def page_blocks() -> list[list[Step]]:
    """The page's blocks that this test runs, in order, each as its steps."""
    from .docs_examples import steps_of

    text = PAGE.read_text(encoding="utf-8")
    return [
        steps_of(f"```console\n{block['body']}```") for block in BLOCK.finditer(text) if block["why"].endswith(RUN_HERE)
    ]


def script(steps: list[Step], printed: Path, first: int) -> str:
    """Each step in this shell (so `cd` holds), its output in a file of its own; the first that fails
    prints what it said and stops."""
    return "".join(
        f"{{ {step.command}\n}} > {printed}/{number} 2>&1 || {{ code=$?; cat {printed}/{number}; exit $code; }}\n"
        for number, step in enumerate(steps, start=first)
    )


# What `systemctl enable --now gradewright gradewright-worker@1 gradewright-worker@2` starts: each
# unit's ExecStart as its User, with its EnvironmentFile, until the site answers ready with both workers.
STARTED_AS_SYSTEMD_WOULD = r"""
units=/etc/systemd/system
# A unit's setting as systemd reads it: $$ a $, %% a %, %C the cache folder, %i the instance.
unit_line() { sed -n "s/^$2=//p" "$units/$1" | sed 's/\$\$/$/g; s/%C/\/var\/cache/g; s/%i/1/g; s/%%/%/g'; }
as_unit() {  # UNIT [KEY]: its ExecStart (or KEY), as its User, with its EnvironmentFile, Environment,
    # WorkingDirectory and CacheDirectory
    user=$(unit_line "$1" User)
    for cache in $(unit_line "$1" CacheDirectory); do install -d -o "$user" -m 0700 "/var/cache/$cache"; done
    runuser -u "$user" -- env -i PATH="$PATH" HOME="$(getent passwd "$user" | cut -d: -f6)" \
        $(unit_line "$1" Environment) bash -c "set -a; . $(unit_line "$1" EnvironmentFile); set +a; \
        cd $(unit_line "$1" WorkingDirectory); exec $(unit_line "$1" "${2:-ExecStart}")"
}
# systemd starts no unit whose ReadWritePaths is missing.
for unit in gradewright.service gradewright-worker@.service gradewright-backup.service; do
    for path in $(unit_line $unit ReadWritePaths); do
        [ -d "$path" ] || { echo "$unit: ReadWritePaths $path is missing: systemd would not start it"; exit 1; }
    done
done
as_unit gradewright.service > "$logs/site" 2>&1 &
as_unit gradewright-worker@.service > "$logs/worker1" 2>&1 &
as_unit gradewright-worker@.service > "$logs/worker2" 2>&1 &
for _ in $(seq 240); do
    curl -s -H 'Host: grading.example.edu' http://127.0.0.1:8000/readyz > "$logs/ready" 2>/dev/null || true
    grep -q '"workers_alive": 2' "$logs/ready" && break
    sleep 0.5
done
grep -q '"ready": true' "$logs/ready" || { echo "the site was not ready:"; cat "$logs"/*; exit 1; }
"""
BACKED_UP = r"""
as_unit gradewright-backup.service > "$logs/backup" 2>&1 || { cat "$logs/backup"; exit 1; }
as_unit gradewright-backup.service ExecStartPost
ls /var/backups/gradewright/course-*.tar.gz > "$logs/backups"
"""


def sandbox(tmp: Path, network: bool) -> list[str]:
    """bubblewrap over the machine's own root, with the folders the page writes to the test's own."""
    binds = ["bwrap", "--dev-bind", "/", "/", "--bind", str(tmp / "opt"), "/opt"]
    for entry in sorted(Path("/opt").iterdir()):  # the machine's own (a package index, say) seen as they are
        binds += ["--ro-bind", str(entry), str(entry)]
    binds += ["--bind", str(tmp / "etc"), "/etc", "--bind", str(tmp / "srv"), "/srv"]
    binds += ["--bind", str(tmp / "backups"), "/var/backups", "--bind", str(tmp / "cache"), "/var/cache"]
    for folder, path in (("lib", "/var/lib/postgresql"), ("log", "/var/log/postgresql"), ("run", "/run/postgresql")):
        binds += ["--bind", str(tmp / f"postgres-{folder}"), path]
    if not network:
        binds.append("--unshare-net")
    return [*binds, "--unshare-pid", "--die-with-parent", "--proc", "/proc", "bash", "-c"]


def run_in_sandbox(tmp: Path, commands: str, environment: dict[str, str], network: bool) -> None:
    """Run the script as root in the sandbox, failing with it, what it printed and the services' logs."""
    ran = subprocess.run(
        sandbox(tmp, network) + [commands], cwd=tmp, env=environment, capture_output=True, text=True, timeout=1200
    )
    said = "\n".join(
        f"--- {path.name}\n{path.read_text(errors='replace')}" for path in sorted((tmp / "logs").iterdir())
    )
    assert ran.returncode == 0, f"--- script\n{commands}--- output\n{ran.stdout}{ran.stderr}\n{said}"


def test_the_install_page_as_written(tmp_path):
    assert MISSING is None, MISSING
    blocks = page_blocks()
    install, rest = blocks[0], [step for block in blocks[1:] for step in block]
    assert "pip install" in install[1].command and [s for s in rest if "systemd --out" in s.command]
    for folder in ("opt", "srv", "backups", "cache", "postgres-lib", "postgres-log", "postgres-run", "printed", "logs"):
        (tmp_path / folder).mkdir()
    # /etc a copy, without the machine's own PostgreSQL clusters: the test's own is made inside.
    subprocess.run(["cp", "-a", "/etc", str(tmp_path / "etc")], check=True)
    for cluster in (tmp_path / "etc/postgresql").glob("*/*"):
        shutil.rmtree(cluster)
    printed, logs = tmp_path / "printed", tmp_path / "logs"
    environment = {
        "PATH": DEBIAN_PATH,
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "GRADEWRIGHT_CHECKOUT": str(ROOT),
        "COLUMNS": "120",
        "logs": str(logs),
    }
    version = POSTGRES[-1].parent.parent.name
    settings = ENVIRONMENT.search(PAGE.read_text(encoding="utf-8"))
    assert settings is not None, "the page shows no site.env"
    (tmp_path / "site.env").write_text(settings["body"], encoding="utf-8")
    first = "set -euo pipefail\n" + script(install, printed, 0)
    run_in_sandbox(tmp_path, first, environment, network=True)
    # The page's steps before the services start, the settings file written as the page shows it once
    # it is made; then the services; then the steps that need them.
    made = next(number for number, step in enumerate(rest) if "site.env" in step.command) + 1
    started = next(number for number, step in enumerate(rest) if "accounts add" in step.command)
    first_of = len(install)
    rest_script = (
        "set -euo pipefail\n"
        "install -d -o postgres -g postgres -m 2775 /run/postgresql\n"
        f"pg_createcluster {version} main --start > {logs}/cluster 2>&1 || {{ cat {logs}/cluster; exit 1; }}\n"
        + script(rest[:made], printed, first_of)
        + f"cat {tmp_path / 'site.env'} > /etc/gradewright/site.env\n"
        + script(rest[made:started], printed, first_of + made)
        + STARTED_AS_SYSTEMD_WOULD
        + script(rest[started:], printed, first_of + started)
        + BACKED_UP
    )
    run_in_sandbox(tmp_path, rest_script, environment, network=False)
    for number, step in enumerate([*install, *rest]):
        missing = not_shown(step.shown, (printed / str(number)).read_text(encoding="utf-8"))
        assert missing is None, f"`{step.command}` printed no line like {missing!r}"
    # The units, as systemd reads them, and the site's journal as the page says it begins.
    units = tmp_path / "etc/systemd/system"
    assert {"gradewright.service", "gradewright-worker@.service", "gradewright-backup.timer"} <= {
        path.name for path in units.iterdir()
    }
    assert (
        "serving /srv/course on http://127.0.0.1:8000/ with 0 grading workers, 4 requests at a time"
        in (logs / "site").read_text()
    )
    assert "waiting for hand-ins" in (logs / "worker1").read_text()
    assert "course-" in (logs / "backups").read_text()
