"""The Python runtime the sandbox sees: the interpreter, its standard library, numpy (and
matplotlib with its dependencies when installed) and the worker's and the zygote's scripts, nothing else.

The grader's interpreter may live where an unprivileged user cannot read it (pyenv under /root),
so the runtime is assembled once into a cache folder that any user can read: files are hard-linked
where the filesystem allows, copied otherwise. The folder's name is a hash of what it holds, so a
new interpreter, numpy or worker gets a new runtime.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from course.folder import SANDBOX_PACKAGES  # the default; a course names its own in course.toml

from . import worker, zygote

STDLIB_SKIP = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3"}
REQUIRED_PACKAGES = ("numpy",)  # the worker's protocol sends numpy arrays
# Where the sandbox sees the runtime: where python.org's builds and the official Docker images keep
# Python, so that a submission sees an ordinary installation (/usr/local/bin/python3, numpy under
# /usr/local/lib/python3.X/site-packages), nothing that says it is being graded. The scripts keep
# names that say nothing either: the worker is main.py, the zygote run.py.
RUNTIME_MOUNT = "/usr/local"
WORKER_SCRIPT = "main.py"
ZYGOTE_SCRIPT = "run.py"
MATPLOTLIB_CACHE = "share/matplotlib"  # the prebuilt font cache, relative to the runtime
LAYOUT = "usr-local-2"  # changes the runtime's folder name whenever its layout changes
# What ``from autograder import check`` finds in the sandbox (notebooks call it to run their public
# tests; while grading it does nothing, and answers as on the student's machine when they pass).
CHECK_STUB = '''"""Checks for the course's notebooks."""


def check(question, notebook=None):
    return True
