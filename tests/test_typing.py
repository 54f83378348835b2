"""The packages are typed: mypy (configured in pyproject.toml) finds no error. Run as a test so that
the one test command checks it too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_mypy_finds_no_error():
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"], capture_output=True, text=True, cwd=ROOT, timeout=280
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
