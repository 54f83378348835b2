"""The JupyterLab extension's own checks, run through jlpm as JupyterLab's extension template runs them:
its lint (eslint, prettier and stylelint with the template's configuration) and its UI test (Galata,
in jupyterlab_gradewright/ui-tests/, driving Debian's chromium against a JupyterLab that loads the
extension). They need the extension's node_modules (``jlpm install``, which .ci/run does): without it
they skip, except under GRADEWRIGHT_REQUIRE_BROWSER (CI), where they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .served import CHROMIUM, free_port

EXTENSION = ROOT / "jupyterlab_gradewright"
UI_TESTS = EXTENSION / "ui-tests"


def jlpm(folder: Path, *args: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``jlpm args`` in ``folder``, which must have its node_modules; the output is the failure's message."""
    jlpm = shutil.which("jlpm")
    if jlpm is None or not (folder / "node_modules").is_dir():
        missing = f"jlpm (JupyterLab) or {folder / 'node_modules'} (`jlpm install` there, as .ci/run does)"
        if os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"):
            pytest.fail(f"{missing} is missing")
        pytest.skip(f"{missing} is missing")
    environment = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "JUPYTER_CONFIG_DIR"}}
    environment.update(env or {})
    done = subprocess.run([jlpm, *args], cwd=folder, capture_output=True, text=True, timeout=timeout, env=environment)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.mark.slow
def test_the_extension_passes_the_templates_lint():
    jlpm(EXTENSION, "lint:check", timeout=300)


# A JupyterLab started and a notebook opened: 15 to 30 seconds.
@pytest.mark.slow
def test_a_students_notebook_shows_gradewrights_buttons_and_not_nbgraders():
    if CHROMIUM is None:
        if os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"):
            pytest.fail("Debian's chromium is missing")
        pytest.skip("Debian's chromium is missing")
    # A port of its own, never a server already there (CI=1: Playwright starts its own, and fails
    # where the port is taken), and the server side imported from this checkout.
    env = {"CI": "1", "GRADEWRIGHT_UI_PORT": str(free_port()), "CHROMIUM": CHROMIUM, "PYTHONPATH": str(ROOT)}
    jlpm(UI_TESTS, "playwright", "test", timeout=300, env=env)
