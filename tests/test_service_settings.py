"""The production settings the README documents pass Django's deploy check."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


def test_the_documented_production_settings_pass_djangos_deploy_check(tmp_path):
    probe = (
        "import sys\nfrom pathlib import Path\nfrom service.settings import configure\n"
        f"configure(Path({str(ROOT)!r}), state=Path({str(tmp_path)!r}))\n"
        "from django.core.management import call_command\n"
        "call_command('check', deploy=True, fail_level='WARNING')\n"
    )
    env = {**os.environ, "GRADEWRIGHT_HTTPS": "1", "GRADEWRIGHT_ALLOWED_HOSTS": "grading.example.edu"}
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "System check identified no issues" in completed.stdout
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"


@pytest.mark.timeout(60)
def test_two_sites_starting_together_share_one_secret_key(tmp_path):
    """Sites started at the same moment on a new course (the scaling page's layout) each make the key
    when it is not there: every one of them must read the one that won, never an empty or half-written
    file (a site with another key would refuse every other site's sign-ins)."""
    probe = (
        "import sys, time\nfrom pathlib import Path\nfrom service.settings import secret_key\n"
        "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
        f"print(secret_key(Path({str(tmp_path)!r})))\n"
    )
    at = str(time.time() + 3)  # every process started and its imports done before then
    racers = [
        subprocess.Popen([sys.executable, "-c", probe, at], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outputs = [racer.communicate(timeout=50) for racer in racers]
    assert all(racer.returncode == 0 for racer in racers), [err for _, err in outputs]
    keys = {out.strip() for out, _ in outputs}
    assert keys == {(tmp_path / "secret_key").read_text().strip()} and len(keys.pop()) > 40
    assert [path.name for path in tmp_path.iterdir()] == ["secret_key"]  # no draft left beside it
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"
