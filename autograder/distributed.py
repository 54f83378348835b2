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
WORKERS_WAIT_SECONDS = 60.0  # a batch sent to a cluster with no worker would wait forever


def scheduler_address(given: str | None) -> str | None:
    return given or os.environ.get(ADDRESS_VARIABLE) or None


@contextmanager
def dask_executor(
    address: str, timeout: float = 20.0, workers_wait: float = WORKERS_WAIT_SECONDS
) -> Iterator[Executor]:
    """The cluster's executor, once at least one worker has joined (``workers_wait`` seconds at most)."""
    try:
        from distributed import Client
    except ImportError:
        raise AutograderError(f"--scheduler {address} needs Dask: pip install -e '.[dask]'") from None
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise AutograderError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        try:
            client.wait_for_workers(1, timeout=workers_wait)
        except TimeoutError:
            raise AutograderError(
                f"no workers joined the Dask scheduler at {address} in {workers_wait:g} s; "
                f"start some with: dask worker {address}"
            ) from None
        yield client.get_executor(pure=False)
    finally:
        client.close()
