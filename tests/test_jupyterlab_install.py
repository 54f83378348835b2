"""The JupyterLab extension's install paths: the committed bundle is built from the current sources;
a wheel (``pip wheel --no-deps . -w dist``, what a hub installs) carries the extension, its server
side's configuration and nbgrader's tools left off, so that a student's JupyterLab lists Gradewright's
extension and not nbgrader's; an editable install with ``jupyter labextension develop`` links it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from jupyterlab_gradewright.built_from import RECORD, sources_digest

from .conftest import ROOT

EXTENSION = "jupyterlab-gradewright"


def test_the_committed_bundle_is_built_from_the_current_sources():
    assert RECORD.read_text(encoding="ascii").strip() == sources_digest(), (
        "jupyterlab_gradewright/labextension/ was not built from the current src/: "
        "run `jlpm install && jlpm build:prod` in jupyterlab_gradewright/ and commit the bundle"
    )


def run(*command: str | Path, cwd: Path = ROOT, env: dict | None = None) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "JUPYTER_CONFIG_DIR"}}
    done = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**environment, **(env or {})},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def made_venv(folder: Path) -> Path:
    """A venv over the machine's packages (JupyterLab, the dependencies): what is tested is where
    the install puts the extension, not the index."""
    venv.create(folder, system_site_packages=True, with_pip=False, symlinks=True)
    return folder / "bin"


@pytest.mark.slow
def test_a_wheel_for_a_hub_carries_the_extension_and_leaves_nbgraders_tools_off(tmp_path):
    from jupyterlab_server.config import get_page_config

    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", ".", "-w", tmp_path / "dist")
    (wheel,) = (tmp_path / "dist").glob("gradewright-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = f"{wheel.name.split('-py3')[0]}.data/data"
    assert f"{data}/share/jupyter/labextensions/{EXTENSION}/package.json" in names
    assert any(name.startswith(f"{data}/share/jupyter/labextensions/{EXTENSION}/static/remoteEntry.") for name in names)
    assert f"{data}/etc/jupyter/jupyter_server_config.d/nbgrader_off_for_students.json" in names
    bin_ = made_venv(tmp_path / "venv")
    run(sys.executable, "-m", "pip", "--python", bin_ / "python", "install", "--no-deps", "-q", wheel)
    prefix = tmp_path / "venv"
    # nbgrader in the same environment, as a student's image installs it with the project.
    nbgrader_config = Path(sys.base_prefix) / "etc/jupyter/jupyter_server_config.d/nbgrader.json"
    if nbgrader_config.is_file():
        (prefix / "etc/jupyter/jupyter_server_config.d/nbgrader.json").write_text(nbgrader_config.read_text())
    listed = run(bin_ / "python", "-m", "jupyterlab.labextensions", "list")
    assert EXTENSION in listed and "enabled" in listed.split(EXTENSION)[1].splitlines()[0]
    servers = run(bin_ / "python", "-c", SERVER_EXTENSIONS, cwd=tmp_path)
    enabled = json.loads(servers.strip().splitlines()[-1])
    assert enabled["jupyterlab_gradewright"] is True
    assert [name for name, on in enabled.items() if name.startswith("nbgrader") and on] == []
    # The page JupyterLab gives the browser: Gradewright's extension loaded, nbgrader's disabled.
    page = get_page_config(
        [str(prefix / "share/jupyter/labextensions"), str(Path(sys.base_prefix) / "share/jupyter/labextensions")]
    )
    assert EXTENSION in [extension["name"] for extension in page["federated_extensions"]]
    assert "@jupyter/nbgrader" in page["disabledExtensions"]


SERVER_EXTENSIONS = """
import json, sys
from jupyter_core.paths import jupyter_config_path
from jupyter_server.extension.config import ExtensionConfigManager
print(json.dumps(ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()))
"""


@pytest.mark.install  # the CI step of install tests (.ci/run): the default run is at its time limit
def test_an_editable_install_links_the_extension_for_development(tmp_path):
    bin_ = made_venv(tmp_path / "venv")
    before = bundle_times()
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        bin_ / "python",
        "install",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-e",
        ".",
    )
    # Built from the current sources (its digest), the committed bundle is linked as it is: the editable
    # install did not build it again, though jlpm is on the PATH here.
    assert bundle_times() == before
    # What `jupyter labextension develop --overwrite .` runs, in the venv's own process: the command
    # hands over to the `jupyter-builder` script on the PATH, which here would be the machine's.
    run(bin_ / "python", "-c", DEVELOP)
    linked = tmp_path / "venv/share/jupyter/labextensions" / EXTENSION
    assert linked.is_symlink() and linked.resolve() == (ROOT / "jupyterlab_gradewright/labextension").resolve()
    listed = run(bin_ / "python", "-m", "jupyterlab.labextensions", "list")
    assert EXTENSION in listed and "enabled" in listed.split(EXTENSION)[1].splitlines()[0]


def bundle_times() -> dict[str, int]:
    """Each file of the committed bundle, with the time it was last written."""
    bundle = ROOT / "jupyterlab_gradewright/labextension"
    return {str(path.relative_to(bundle)): path.stat().st_mtime_ns for path in bundle.rglob("*") if path.is_file()}


DEVELOP = """
from jupyter_builder.federated_extensions import develop_labextension_py
develop_labextension_py(".", overwrite=True, sys_prefix=True)
"""
