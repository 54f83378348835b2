"""Every command a tutorial or an operator's guide shows runs (the how-to guides': the file beside
this one, so that two test processes share them). How a page's commands are found and run:
tests/docs_examples.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_examples import DOCS, commands_of, pages, run_page


def test_the_reader_of_this_harness_is_told_apart_from_output() -> None:
    text = (
        "```console\n$ course init demo\nwrote demo/course.toml\n$ autograder grade x \\\n    --out y\n```\n"
        "<!-- docs-test: skip (a server) -->\n```console\n$ autograder serve\n```\n"
    )
    assert commands_of(text) == ["course init demo", "autograder grade x \\\n    --out y"]


@pytest.mark.slow
@pytest.mark.parametrize("page", pages("tutorials", "operators"), ids=lambda page: str(page.relative_to(DOCS)))
def test_every_command_on_the_page_runs(page: Path, tmp_path: Path) -> None:
    run_page(page, tmp_path)
