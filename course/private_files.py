"""Files that hold secrets or personal data (sign-in links, grades, rosters, tokens, answers), written
readable and writable by their owner only (0600), wherever they land: a new file is made 0600, and
a file that was there already is made 0600 before anything is written into it (``open()``'s mode
applies only to a file it creates, so rewriting last week's 0644 export would keep it 0644). What
is not a plain file (``/dev/stdout``, a pipe) is written as it is.

The one place the commands, the gradebook and the site open such a file for writing.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

PRIVATE = 0o600


@contextmanager
def private_text(path: Path, newline: str | None = None) -> Iterator[TextIO]:
    """``path`` opened for writing text (UTF-8), truncated, its owner's only."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.fchmod(descriptor, PRIVATE)
        handle = os.fdopen(descriptor, "w", encoding="utf-8", newline=newline)
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle


def write_private(path: Path, text: str) -> None:
    """``path``'s whole text, its owner's only."""
    with private_text(path) as handle:
        handle.write(text)


def made_once(path: Path, make: Callable[[], str]) -> str:
    """The text of ``path``, a secret made once: when it is not there, ``make()``'s text is written to
    a file of its own beside it and linked into place, so that processes starting together (two
    sites, two graders) all read the one that won, never a half-written or an empty file."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    try:
        write_private(draft, make() + "\n")
        os.link(draft, path)  # fails when another process linked its own first: theirs is kept
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()
