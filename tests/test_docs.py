"""The documentation site: it builds with warnings as errors (a broken link, a page missing from the
navigation or a generated part that fails is an error), its reference is generated from the code, and
every command it shows a reader runs (tests/test_docs_examples.py)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "hooks"))

import generated  # noqa: E402  (the site's hook, from docs/hooks/)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # Built from another folder than the checkout's: every path the configuration names is its own.
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return out


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors_and_holds_the_generated_reference(site: Path) -> None:
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("autograder grade", "autograder serve", "course exam build", "autograder gradebook restore"):
        assert f"<code>{command}</code>" in cli, command
    assert "--scheduler" in cli  # the usage the README once lacked comes from the parser itself
    assignment = (site / "reference" / "assignment-toml" / "index.html").read_text(encoding="utf-8")
    assert "charge_dependents" in assignment and "call_timeout" in assignment
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "/api/v1/submissions/{id}" in api
    from service.handin.uploads import UPLOADS_PER_HOUR

    assert f"limit of {UPLOADS_PER_HOUR} an hour" in api and f"({UPLOADS_PER_HOUR} an hour for each student" in api
    settings = (site / "reference" / "settings" / "index.html").read_text(encoding="utf-8")
    assert "the SQLite file &lt;course&gt;/.gradewright/gradebook.db" in settings  # a placeholder shown, not a tag
    assert "<course>" not in settings
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "Changelog" in changelog  # the snippet found from the configuration's folder
    hidden = (site / "reference" / "hidden-tests" / "index.html").read_text(encoding="utf-8")
    assert "tolerance" in hidden
    # A page that names a command links its reference entry.
    how = (site / "howto" / "late-policy" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../reference/cli/#autograder-lti-send-scores"' in how


def test_a_command_named_in_inline_code_links_its_reference_entry() -> None:
    text = "# `autograder grade`\n\nRun `autograder grade x --out y`, [`autograder serve`](z.md).\n```\n`course validate`\n```\n"
    linked = generated.link_commands(text, "howto/page.md")
    assert "[`autograder grade x --out y`](../reference/cli.md#autograder-grade)" in linked
    assert linked.startswith("# `autograder grade`\n")  # a heading stays as it is
    assert "[`autograder serve`](z.md)" in linked  # a link already
    assert "\n`course validate`\n" in linked  # code blocks are left alone


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The check above can fail: the same configuration refuses a page that links a missing one."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\ndocs_dir: docs\nstrict: true\n", encoding="utf-8")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode != 0
    assert "missing.md" in built.stdout + built.stderr


def test_every_page_in_the_navigation_exists_and_every_page_is_in_it() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    named = set(re.findall(r":\s+([\w/-]+\.md)\s*$", config, re.MULTILINE))
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert named - pages == set(), "in the navigation, but no page"
    assert pages - named == set(), "a page the navigation leaves out"


def test_every_command_has_help_and_is_in_the_generated_reference() -> None:
    from commands import autograder, course

    for build in (course.build_parser, autograder.build_parser):
        reference = generated.cli_reference(build().prog)
        for path, parser in generated.walk(build()):
            name = " ".join(path)
            assert f"`{name}`" in reference
            subcommand = len(path) > 1
            if subcommand:
                assert parser.description or _help_of(build(), path), f"{name} has no help text"


def _help_of(parser: argparse.ArgumentParser, path: list[str]) -> str:
    for word in path[1:]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) and word in action.choices:
                helps = {choice.dest: choice.help for choice in action._choices_actions}
                found = helps.get(word) or ""
                parser = action.choices[word]
                break
        else:
            return ""
    return found


def test_a_generated_part_that_is_not_known_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown generated part"):
        generated.on_page_markdown("<!-- generated: nonsense -->", None, None, None)
