"""The local process pool a batch grades on when no executor is given, and how its grading
processes stop: SIGTERM (the batch interrupted) kills the sandbox a job grades in on the way out."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from .sandbox.process import kill_groups_of

STOP_GRACE_SECONDS = 3.0  # for a grading process to kill its sandbox before it is killed itself


class LocalPool:
    """A local process pool that replaces itself when a dead worker process breaks it. It starts
    with forkserver: a pool forked from this process would inherit whatever it initialised (torch's
    thread pools deadlock in a forked child)."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.pool = self._new()
        self.alone: list[ProcessPoolExecutor] = []

    def _new(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=multiprocessing.get_context("forkserver"), initializer=_stop_on_sigterm
        )

    def submit(self, function, *args) -> Future:
        try:
            return self.pool.submit(function, *args)
        except BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new()
            return self.pool.submit(function, *args)

    def submit_alone(self, function, *args) -> Future:
        """Run one job in a pool of its own: a job that kills its process then takes no other job
        with it, as it does in a shared pool, where every pending job fails with the pool."""
        alone = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("forkserver"), initializer=_stop_on_sigterm
        )
        self.alone.append(alone)
        future = alone.submit(function, *args)
        future.add_done_callback(lambda _: alone.shutdown(wait=False))
        return future

    def shutdown(self) -> None:
        self.pool.shutdown(cancel_futures=True)
        for alone in self.alone:
            alone.shutdown(cancel_futures=True)

    def kill(self) -> None:
        """End every grading process now. Each is asked first (SIGTERM: it kills its sandbox and
        stops), then killed; a sandbox left by a killed process dies with it (bubblewrap's
        --die-with-parent, the unsafe worker's parent-death signal) or with its control group."""
        processes = []
        for pool in (self.pool, *self.alone):
            processes += list((getattr(pool, "_processes", None) or {}).values())  # no public way to reach them
            pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join(timeout=10)
            if process.pid is not None:
                kill_groups_of(process.pid)
        from multiprocessing import forkserver, resource_tracker

        # The server that forked them and multiprocessing's resource tracker go too (no public way).
        for helper in (forkserver._forkserver, resource_tracker._resource_tracker):
            stop = getattr(helper, "_stop", None)
            if stop is not None:
                stop()


_pool_state = {"in_pool": False, "grading": False}


def _stop_on_sigterm() -> None:
    """In a pool's grading process: SIGTERM interrupts a job like Ctrl-C, so the sandbox it grades
    in is killed on the way out (see pool_job); an idle process just exits."""
    _pool_state["in_pool"] = True

    def interrupt(_signum: int, _frame: object) -> None:
        if _pool_state["grading"]:
            raise KeyboardInterrupt
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, interrupt)


@contextmanager
def pool_job() -> Iterator[None]:
    """Around one job, in whichever process runs it: in a pool's process, the SIGTERM that
    interrupted the job (its sandbox closed on the way out) ends the process too."""
    _pool_state["grading"] = True
    try:
        yield
    except KeyboardInterrupt:
        if _pool_state["in_pool"]:  # the sandbox is closed by now; the pool is being shut down
            os._exit(128 + signal.SIGTERM)
        raise
    finally:
        _pool_state["grading"] = False
