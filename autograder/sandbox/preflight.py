"""Before a batch: can the sandbox's runtime start at all within the limits asked for?

A limit set too low for Python and numpy to start (``--memory 100``) would otherwise show up as
every student's ImportError. It is the instructor's to fix, so it is said once, as a usage error.
A combination of limits that worked is remembered in the runtime's cache, so the check costs one
worker start per new setting.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from course.wording import plural

from ..errors import LimitsTooLow
from .limits import Limits
from .runners import Runner
from .runtime import SANDBOX_PACKAGES, cache_root
from .session import Cell, StudentSession

PROBE_ROOM_MIB = 32


def probe(packages: tuple[str, ...]) -> str:
    """What every submission may count on importing: the course's sandbox packages (pyplot too)."""
    lines = [f"import {name}" for name in packages]
    if "matplotlib" in packages:
        lines += ["matplotlib.use('Agg')", "import matplotlib.pyplot"]
    # And a little room to work: the zygote has imported all of it already, so importing alone
    # would pass under a limit that leaves a submission no memory at all.
    lines.append(f"room = bytearray({PROBE_ROOM_MIB} << 20)")
    return "\n".join(lines) + "\n"


def check_limits(runner: Runner, limits: Limits, packages: tuple[str, ...] = SANDBOX_PACKAGES) -> None:
    """Raise LimitsTooLow, saying which limit to raise, when the runtime cannot start within ``limits``."""
    key = hashlib.sha256(
        f"{runner.name}:{runner.mode()}:{limits.memory_mib}:{limits.processes}:{limits.open_files}:"
        f"{limits.file_mib}:{limits.tmp_mib}:{','.join(packages)}".encode()
    ).hexdigest()[:16]
    marker = cache_root() / "limits-ok" / key
    if marker.exists():
        return
    probe_limits = limits.model_copy(update={"submission_timeout": 60.0, "call_timeout": 60.0})
    with StudentSession(runner, [Cell(index=1, source=probe(packages))], probe_limits) as session:
        loaded = session.load()
    problem = loaded.failure or "; ".join(f"{error.type}: {error.message}" for error in loaded.cell_errors)
    if problem:
        raise LimitsTooLow(
            f"the sandbox's Python cannot start within these limits (memory {limits.memory_mib} MiB, "
            f"{plural(limits.processes, 'process', 'processes')}, {plural(limits.open_files, 'open file')}): importing {', '.join(packages)} "
            f"failed ({problem[:200]}); raise --memory (or [limits] in assignment.toml)"
        )
    _remember(marker)


def _remember(marker: Path) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # only a cache