'''


def cache_root() -> Path:
    if os.geteuid() == 0:
        return Path("/var/cache/gradewright")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gradewright"


def package_dirs(wanted: tuple[str, ...] = SANDBOX_PACKAGES) -> list[Path]:
    """Folders to place on the sandbox's path: numpy, and matplotlib with what it imports."""
    found: list[Path] = []
    names = list(dict.fromkeys((*REQUIRED_PACKAGES, *wanted)))
    seen: set[str] = set()
    while names:
        name = names.pop(0)
        if name in seen:
            continue
        seen.add(name)
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for top in _top_level_names(distribution):
            if top.endswith((".dist-info", ".egg-info")) or top in {"..", "__pycache__", ""}:
                continue
            path = Path(str(distribution.locate_file(top)))
            if path not in found and path.exists():
                found.append(path)
        for requirement in distribution.requires or []:
            if "extra ==" not in requirement:
                names.append(_requirement_name(requirement))
    return found


def _top_level_names(distribution: importlib.metadata.Distribution) -> list[str]:
    """What a distribution installs at the top of site-packages. Thousands of files, a dozen names:
    its RECORD is read as text (``distribution.files`` and a Path per file cost every grading
    command a tenth of a second); a RECORD line is ``path,hash,size``, the path maybe quoted."""
    record = distribution.read_text("RECORD")
    if record is None:
        paths = [str(file) for file in distribution.files or []]
    else:
        paths = [line.rsplit(",", 2)[0].strip('"') for line in record.splitlines()]
    return list(dict.fromkeys(path.split("/", 1)[0] for path in paths if path))


def missing_packages(wanted: tuple[str, ...]) -> list[str]:
    """The packages a course wants in the sandbox that this machine's Python does not have."""
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def ensure_runtime(wanted: tuple[str, ...] = SANDBOX_PACKAGES) -> Path:
    """The runtime folder for these packages (and what they need), built on first use."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    executable = Path(os.path.realpath(sys.executable))
    libdir = Path(sysconfig.get_config_var("LIBDIR") or "")
    libpython = sysconfig.get_config_var("INSTSONAME") or ""
    packages = package_dirs(wanted)
    scripts = {WORKER_SCRIPT: Path(worker.__file__).read_bytes(), ZYGOTE_SCRIPT: Path(zygote.__file__).read_bytes()}
    key = hashlib.sha256(
        "\n".join([LAYOUT, sys.version, str(executable), str(stdlib), *map(str, packages), *_versions(wanted)]).encode()
        + CHECK_STUB.encode()
        + b"".join(scripts.values())
    ).hexdigest()[:16]
    target = cache_root() / f"runtime-{key}"
    if (target / "ready").exists():
        return target

    target.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(target.parent, 0o755)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=target.parent))
    try:
        (building / "bin").mkdir()
        _place(executable, building / "bin" / "python3")
        if libpython and (libdir / libpython).exists():
            (building / "lib").mkdir()
            _place(libdir / libpython, building / "lib" / libpython)
        shutil.copytree(
            stdlib,
            building / "lib" / stdlib.name,
            ignore=lambda folder, names: [n for n in names if n in STDLIB_SKIP and Path(folder) == stdlib],
            copy_function=_place,
            dirs_exist_ok=True,
        )
        # Python finds its own site-packages, as any installation's: nothing to put on its path.
        site_packages = Path("lib") / stdlib.name / "site-packages"
        site = building / site_packages
        site.mkdir()
        for package in packages:
            if package.is_dir():
                shutil.copytree(package, site / package.name, copy_function=_place)
            else:
                _place(package, site / package.name)
        (site / "autograder").mkdir()
        (site / "autograder" / "__init__.py").write_text(CHECK_STUB)
        _matplotlib_font_cache(building / MATPLOTLIB_CACHE, f"{RUNTIME_MOUNT}/{site_packages}")
        for name, source in scripts.items():
            (building / name).write_bytes(source)
        (building / "ready").write_text(key)
        for root, _dirs, _files in os.walk(building):
            os.chmod(root, 0o755)
        try:
            os.rename(building, target)
        except OSError:  # another process built it first
            shutil.rmtree(building, ignore_errors=True)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return target


def _matplotlib_font_cache(folder: Path, sandbox_site: str) -> None:
    """Matplotlib builds a font cache on first import, which costs every fresh worker a second.
    Build it once here and rewrite its paths to where the sandbox sees matplotlib; the worker
    copies it into its own config folder."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:
        return
    package_parent = str(Path(spec.origin).parent.parent)
    with tempfile.TemporaryDirectory() as config:
        environment = {**os.environ, "MPLCONFIGDIR": config, "MPLBACKEND": "Agg"}
        completed = subprocess.run(
            [sys.executable, "-c", "import matplotlib.font_manager"], env=environment, capture_output=True, timeout=120
        )
        caches = list(Path(config).glob("fontlist-*.json"))
        if completed.returncode != 0 or not caches:
            return
        folder.mkdir(parents=True)
        for cache in caches:
            text = cache.read_text(encoding="utf-8").replace(json.dumps(package_parent)[1:-1], sandbox_site)
            (folder / cache.name).write_text(text, encoding="utf-8")


def _place(source, destination) -> None:
    """Hard-link a world-readable file; copy (and open up the copy) otherwise, so that the
    original installation's permissions are never changed."""
    if os.stat(source).st_mode & 0o004:
        try:
            os.link(source, destination)
            return
        except OSError:
            pass
    shutil.copy2(source, destination)
    os.chmod(destination, os.stat(destination).st_mode | 0o444)


def _versions(wanted: tuple[str, ...]) -> list[str]:
    versions = []
    for name in wanted:
        if importlib.util.find_spec(name) is not None:
            try:
                versions.append(f"{name}=={importlib.metadata.version(name)}")
            except importlib.metadata.PackageNotFoundError:
                pass
    return versions


def _requirement_name(requirement: str) -> str:
    for index, char in enumerate(requirement):
        if not (char.isalnum() or char in "-_."):
            return requirement[:index]
    return requirement
