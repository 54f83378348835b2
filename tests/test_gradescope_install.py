"""Gradescope: the exported bundle installs and grades as Gradescope builds and runs it. The zip is
unpacked into a fresh folder bound at /autograder (bubblewrap, over an empty root that binds the
machine's own folders, so nothing is written outside the test's folder), ``setup.sh`` runs with its
apt lines skipped (the machine has what they install), then ``run_autograder`` grades a notebook and
a .py submission with the Python that ``setup.sh`` installed.

Two depths, both marked ``install`` (deselected by the default run, which is at its time limit, and run
by .ci/run as its own step): one makes the venv with ``--system-site-packages`` (seconds: ``pip`` still
builds and installs the bundled project, which is what broke, but finds its dependencies already
installed; ``-m install -k system`` for a quick check), the other a fresh venv with every dependency
from the index, as Gradescope does (minutes).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

KNOWN = ASSIGNMENTS / "attention-not-explanation" / "known"
NAME = "attention-not-explanation"


def bound_at_autograder(folder: Path, *command: str) -> list[str]:
    """``command`` run with ``folder`` at /autograder: an empty root holding the machine's own
    top-level folders (bound, not copied) and ``folder``, so /autograder need not exist here."""
    # /proc bound rather than mounted anew: a proc that bubblewrap mounts has read-only parts over it,
    # and the kernel refuses the sandbox inside a fresh proc of its own where any proc is so covered.
    args = ["bwrap", "--tmpfs", "/", "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc", "--tmpfs", "/tmp"]
    for entry in sorted(Path("/").iterdir()):
        if entry.name in {"dev", "proc", "tmp", "autograder"}:
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.is_dir():
            args += ["--bind", str(entry), str(entry)]
    return [*args, "--bind", str(folder), "/autograder", "--chdir", "/autograder", *command]


def built_as_gradescope_builds_it(tmp_path: Path, venv_options: str) -> Path:
    bundle = tmp_path / "autograder.zip"
    made = subprocess.run(
        [sys.executable, "-m", "autograder", "export", "gradescope", NAME, "--out", str(bundle)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        archive.extractall(root / "source")
        for info in archive.infolist():  # as unzip does: the modes the zip gives (zipfile drops them)
            (root / "source" / info.filename).chmod(info.external_attr >> 16 & 0o777)
    # Everything pyproject.toml names travels, the JupyterLab extension's built bundle included.
    assert {"project/gradewright/cell.py", "project/jupyterlab_gradewright/labextension/package.json"} <= names
    assert not any("node_modules" in name for name in names)
    setup = root / "source" / "setup.sh"
    lines = setup.read_text().splitlines()
    assert any(line.startswith("apt-get install") for line in lines)
    setup.write_text("\n".join(line for line in lines if not line.startswith("apt-get")) + "\n")
    # A clean environment: no PYTHONPATH or virtualenv of the test's own leaks into the bundle's.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PIP_TARGET"}}
    env["VENV_OPTIONS"] = venv_options
    built = subprocess.run(
        bound_at_autograder(root, "bash", "/autograder/source/setup.sh"),
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    where = subprocess.run(
        bound_at_autograder(
            root, "venv/bin/python", "-c", "import autograder, jupyterlab_gradewright; print(autograder.__file__)"
        ),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert where.returncode == 0 and where.stdout.startswith("/autograder/venv/"), where.stdout + where.stderr
    return root


def graded(root: Path, submission: Path, name: str) -> dict:
    """``run_autograder`` on ``submission`` handed in as ``name``, in a fresh submission folder."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission").mkdir()
    shutil.copy(submission, root / "submission" / name)
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHON", "AUTOGRADER_ROOT", "GRADEWRIGHT_ROOT"}
    }
    ran = subprocess.run(
        bound_at_autograder(root, "/autograder/source/run_autograder"),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads((root / "results" / "results.json").read_text())


def scores(results: dict) -> dict[str, float]:
    return {test["name"].split(":")[0]: test["score"] for test in results["tests"]}


def builds_and_grades(tmp_path: Path, venv_options: str) -> None:
    root = built_as_gradescope_builds_it(tmp_path, venv_options)
    notebook = graded(root, KNOWN / "correct_source_notebook.ipynb", f"{NAME}.ipynb")
    script = graded(root, KNOWN / "top_pairs_ties_reversed.py", "answer.py")
    autograded = [t for t in notebook["tests"] if t["max_score"] > 0]
    assert autograded and all(t["score"] == t["max_score"] for t in autograded), notebook
    assert 0 < script["score"] < notebook["score"], script


@pytest.mark.install
@needs_sandbox
def test_the_bundle_installs_with_its_setup_and_grades_a_notebook_and_a_script_with_system_packages(tmp_path):
    builds_and_grades(tmp_path, "--system-site-packages")


@pytest.mark.install
@needs_sandbox
@pytest.mark.timeout(2400)
def test_the_bundle_installs_in_a_fresh_venv_from_the_index(tmp_path):
    builds_and_grades(tmp_path, "")
