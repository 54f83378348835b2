"""The site's layout (service/, as CONTRIBUTING.md maps it) kept as it reads: the site's frame (settings'
users: the app, the URLs, the admin, the server, set-up and the demo) above the packages, one per concern
(accounts, handin, grades, marking, exams, lessons, lti, operations), above the shared helpers (core/,
errors, settings, the template tags); no package reaching into another's private names; and the models split
among the packages with no table changed, so an existing site's database needs no migration."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from .conftest import ROOT
from .test_house_rules import imported, modules

pytestmark = pytest.mark.timeout(120)

FRAME = {"service", "service.apps", "service.urls", "service.admin", "service.server", "service.setup", "service.demo"}
FRAME |= {"service.models"}  # the registry Django reads: every package's models, imported in one place
SHARED_PACKAGES = ("core", "templatetags", "formats")
SHARED = {"service.errors", "service.settings"}
PACKAGES = ("accounts", "handin", "grades", "marking", "exams", "lessons", "lti", "operations")


def layer(name: str) -> str:
    """``frame``, ``shared``, or the package a module of service/ belongs to."""
    if name in FRAME:
        return "frame"
    if name in SHARED:
        return "shared"
    part = name.split(".")[1]
    if part in SHARED_PACKAGES:
        return "shared"
    assert part in PACKAGES, f"{name}: a module of service/ in no layer (add its package to tests/test_site_layout.py)"
    return part


def private_names(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) for each ``from module import _name`` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((node.lineno, "." * node.level + (node.module or ""), alias.name))
    return found


def breaches(root: Path = ROOT) -> list[str]:
    """Every import of service/ that points up (a package or a helper importing the frame, a helper
    importing a package other than its models) or reaches into another package's private names."""
    known = modules(root)
    site = {name: path for name, path in known.items() if name == "service" or name.startswith("service.")}
    found = []
    for name, path in sorted(site.items()):
        here = layer(name)
        for target in sorted(imported(name, path, known)):
            if not target.startswith("service.") or known[target].name == "__init__.py":
                continue  # a package's __init__ says what it is for, and holds nothing to import
            there = layer(target)
            if there == "frame" and here != "frame":
                found.append(f"{name} imports {target}: the frame is above every package")
            elif here == "shared" and there not in ("shared", "frame") and not target.endswith(".models"):
                found.append(f"{name} imports {target}: a shared helper imports no package (but its models)")
        if here in PACKAGES:
            package = f"service.{here}"
            for line, module, private in private_names(path):
                absolute = module if not module.startswith(".") else package
                if module.startswith(".") or absolute.startswith(package):
                    continue
                if absolute.startswith("service."):
                    found.append(f"{path.relative_to(root)}:{line}: {private} is {absolute}'s own")
    return found


def test_the_layout_check_finds_an_import_up_and_a_private_name(tmp_path):
    """The check can fail: a shared helper importing a package's views, a package importing the
    frame, and a package taking another's private name are each found."""
    for folder in ("service/core", "service/exams", "service/handin"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "service" / "__init__.py").write_text("")
    (tmp_path / "service" / "urls.py").write_text("")
    (tmp_path / "service" / "core" / "access.py").write_text("from service.exams import views\n")
    (tmp_path / "service" / "exams" / "views.py").write_text("from service.handin.queue import _claim\n")
    (tmp_path / "service" / "handin" / "queue.py").write_text("from service import urls\n_claim = 1\n")
    (tmp_path / "service" / "handin" / "models.py").write_text("")
    (tmp_path / "service" / "core" / "live.py").write_text("from service.handin.models import Job\n")
    assert breaches(tmp_path) == [
        "service.core.access imports service.exams.views: a shared helper imports no package (but its models)",
        "service/exams/views.py:1: _claim is service.handin.queue's own",
        "service.handin.queue imports service.urls: the frame is above every package",
    ]


def test_imports_in_the_site_point_down_and_no_package_takes_anothers_private_names():
    found = breaches()
    assert not found, "\n".join(found)


def test_each_package_of_the_site_says_first_what_it_is_for():
    for package in (*PACKAGES, "core"):
        text = (ROOT / "service" / package / "__init__.py").read_text(encoding="utf-8")
        said = ast.get_docstring(ast.parse(text))
        assert said and len(said.split()) >= 8, f"service/{package}/__init__.py: say what the package is for"


@pytest.mark.parametrize("app", ["service", "gradebook"])
def test_the_models_as_split_need_no_migration(app):
    """Models moved between modules keep their app and their tables: Django sees no change."""
    out = io.StringIO()
    call_command("makemigrations", app, "--check", "--dry-run", stdout=out, stderr=out)
    assert "No changes detected" in out.getvalue()
