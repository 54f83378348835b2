"""The systemd units that run a course's site on a server (``autograder systemd``): the site
(``gradewright.service``), its grading workers (``gradewright-worker@.service``, one instance per
worker, each also sending the scores due to the course platforms), and the nightly backup
(``gradewright-backup.service`` and its ``.timer``). They ship in ``service/operations/systemd/`` with the
operator's paths left as ``{placeholders}``; ``write_units`` fills them in for one course and one
install (the ``autograder`` beside the Python that runs it). docs/operators/install.md uses them."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from service.errors import ServiceError
from service.settings import STATE_FOLDER

TEMPLATES = Path(__file__).resolve().parent / "systemd"
UNITS = ("gradewright.service", "gradewright-worker@.service", "gradewright-backup.service", "gradewright-backup.timer")


@dataclass(frozen=True)
class Install:
    """What the units name: the course, the account they run as, its settings, where backups go."""

    course: Path
    user: str = "gradewright"
    env_file: Path = Path("/etc/gradewright/site.env")
    backups: Path = Path("/var/backups/gradewright")
    host: str = "127.0.0.1"
    port: int = 8000
    keep_days: int = 14


def autograder_program() -> Path:
    """The ``autograder`` of this install: beside the Python running (a venv's bin/), else on the PATH."""
    beside = Path(sys.executable).parent / "autograder"
    if beside.is_file():
        return beside.absolute()
    found = shutil.which("autograder")
    if found is None:
        raise ServiceError("no `autograder` program beside this Python or on the PATH to name in the units")
    return Path(found).absolute()


def _state_folder_for(install: Install) -> None:
    state = install.course / STATE_FOLDER
    try:
        state.mkdir(mode=0o700, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(state, install.user, install.user)
    except LookupError:
        raise ServiceError(
            f"no account named {install.user!r} here: make it first (adduser --system --group ...)"
        ) from None
    except OSError as exc:
        raise ServiceError(f"{state}: cannot make the course's state folder ({exc.strerror})") from None


def render(name: str, install: Install, autograder: Path) -> str:
    """One unit's text with ``install``'s paths filled in."""
    for path in (install.course, install.env_file, install.backups):
        if not path.is_absolute() or any(char.isspace() or char in "%$'\"\\" for char in str(path)):
            raise ServiceError(f"{path}: the units need an absolute path without spaces, quotes, % or $")
    if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", install.user):
        raise ServiceError(f"{install.user!r} is not a system user's name (lower-case letters, digits, - and _)")
    course = install.course
    template = (TEMPLATES / name).read_text(encoding="utf-8")
    return template.format(
        course=course,
        state=course / STATE_FOLDER,
        user=install.user,
        group=install.user,
        env_file=install.env_file,
        backups=install.backups,
        host=install.host,
        port=install.port,
        keep_days=install.keep_days,
        autograder=autograder,
    )


def write_units(out: Path, install: Install, autograder: Path | None = None) -> list[Path]:
    """Write the four units into ``out`` (``/etc/systemd/system`` on a server); the paths written.
    The course's state folder is made first where it is missing, owned by the units' account when
    run as root: systemd refuses to start a unit whose ReadWritePaths is not there, and the rest of
    the file system is read-only to them."""
    program = autograder or autograder_program()
    texts = {name: render(name, install, program) for name in UNITS}
    _state_folder_for(install)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (out / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ServiceError(f"{out}: cannot write the units ({exc.strerror})") from None
    return [out / name for name in UNITS]
