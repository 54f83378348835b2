"""Running the commands a documentation page shows (tests/test_docs_examples*.py).

A page's commands are the lines starting with ``$ `` in its ```console blocks (a line ending with a
backslash goes on in the next). They run in order, page by page, in a fresh temporary folder, as one
bash script that stops at the first command that fails, with the checkout at ``$GRADEWRIGHT_CHECKOUT``
so a page can copy the shipped course. A block that cannot run here (a server that keeps running, a hub,
a course platform) is preceded by ``<!-- docs-test: skip (why) -->``.

What a page shows under a command is checked against what the command printed, and what it says a
file reads after its commands too: a ```text block preceded by
``<!-- docs-test: the file PATH reads -->`` (PATH from the folder the page began in) must be found
in PATH line by line, in order (other lines may come between; blank lines are not compared; ``...``
stands for any text within a line).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SHOWN_FILE = re.compile(r"<!-- docs-test: the file (?P<path>\S+) reads -->\s*\n```text\n(?P<body>.*?)```", re.DOTALL)
BLOCK = re.compile(r"(?P<skip><!-- docs-test: skip[^>]*-->\s*\n)?```console\n(?P<body>.*?)```", re.DOTALL)


@dataclass
class Step:
    """One command of a page, and the output the page shows under it (maybe none)."""

    command: str
    shown: str = ""


def steps_of(text: str) -> list[Step]:
    """The commands of a page's console blocks that are not marked skip, in order, each with the
    lines shown under it."""
    steps: list[Step] = []
    for block in BLOCK.finditer(text):
        if block["skip"]:
            continue
        going_on = False
        for line in block["body"].splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:]))
                going_on = line.endswith("\\")
            elif going_on:
                steps[-1].command += "\n" + line
                going_on = line.endswith("\\")
            elif steps:
                steps[-1].shown += line + "\n"
    return steps


def commands_of(text: str) -> list[str]:
    """The commands of a page's console blocks that are not marked skip, in order."""
    return [step.command for step in steps_of(text)]


def pages(*folders: str) -> list[Path]:
    """The pages of these folders of docs/ that show a command to run."""
    found = [page for folder in folders for page in sorted((DOCS / folder).glob("*.md"))]
    return [page for page in found if commands_of(page.read_text(encoding="utf-8"))]


def run_page(page: Path, folder: Path) -> None:
    """Run the page's commands in ``folder``, failing with the script and its output, or with the
    first line the page shows that its command did not print."""
    text = page.read_text(encoding="utf-8")
    steps = steps_of(text)
    printed = Path(tempfile.mkdtemp(prefix="docs-printed-"))
    # Each command's output goes to a file of its own (its group runs in this shell, so `cd` holds);
    # the first that fails prints what it said and stops the script.
    script = "set -euo pipefail\n" + "".join(
        f"{{ {step.command}\n}} > {printed / str(number)} 2>&1 || {{ code=$?; cat {printed / str(number)}; exit $code; }}\n"
        for number, step in enumerate(steps)
    )
    environment = {
        **os.environ,
        "GRADEWRIGHT_CHECKOUT": str(ROOT),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "COLUMNS": "120",
    }
    try:
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
        for number, step in enumerate(steps):
            said = (printed / str(number)).read_text(encoding="utf-8")
            missing = not_shown(step.shown, said)
            assert missing is None, (
                f"{page.name}: `{step.command}` printed no line like {missing!r}; it printed:\n{said}"
            )
        for shown in SHOWN_FILE.finditer(text):
            actual = (folder / shown["path"]).read_text(encoding="utf-8")
            missing = not_shown(shown["body"], actual)
            assert missing is None, f"{page.name}: {shown['path']} has no line like {missing!r}; it reads:\n{actual}"
    finally:
        shutil.rmtree(printed, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)


def not_shown(shown: str, actual: str) -> str | None:
    """The first non-blank line of ``shown`` not found in ``actual`` after the lines before it
    (``...`` matching any text within a line), or None when every one is."""
    lines = iter(line.rstrip() for line in actual.splitlines())
    for wanted in (line.rstrip() for line in shown.splitlines() if line.strip()):
        pattern = re.compile(".*".join(re.escape(part) for part in wanted.split("...")))
        if not any(pattern.fullmatch(line) for line in lines):
            return wanted
    return None
