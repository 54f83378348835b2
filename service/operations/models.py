"""The grading workers alive: each worker says so every few seconds while it runs (service/handin/worker.py),
so that /readyz, the metrics and ``check --deploy`` can tell a site whose hand-ins nobody grades."""

from __future__ import annotations

from django.db import models


class WorkerSeen(models.Model):
    name = models.CharField(max_length=200, unique=True)  # host:pid, as the jobs' lease owner
    seen_at = models.DateTimeField(db_index=True)
