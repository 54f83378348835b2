"""Grading on a Dask cluster: the batch's executor is the cluster's (``client.get_executor``).

Every worker must hold the project (``pip install -e '.[dask]'``), bubblewrap, and the assignments and
submissions at the same paths as the machine that runs ``autograder grade`` (a shared filesystem).
Dask's deduplication is off (``pure=False``): a regrade really runs again. Results come back to the
grading command, which alone writes the reports and the gradebook."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager

from .errors import AutograderError

ADDRESS_VARIABLE = "DASK_SCHEDULER_ADDRESS"


def scheduler_address(given: str | None) -> str | None:
    return given or os.environ.get(ADDRESS_VARIABLE) or None


@contextmanager
def dask_executor(address: str, timeout: float = 20.0) -> Iterator[Executor]:
    try:
        from distributed import Client
    except ImportError:
        raise AutograderError(f"--scheduler {address} needs Dask: pip install -e '.[dask]'") from None
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise AutograderError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()
