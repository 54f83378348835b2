"""A CPU share of its own for each sandbox, where the kernel lets the grader make one.

Each sandbox joins a control group of its own under ``autograder/`` with the same CPU weight, so a
submission that starts many busy processes gets one sandbox's share of the CPU, not one share per
process, and its neighbours' calls keep their speed. Control groups need root (or a delegated
cgroup v2 subtree at the hierarchy's root); where none can be made, sandboxes run without one and
the call clock (``process.CallClock``) still keeps starved calls fair.
"""

from __future__ import annotations

import itertools
import os
import signal
from functools import cache
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_FOLDER = "autograder"
_counter = itertools.count()


class CpuGroup:
    """One sandbox's control group: join it from the child before exec, remove it after the kill."""

    def __init__(self, path: Path):
        self.path = path

    def join(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def kill(self) -> None:
        """SIGKILL every process in the group: whatever the sandbox started, wherever it went."""
        try:
            pids = (self.path / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError, ValueError):
                pass

    def remove(self) -> bool:
        """Remove the group; False while processes (killed ones not yet collected) are still in it."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


def new_group() -> CpuGroup | None:
    """A fresh control group with the standard CPU weight, or None where none can be made."""
    parent = _parent()
    if parent is None:
        return None
    path = parent / f"{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return CpuGroup(path)


def groups_of(pid: int) -> list[CpuGroup]:
    """The groups that grading process ``pid`` made and has not removed."""
    parent = _parent()
    return [] if parent is None else [CpuGroup(path) for path in parent.glob(f"{pid}-*")]


def parent_folder() -> Path | None:
    """Where sandboxes' control groups are made, or None where none can be."""
    return _parent()


@cache
def _parent() -> Path | None:
    """``autograder/`` in the cgroup v2 hierarchy with the cpu controller, or in cgroup v1's cpu
    hierarchy; None where neither is writable."""
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.is_file():
        try:
            if "cpu" not in unified.read_text().split():
                return None
            (CGROUP_ROOT / "cgroup.subtree_control").write_text("+cpu")
            parent = CGROUP_ROOT / GROUP_FOLDER
            parent.mkdir(exist_ok=True)
            (parent / "cgroup.subtree_control").write_text("+cpu")
            return _tidied(parent)
        except OSError:
            return None
    legacy = CGROUP_ROOT / "cpu"
    if (legacy / "cpu.shares").is_file() and os.access(legacy, os.W_OK):
        parent = legacy / GROUP_FOLDER
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            return None
        return _tidied(parent)
    return None


def _tidied(parent: Path) -> Path:
    """``parent``, without what graders killed outright (SIGKILL) left: their groups, and any sandbox
    process still in them (a sandbox caught starting up can outlive the grader that started it)."""
    for path in parent.iterdir():
        pid = path.name.split("-")[0]
        if path.is_dir() and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            CpuGroup(path).kill()
            CpuGroup(path).remove()
    return parent
