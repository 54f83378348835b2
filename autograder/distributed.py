"""Grading on a Dask cluster: the batch's executor is the cluster's (``DaskExecutor``, over a Dask client).

Every worker must hold the project (``pip install -e '.[dask]'``), bubblewrap, and the assignments and
submissions at the same paths as the machine that runs ``autograder grade`` (a shared filesystem).
Dask's deduplication is off (``pure=False``): a regrade really runs again. Results come back to the
grading command, which alone writes the reports and the gradebook. Before the first submission is
sent the cluster is probed (``cluster.probe_cluster``): a cluster that cannot grade is refused in
one line, and a worker that joins later and cannot grade is given no submission."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any

from .cluster import GradingNeeds, forget, probe_cluster, watch_joiners
from .environment import read
from .errors import AutograderError

ADDRESS_VARIABLE = "DASK_SCHEDULER_ADDRESS"
WORKERS_WAIT_SECONDS = 60.0  # a batch sent to a cluster with no worker would wait forever
logger = logging.getLogger("autograder.distributed")


def scheduler_address(given: str | None) -> str | None:
    return given or read(ADDRESS_VARIABLE) or None


@contextmanager
def executor_for(
    scheduler: str | None, needs: GradingNeeds, on_refused: Callable[[str], None] | None = None
) -> Iterator[Executor | None]:
    """The Dask cluster's executor where a scheduler is named (``scheduler``, else
    ``$DASK_SCHEDULER_ADDRESS``); None, for grading here, where none is."""
    address = scheduler_address(scheduler)
    if not address:
        yield None
        return
    with dask_executor(address, needs, on_refused=on_refused) as executor:
        yield executor


@contextmanager
def dask_executor(
    address: str,
    needs: GradingNeeds,
    timeout: float = 20.0,
    workers_wait: float = WORKERS_WAIT_SECONDS,
    on_refused: Callable[[str], None] | None = None,
) -> Iterator[Executor]:
    """The cluster's executor, once at least one worker has joined (``workers_wait`` seconds at
    most) and every worker has passed the probe for ``needs``; its tasks go only to workers that
    passed. ``on_refused`` hears, once, of each worker that joins later and cannot grade."""
    try:
        from distributed import Client
        from distributed.versions import VersionMismatchWarning
    except ImportError:
        raise AutograderError(f"--scheduler {address} needs Dask: pip install -e '.[dask]'") from None
    try:
        with warnings.catch_warnings():
            # Dask's table of mismatched versions: the probe says it in one line instead.
            warnings.simplefilter("ignore", VersionMismatchWarning)
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
        report = probe_cluster(client, needs, address)
        try:
            watch_joiners(client, report, on_refused or logger.warning)
            yield DaskExecutor(client, pure=False, resources={report.resource: 1})
        finally:
            forget(client, report)
    finally:
        client.close()


class DaskExecutor(Executor):
    """A Dask client's executor whose every future ends: with the job's result, or with whatever
    kept it from one.

    Dask's own (``client.get_executor()``) hands a job's outcome on from a coroutine that fetches
    the result once the task has finished and, when that fetch raises, drops the exception and
    leaves the future pending for ever. That is what a job that kills every worker does to the jobs
    beside it: a job finishes on a worker, the poisoned job kills that worker before the result is
    fetched, Dask computes the lost result again, the poisoned job kills that worker too, and the
    recomputed task ends as KilledWorker inside the fetch; the batch then waited for ever on a
    busy machine (where the fetch comes late). Here the outcome is fetched in Dask's callback
    thread, and any exception ends the future with it (the batch tries such a job again, or says it
    failed)."""

    def __init__(self, client: Any, **options: Any):
        self.client, self.options = client, options
        self._remote: dict[Future, Any] = {}  # each job's Dask future, alive until its outcome is in

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        outcome: Future = Future()
        outcome.set_running_or_notify_cancel()
        remote = self.client.submit(fn, *args, **{**self.options, **kwargs})
        self._remote[outcome] = remote

        def deliver(finished: Any) -> None:
            try:
                outcome.set_result(finished.result())
            except BaseException as exc:  # KilledWorker, a lost result, a cancelled key, the job's own error
                outcome.set_exception(exc)
            finally:
                self._remote.pop(outcome, None)

        remote.add_done_callback(deliver)
        return outcome

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self.client.cancel(list(self._remote.values()))
