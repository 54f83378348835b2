"""Every command a how-to guide shows runs (tests/docs_examples.py says how)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_examples import DOCS, pages, run_page


@pytest.mark.slow
@pytest.mark.parametrize("page", pages("howto"), ids=lambda page: str(page.relative_to(DOCS)))
def test_every_command_on_the_page_runs(page: Path, tmp_path: Path) -> None:
    run_page(page, tmp_path)
