"""Reference values remembered on disk, from one grading process to the next.

A reference function that is pure in its arguments and slow (``saturation``: 2,000 trials for each
of the suite's settings) is decorated with ``@remembered``: its results are kept in memory, and in a
file of the grader's own cache, so that a single notebook graded from the command line, or each
process of a batch, does not pay for them again.

The file's name is a hash of the reference file's bytes, the function's name and numpy's version:
an edited reference, or a numpy whose random streams might differ, starts a new file. Only plain
JSON values (numbers, strings, booleans, lists of them; not tuples, which would come back as lists)
are remembered on disk; anything else is computed each time, as without the decorator. The folder
is the grader's (mode 0700), never seen by the sandbox; a file that is missing, unreadable or not
the expected shape is ignored and rewritten, never trusted.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .environment import read
from .sandbox.runtime import cache_root

PLAIN = (int, float, str, bool, type(None))


def values_folder() -> Path:
    """Where remembered values live (GRADEWRIGHT_REFERENCE_CACHE overrides it, as the tests do)."""
    configured = read("GRADEWRIGHT_REFERENCE_CACHE")
    return Path(configured) if configured else cache_root() / "reference-values"


def remembered(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``'s results, kept in memory and on disk, keyed by its arguments."""
    source = Path(inspect.getfile(function)).read_bytes()
    name = hashlib.sha256(b"\0".join([source, function.__qualname__.encode(), np.__version__.encode()])).hexdigest()
    known: dict[str, Any] | None = None

    def path() -> Path:
        return values_folder() / f"{name[:32]}.json"

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal known
        if known is None:
            known = _read(path())
        key = _key(args, kwargs)
        if key is not None and key in known:
            return known[key]
        value = function(*args, **kwargs)
        if key is not None and _plain(value):
            known[key] = value
            _write(path(), key, value)
        return value

    return wrapper


def _key(args: tuple, kwargs: dict) -> str | None:
    if not all(_plain(value) for value in (*args, *kwargs.values())):
        return None
    return json.dumps([list(args), sorted(kwargs.items())])


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return isinstance(value, PLAIN) and not (isinstance(value, float) and value != value)


def _read(path: Path) -> dict[str, Any]:
    try:
        values = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return values if isinstance(values, dict) else {}


def _write(path: Path, key: str, value: Any) -> None:
    """Adds one value to the file, keeping what other processes added meanwhile (a value lost to a
    race is computed again later, nothing worse); a folder that cannot be written leaves memory only."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        values = _read(path) | {key: value}
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "w") as file:
            json.dump(values, file)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
