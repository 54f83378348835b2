"""What runs on a Dask worker (and the scheduler) to ask whether it can grade, before it is given a
submission. This module is sent *by value* (``cloudpickle.register_pickle_by_value``): a worker
whose environment lacks the project must still be able to run it and say so. So it imports only
the standard library and Dask at its top, and the grader inside the functions, where a failure to
import it is the answer rather than an error.

A problem is a pair of plain strings, (what is missing, how to fix it), so that it travels through
Dask's events (msgpack) as well as through its results."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

INSTALL_THE_PROJECT = "install this project in the workers' environment (pip install -e '.[dask]' from the checkout)"
Problem = list[str]  # [what is missing, how to fix it]


def grader_problem() -> Problem | None:
    """The grader cannot be imported here (what a task's deserialization needs), or None."""
    try:
        import autograder.batch  # noqa: F401 - what deserializing a grading task imports
    except Exception as exc:  # whatever stops the import is the answer
        return [f"cannot import the grader ({type(exc).__name__}: {exc})", INSTALL_THE_PROJECT]
    return None


def problems_here(needs: dict[str, Any]) -> list[Problem]:
    """Everything that stops this process grading what ``needs`` describes (GradingNeeds, as data)."""
    missing_grader = grader_problem()
    if missing_grader is not None:
        return [missing_grader]
    from autograder.version import grader_version

    found: list[Problem] = []
    here = grader_version()
    if here != needs["grader_version"]:
        found.append(
            [
                f"runs grader {here}, the submitting side {needs['grader_version']}",
                "install the same version of this project on both sides",
            ]
        )
    if needs["sandbox"]:
        from autograder.sandbox.runners import missing_for_sandbox

        missing = missing_for_sandbox()
        if missing:
            found.append(
                [
                    f"cannot start the sandbox: missing {'; '.join(missing)}",
                    "install it on the worker's machine (`autograder doctor` there says what it lacks)",
                ]
            )
    for name, wanted in needs["packages"].items():
        if importlib.util.find_spec(name) is None:
            found.append([f"lacks the course's sandbox package {name}", f"pip install {_pinned(name, wanted)} there"])
            continue
        there = _version(name)
        if wanted is not None and there != wanted:
            found.append(
                [
                    f"has {name} {there}, the submitting side {wanted}",
                    f"install the same version on both sides (pip install {_pinned(name, wanted)})",
                ]
            )
    for path in needs["paths"]:
        if not os.path.isdir(path):
            found.append(
                [
                    f"does not see {path}",
                    "share the course folder with every worker, at the same path as on the submitting side",
                ]
            )
    return found


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _pinned(name: str, version: str | None) -> str:
    return f"{name}=={version}" if version else name


class GraderCheck(WorkerPlugin):
    """Set up on every worker, those there now and those that join later: a worker that can grade
    gets ``resource`` (one per thread), which every grading task asks for, so a worker that cannot
    is never given one; it says why once, as an event on ``topic``, which the grading side prints."""

    def __init__(self, needs: dict[str, Any], resource: str, topic: str):
        self.needs, self.resource, self.topic = needs, resource, topic
        self.problems: list[Problem] | None = None

    async def setup(self, worker: Any) -> None:
        try:
            self.problems = problems_here(self.needs)
        except Exception as exc:  # a check that breaks is a worker that cannot grade
            self.problems = [[f"the grader's check failed ({type(exc).__name__}: {exc})", INSTALL_THE_PROJECT]]
        if self.problems:
            worker.log_event(self.topic, {"worker": worker.address, "problems": self.problems})
            return
        await worker.set_resources(**{self.resource: worker.state.nthreads})


def problems_of(dask_worker: Any, name: str) -> list[Problem] | None:
    """A worker's findings from its GraderCheck called ``name`` (run there with ``client.run``);
    None while the check is still to run there (a worker joining now: it says what it finds)."""
    plugin = dask_worker.plugins.get(name)
    return None if plugin is None else plugin.problems
