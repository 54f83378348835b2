"""Can this Dask cluster grade? Asked once, before the first submission is sent, and again of every
worker that joins later.

Without it, a cluster whose workers (or scheduler) run in an environment that lacks the project
takes every submission and fails each one, with Dask's "different environments" error inside each
report and a line per student on the terminal. Here every worker runs the grader's check
(``cluster_probe``, sent by value so that it runs where the grader does not): the grader imports
and is the same version, the sandbox starts (``autograder doctor``'s sandbox line), the course's
sandbox packages import at the same versions, the course folder is there; and the scheduler can
import the grader (it unpickles every task). Dask's own version mismatches are translated here too.
What fails is one line (ClusterUnfit).

A worker that passes gets a Dask resource that every grading task asks for, so a worker that joins
later and fails is never given a submission; it says so once (``on_refused``)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from course.wording import plural

from .errors import ClusterUnfit
from .version import grader_version

# Dask's packages whose versions must agree between this side, the scheduler and the workers
# (distributed.versions.required_packages; msgpack is the wire format, cloudpickle the tasks').
DASK_PACKAGES = ("dask", "distributed", "msgpack", "cloudpickle", "tornado", "toolz")


class GradingNeeds(BaseModel):
    """What a worker needs to grade, as found on the submitting side."""

    grader_version: str
    sandbox: bool  # False with --unsafe-no-sandbox
    packages: dict[str, str | None]  # the course's sandbox packages, with their versions here
    paths: list[str]  # folders every worker must see (the assignments')

    @classmethod
    def here(cls, packages: tuple[str, ...] | list[str], unsafe: bool, paths: list[Path]) -> GradingNeeds:
        return cls(
            grader_version=grader_version(),
            sandbox=not unsafe,
            packages={name: _version(name) for name in dict.fromkeys(packages)},
            paths=[str(path.resolve()) for path in paths],
        )

    def resource(self) -> str:
        """The Dask resource of the workers that can grade this (one name per set of needs)."""
        return "gradewright-" + hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]


class ClusterReport(BaseModel):
    address: str
    workers: list[str]  # those that passed, at the time of the probe
    resource: str  # what every grading task asks for
    plugin: str  # the check's name on the cluster (set up on every worker that joins)
    topic: str  # the event a worker that cannot grade logs


def probe_cluster(client: Any, needs: GradingNeeds, address: str) -> ClusterReport:
    """Check every worker of ``client``'s cluster (and its scheduler) against ``needs``, and leave
    the check set up for the workers that join later. Raises ClusterUnfit, in one line, when any
    part of the cluster as it is now cannot grade."""
    import cloudpickle

    from . import cluster_probe
    from .cluster_probe import INSTALL_THE_PROJECT

    cloudpickle.register_pickle_by_value(cluster_probe)  # runs where the grader cannot be imported
    _check_dask_versions(client, address)
    problem = client.run_on_scheduler(cluster_probe.grader_problem)
    if problem is not None:
        raise ClusterUnfit(
            f"cluster {address}: the scheduler: {problem[0]}; install this project in the scheduler's "
            "environment too (it unpickles every grading task)"
        )
    session = uuid.uuid4().hex[:12]
    report = ClusterReport(
        address=address,
        workers=[],
        resource=needs.resource(),
        plugin=f"gradewright-check-{session}",
        topic=f"gradewright-refused-{session}",
    )
    check = cluster_probe.GraderCheck(needs.model_dump(mode="json"), report.resource, report.topic)
    try:
        client.register_plugin(check, name=report.plugin)
    except Exception as exc:  # a worker that cannot even load the check (another Python)
        forget(client, report)
        raise ClusterUnfit(
            f"cluster {address}: a worker cannot load the grader's check ({type(exc).__name__}: {exc}); "
            f"{INSTALL_THE_PROJECT}, on the same Python"
        ) from None
    findings = client.run(cluster_probe.problems_of, name=report.plugin, on_error="return")
    unfit: dict[str, list[list[str]]] = {}
    for worker, found in sorted(findings.items()):
        if found is None or isinstance(found, OSError):
            continue  # joining now, or gone: a joiner's check says what it finds (watch_joiners)
        if isinstance(found, BaseException):  # the check could not even run there
            found = [[f"cannot run the grader's check ({type(found).__name__}: {found})", INSTALL_THE_PROJECT]]
        if found:
            unfit[worker] = found
        else:
            report.workers.append(worker)
    if unfit:
        forget(client, report)
        worker, found = next(iter(unfit.items()))
        others = len(unfit) - 1
        more = (
            f" (and {others} more of the {plural(len(report.workers) + len(unfit), 'worker')} cannot grade)"
            if others
            else ""
        )
        raise ClusterUnfit(f"cluster {address}: worker {worker}: {found[0][0]}; {found[0][1]}{more}")
    return report


def watch_joiners(client: Any, report: ClusterReport, on_refused: Callable[[str], None]) -> None:
    """Say once for each worker that joins later and cannot grade (it is given no submission)."""
    said = set(report.workers)

    def refused(event: tuple[float, dict]) -> None:
        message = event[1]
        worker = message.get("worker", "?")
        if worker in said:
            return
        said.add(worker)
        problems = message.get("problems") or [["cannot grade", ""]]
        on_refused(
            f"cluster {report.address}: worker {worker} joined but cannot grade, so it is left out: "
            f"{problems[0][0]}; {problems[0][1]}"
        )

    client.subscribe_topic(report.topic, refused)
    for event in client.get_events(report.topic):  # any that came before the subscription
        refused(event)


def forget(client: Any, report: ClusterReport) -> None:
    """Take the check off the cluster (workers keep the resource; it names these needs only)."""
    try:
        client.unsubscribe_topic(report.topic)
    except (ValueError, KeyError):
        pass  # never subscribed
    try:
        client.unregister_worker_plugin(report.plugin)
    except (OSError, TimeoutError, ValueError):
        pass  # the cluster is gone, and the check with it


def _check_dask_versions(client: Any, address: str) -> None:
    """Dask's own version check, translated: the first package whose version differs between this
    side and the scheduler or a worker, in one line (Dask's is a table, and only a warning)."""
    versions = client.get_versions()
    ours = _dask_versions(versions["client"])
    sides = {"the scheduler": versions["scheduler"]}
    sides.update({f"worker {worker}": found for worker, found in sorted(versions["workers"].items())})
    for side, found in sides.items():
        theirs = _dask_versions(found)
        for name, version in ours.items():
            if theirs.get(name) != version:
                fix = (
                    "run them on the same Python as this side"
                    if name == "Python"
                    else f"install the same version on both sides (pip install {name}=={version})"
                )
                raise ClusterUnfit(
                    f"cluster {address}: {side}: has {name} {theirs.get(name)}, this side {version}; {fix}"
                )


def _dask_versions(found: Any) -> dict[str, str | None]:
    packages = (found or {}).get("packages", {}) if isinstance(found, dict) else {}
    python = str(packages.get("python", "")).split(".")
    wanted = {"Python": ".".join(python[:2]) or None}
    wanted.update({name: packages.get(name) for name in DASK_PACKAGES})
    return wanted


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
