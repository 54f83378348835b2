"""The production settings the README documents pass Django's deploy check."""

from __future__ import annotations

import os
import subprocess
import sys

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
