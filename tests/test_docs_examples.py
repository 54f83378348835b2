"""Every command a tutorial or an operator's guide shows runs (the how-to guides': the file beside
this one, so that two test processes share them). How a page's commands are found and run:
tests/docs_examples.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_examples import DOCS, commands_of, not_shown, pages, run_page, steps_of


def test_the_reader_of_this_harness_is_told_apart_from_output() -> None:
    text = (
        "```console\n$ course init demo\nwrote demo/course.toml\n$ autograder grade x \\\n    --out y\n```\n"
        "<!-- docs-test: skip (a server) -->\n```console\n$ autograder serve\n```\n"
    )
    assert commands_of(text) == ["course init demo", "autograder grade x \\\n    --out y"]
    first, second = steps_of(text)
    assert (first.shown, second.shown) == ("wrote demo/course.toml\n", "")


def test_a_shown_file_is_compared_line_by_line_in_order() -> None:
    actual = "[x] mean: 0 / 1 (failed)\n    It divides by n - 1.\n    - Wrong values in the mean of 7 values\n"
    assert not_shown("[x] mean: 0 / 1 (failed)\n\n    - Wrong values in the mean of ...\n", actual) is None
    assert not_shown("    It divides by n.\n", actual) == "    It divides by n."  # a changed sentence
    assert not_shown("    It divides by n - 1.\n[x] mean: ...\n", actual) == "[x] mean: ..."  # out of order


@pytest.mark.slow
@pytest.mark.parametrize("page", pages("tutorials", "operators"), ids=lambda page: str(page.relative_to(DOCS)))
def test_every_command_on_the_page_runs(page: Path, tmp_path: Path) -> None:
    run_page(page, tmp_path)
