"""``autograder doctor``: can this machine grade the course, and with what? Every part the sandbox
needs, in words, then the sandbox itself started with the course's packages, reporting what its
Python sees from inside."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from pydantic import BaseModel

from .cgroups import parent_folder
from .limits import Limits
from .runners import make_runner, missing_for_sandbox
from .runtime import SANDBOX_PACKAGES, missing_packages
from .session import Cell, StudentSession

INSIDE = """
import json, os, platform, sys
seen = {"python": platform.python_version(), "uid": os.getuid(), "root": sorted(os.listdir("/")), "packages": {}}
for name in __PACKAGES__:
    try:
        seen["packages"][name] = getattr(__import__(name), "__version__", "installed")
    except Exception as exc:
        seen["packages"][name] = "cannot import: " + type(exc).__name__
print(json.dumps(seen))
"""


class Finding(BaseModel):
    what: str
    ok: bool
    detail: str


def diagnose_course(course: Path | None = None, unsafe: bool = False) -> list[Finding]:
    """``autograder doctor``: ``diagnose`` with the course's packages (``course``, else the
    course.toml here or above); outside any course, with the default ones."""
    from course.errors import CourseError
    from course.folder import find_course

    try:
        packages = tuple(find_course(course).sandbox.packages)
    except CourseError:
        if course:
            raise
        packages = SANDBOX_PACKAGES
    return diagnose(packages, unsafe)


def diagnose(packages: tuple[str, ...], unsafe: bool = False) -> list[Finding]:
    findings = [
        Finding(what="bubblewrap", ok=shutil.which("bwrap") is not None, detail=shutil.which("bwrap") or "not found"),
    ]
    missing = missing_for_sandbox()
    findings.append(
        Finding(what="sandbox", ok=not missing, detail="; ".join(missing) or "user namespaces and seccomp work")
    )
    absent = missing_packages(packages)
    findings.append(
        Finding(
            what="course packages",
            ok=not absent,
            detail=", ".join(packages) + (f" (missing: {', '.join(absent)})" if absent else ""),
        )
    )
    group = parent_folder()
    findings.append(
        Finding(
            what="CPU control groups",
            ok=True,
            detail=f"each sandbox in its own group under {group}"
            if group
            else "not available (the CPU-wait clock keeps calls fair)",
        )
    )
    schedstat = os.path.exists(f"/proc/{os.getpid()}/schedstat")
    findings.append(
        Finding(
            what="CPU-wait clock",
            ok=True,
            detail="schedstat readable" if schedstat else "no schedstat: wall-clock time only",
        )
    )
    if absent or (missing and not unsafe):
        return findings
    try:
        runner = make_runner(unsafe, packages)
        with StudentSession(
            runner, [Cell(index=1, source=INSIDE.replace("__PACKAGES__", repr(list(packages))))], Limits()
        ) as session:
            loaded = session.load()
    except Exception as exc:  # whatever stops it is the finding
        findings.append(Finding(what="inside the sandbox", ok=False, detail=f"{type(exc).__name__}: {exc}"))
        return findings
    if loaded.failure or loaded.cell_errors:
        problem = loaded.failure or "; ".join(str(error) for error in loaded.cell_errors)
        findings.append(Finding(what="inside the sandbox", ok=False, detail=problem))
        return findings
    seen = json.loads(loaded.output.strip().splitlines()[-1])
    versions = ", ".join(f"{name} {version}" for name, version in seen["packages"].items())
    bad = [name for name, version in seen["packages"].items() if str(version).startswith("cannot import")]
    findings.append(Finding(what="each submission", ok=True, detail=runner.mode()))
    findings.append(
        Finding(
            what="inside the sandbox",
            ok=not bad,
            detail=f"Python {seen['python']} as uid {seen['uid']}, sees / = {seen['root']}; {versions}",
        )
    )
    findings.append(Finding(what="grader", ok=True, detail=f"Python {sys.version.split()[0]} at {sys.executable}"))
    return findings
