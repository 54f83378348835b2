"""The notebook a student opens renders its math (issue #36): the released shipped notebook, opened
in a real JupyterLab in a real browser, shows its formulas as MathJax elements, not as text."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from autograder.assignment import load_assignment
from autograder.release import release

from .conftest import ASSIGNMENTS
from .served import free_port, launch_chromium, needs_browser

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300), needs_browser]
TOKEN = "math-check"


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving ``tmp_path`` on a free port, stopped afterwards."""
    port = free_port()
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_NO_CONFIG": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            f"--ServerApp.token={TOKEN}",
            f"--ServerApp.root_dir={tmp_path}",
            "--LabApp.news_url=",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("JupyterLab did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_released_notebooks_formulas_render_as_mathjax(lab, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    release(load_assignment(ASSIGNMENTS / "sequences-and-attention"), tmp_path)
    old = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Before: \\(e^{1000}\\) is infinite.")])
    nbformat.write(old, tmp_path / "before.ipynb")  # what the notebooks held: the check can fail
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page()
            page.goto(f"{lab}/lab/tree/sequences-and-attention.ipynb?token={TOKEN}")
            softmax = page.locator(".jp-MarkdownCell", has_text="Softmax: similarities into weights")
            expect(softmax).to_be_visible(timeout=120_000)
            expect(softmax.locator("mjx-container").first).to_be_attached(timeout=60_000)
            assert softmax.locator("mjx-container").count() >= 3  # the display formula and the inline ones
            assert "\\mathrm{softmax}" not in softmax.inner_text()  # no formula left as text
            page.goto(f"{lab}/lab/tree/before.ipynb?token={TOKEN}")
            before = page.locator(".jp-MarkdownCell .jp-RenderedMarkdown", has_text="Before:")
            expect(before).to_be_visible(timeout=120_000)
            assert "(e^{1000})" in before.inner_text()  # Markdown ate the backslashes: text, not math
            assert before.locator("mjx-container").count() == 0
        finally:
            browser.close()
