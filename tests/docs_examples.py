"""Running the commands a documentation page shows (tests/test_docs_examples*.py).

A page's commands are the lines starting with ``$ `` in its ```console blocks (a line ending with a
backslash goes on in the next). They run in order, page by page, in a fresh temporary folder, as one
bash script that stops at the first command that fails, with the checkout at ``$GRADEWRIGHT_CHECKOUT``
so a page can copy the shipped course. A block that cannot run here (a server that keeps running, a hub,
a course platform) is preceded by ``<!-- docs-test: skip (why) -->``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(?P<skip><!-- docs-test: skip[^>]*-->\s*\n)?```console\n(?P<body>.*?)```", re.DOTALL)


def commands_of(text: str) -> list[str]:
    """The commands of a page's console blocks that are not marked skip, in order."""
    commands: list[str] = []
    for block in BLOCK.finditer(text):
        if block["skip"]:
            continue
        going_on = False
        for line in block["body"].splitlines():
            if line.startswith("$ "):
                commands.append(line[2:])
            elif going_on:
                commands[-1] += "\n" + line
            else:
                continue
            going_on = line.endswith("\\")
    return commands


def pages(*folders: str) -> list[Path]:
    """The pages of these folders of docs/ that show a command to run."""
    found = [page for folder in folders for page in sorted((DOCS / folder).glob("*.md"))]
    return [page for page in found if commands_of(page.read_text(encoding="utf-8"))]


def run_page(page: Path, folder: Path) -> None:
    """Run the page's commands in ``folder``, failing with the script and its output."""
    script = "set -euo pipefail\n" + "\n".join(commands_of(page.read_text(encoding="utf-8"))) + "\n"
    environment = {
        **os.environ,
        "GRADEWRIGHT_CHECKOUT": str(ROOT),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "COLUMNS": "120",
    }
    ran = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=400,
        stdin=subprocess.DEVNULL,
    )
    assert ran.returncode == 0, (
        f"{page.name}: a command failed\n--- script\n{script}--- output\n{ran.stdout}{ran.stderr}"
    )
    shutil.rmtree(folder, ignore_errors=True)
