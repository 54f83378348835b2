"""Whether the service can do its work, in one place: the database reached, its migrations applied,
its live settings files read (service/core/live_settings.py), a grading worker alive, the queue's oldest
job's age. ``/readyz`` answers from these, the metrics
(service/operations/metrics.py) report them, and ``check --deploy`` (service/operations/checks.py) warns of a site that no
worker serves.

A worker is alive when it said so within ``ALIVE_WITHIN`` (``seen()``, from its loop: every look at
the queue, at most every ``SEEN_EVERY`` seconds), or holds a job's unexpired lease (it is grading:
its lease is renewed while it does)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import DatabaseError, connection
from django.utils import timezone

ALIVE_WITHIN = timedelta(seconds=60)
SEEN_EVERY = 10.0  # seconds between a worker's writes of its sign of life
_last_seen: dict[str, float] = {}


def seen(worker: str) -> None:
    """Note that ``worker`` is alive (called from its loop; written at most every SEEN_EVERY s)."""
    now = time.monotonic()
    if now - _last_seen.get(worker, -SEEN_EVERY) < SEEN_EVERY:
        return
    from .models import WorkerSeen

    WorkerSeen.objects.update_or_create(name=worker, defaults={"seen_at": timezone.now()})
    _last_seen[worker] = now


def gone(worker: str) -> None:
    """The worker stops: it is no longer counted."""
    from .models import WorkerSeen

    _last_seen.pop(worker, None)
    WorkerSeen.objects.filter(name=worker).delete()


def workers_alive() -> int:
    from service.handin.models import Job

    from .models import WorkerSeen

    now = timezone.now()
    said = set(WorkerSeen.objects.filter(seen_at__gte=now - ALIVE_WITHIN).values_list("name", flat=True))
    grading = set(
        Job.objects.filter(state=Job.GRADING, lease_expires_at__gt=now)
        .exclude(worker="")
        .values_list("worker", flat=True)
    )
    return len(said | grading)


def oldest_queued_age() -> float:
    """Seconds the oldest queued job has waited; 0 when none waits."""
    from service.handin.models import Job

    oldest = Job.objects.filter(state=Job.QUEUED).order_by("created_at").values_list("created_at", flat=True).first()
    return 0.0 if oldest is None else max(0.0, (timezone.now() - oldest).total_seconds())


def unapplied_migrations() -> list[str]:
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    return [
        f"{migration.app_label}.{migration.name}"
        for migration, _ in executor.migration_plan(executor.loader.graph.leaf_nodes())
    ]


NO_WORKER = "no worker alive: hand-ins are taken and wait in the queue until one starts"


@dataclass
class Readiness:
    """What ``/readyz`` says. Ready means this site process can serve requests (the database answers,
    its migrations are applied): what a load balancer asks before it sends it requests. A site with
    no grading worker alive still serves (its pages, the grades, hand-ins taken into the queue), so
    it stays ready and says ``grading``; alert on that and on ``oldest_queued_seconds`` instead. A
    settings file that does not read leaves the last good settings in force: said in ``settings``,
    and still ready."""

    database: str  # "ok", or why not
    migrations: str
    workers: int
    oldest_queued_seconds: float
    settings: list[str] = field(default_factory=list)  # each live settings file that does not read

    @property
    def ready(self) -> bool:
        return self.database == "ok" and self.migrations == "ok"

    def as_dict(self) -> dict[str, object]:
        return {
            "ready": self.ready,
            "database": self.database,
            "migrations": self.migrations,
            "settings": self.settings or "ok",
            "grading": "ok" if self.workers > 0 else NO_WORKER,
            "workers_alive": self.workers,
            "oldest_queued_seconds": round(self.oldest_queued_seconds, 1),
        }


def settings_faults() -> list[str]:
    """Each live settings file that does not read now, in one line (read here if it changed)."""
    from course.errors import CourseError
    from service.core.access import assignments, course
    from service.core.live_settings import faults

    try:
        assignments()  # course.toml and every assignment.toml, read again where they changed
        folder = course()
    except CourseError as exc:  # course.toml never read in this process: nothing is in force
        return [str(exc)]
    return [fault.said(folder.root) for fault in faults(folder)]


def readiness() -> Readiness:
    """Each fact, a database error said as the reason rather than raised (a readiness probe must answer)."""
    try:
        connection.ensure_connection()
    except DatabaseError as exc:
        return Readiness(f"unreachable: {type(exc).__name__}", "unknown", 0, 0.0)
    try:
        unapplied = unapplied_migrations()
        migrations = "ok" if not unapplied else f"{len(unapplied)} not applied: autograder manage migrate"
        return Readiness("ok", migrations, workers_alive(), oldest_queued_age(), settings_faults())
    except DatabaseError as exc:
        return Readiness(f"failed: {type(exc).__name__}", "unknown", 0, 0.0)
