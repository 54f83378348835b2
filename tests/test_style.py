"""The house style, checked by the one test command: ruff's lint rules (pyproject.toml) find
nothing, and the code is as ruff's formatter writes it (no hand-kept layout)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("check", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_finds_nothing(check):
    completed = subprocess.run(
        [sys.executable, "-m", "ruff", *check], capture_output=True, text=True, cwd=ROOT, timeout=100
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_no_layout_is_kept_by_hand():
    """The formatter decides every line: no ``fmt: skip`` / ``fmt: off`` left in the code."""
    kept = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in (
            "autograder",
            "course",
            "gradebook",
            "service",
            "commands",
            "untrusted",
            "gradewright",
            "jupyterlab_gradewright",
            "tests",
            "benchmarks",
            "docs",
            "assignments",
        )
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "node_modules" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if "# fmt: " + "skip" in line or "# fmt: " + "off" in line
    ]
    assert not kept, kept
