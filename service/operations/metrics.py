"""Prometheus metrics (prometheus_client), served at ``/metrics`` to whom the operator lets read them
(``GRADEWRIGHT_METRICS``: off, staff or open; autograder/environment.py).

Two registries. ``REGISTRY``, this process's own, counted as it happens: the requests it answered by
view and status, the exam answers it saved, its CPU, memory and open files (prometheus_client's
process and Python collectors), and the version it runs (``gradewright_build_info``). ``COURSE``,
what every process shares, read from the database at each scrape, so that any of the site's
processes reports the same (workers on other machines included): the jobs by state and the time from
hand-in (or regrade) to the end of grading, the queue's depth and its oldest job's age, the workers
alive, the LTI outbox's pending and failed scores. ``/metrics`` gives both; ``?scope=process`` the
first alone (scrape each site process so), ``?scope=course`` the second alone (scrape it once, through
the proxy), so that a sum over the site's processes counts nothing twice (``exposition``).

Labels take bounded values only: a view's name, a status code, a state, never a student or a path.
No ``_created`` series: a restart's time is in ``process_start_time_seconds``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    GC_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from autograder.version import grader_version

disable_created_metrics()
REGISTRY = CollectorRegistry()  # this process's own
COURSE = CollectorRegistry()  # read from the database: the same from every process
SCOPES = ("process", "course")
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
REGISTRY.register(GC_COLLECTOR)
Info("gradewright_build", "The version of Gradewright this process runs", registry=REGISTRY).info(
    {"version": grader_version()}
)
REQUESTS = Counter(
    "gradewright_http_requests",
    "Requests answered by this process, by view (the route's name) and status",
    ["view", "method", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "gradewright_http_request_duration_seconds",
    "Time to answer a request, by view",
    ["view"],
    registry=REGISTRY,
)
EXAM_SAVES = Counter(
    "gradewright_exam_saves",
    "Exam answers saved by this process, by outcome (saved, refused)",
    ["outcome"],
    registry=REGISTRY,
)
# From hand-in to the end of its grading: seconds on a quiet site, minutes in a deadline's rush.
JOB_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class CountRequests:
    """Middleware, outermost: each answer counted by its view's route name ("unresolved" when none
    matched), its method (others as "other") and its status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name if match is not None else "") or "unresolved"
        method = request.method if request.method in METHODS else "other"
        REQUESTS.labels(view, method, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(view).observe(time.perf_counter() - started)
        return response


class SharedState:
    """The queue, the workers and the outbox, read from the database at each scrape."""

    def collect(self) -> Iterator[Metric]:
        from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum

        from service.handin.models import Job
        from service.lti.models import ScoreToSend

        from .health import oldest_queued_age, workers_alive

        jobs = GaugeMetricFamily("gradewright_jobs", "Jobs in the queue's table, by state", labels=["state"])
        counts = dict(Job.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
        for state, _ in Job.STATES:
            jobs.add_metric([state], counts.get(state, 0))
        yield jobs
        yield GaugeMetricFamily("gradewright_queue_depth", "Jobs waiting for a worker", value=counts.get(Job.QUEUED, 0))
        yield GaugeMetricFamily(
            "gradewright_queue_oldest_job_age_seconds",
            "How long the oldest waiting job has waited",
            value=oldest_queued_age(),
        )
        yield GaugeMetricFamily("gradewright_workers_alive", "Grading workers seen alive", value=workers_alive())
        took = ExpressionWrapper(F("finished_at") - F("created_at"), output_field=DurationField())
        ended = Job.objects.filter(state__in=[Job.GRADED, Job.FAILED], finished_at__isnull=False).annotate(took=took)
        latency = HistogramMetricFamily(
            "gradewright_job_latency_seconds",
            "Seconds from a hand-in (kind hand-in) or a regrade's request (kind regrade) to the end of its grading, "
            "for every job that ended",
            labels=["kind"],
        )
        for kind, regrade in (("hand-in", False), ("regrade", True)):
            totals = ended.filter(regrade=regrade).aggregate(
                count=Count("id"),
                total=Sum("took"),
                **{f"le{b}": Count("id", filter=Q(took__lte=timedelta(seconds=b))) for b in JOB_BUCKETS},
            )
            total = totals["total"]
            latency.add_metric(
                [kind],
                buckets=[*((str(b), totals[f"le{b}"]) for b in JOB_BUCKETS), ("+Inf", totals["count"])],
                sum_value=total.total_seconds() if isinstance(total, timedelta) else float(total or 0) / 1e6,
            )
        yield latency
        outbox = GaugeMetricFamily(
            "gradewright_lti_outbox_scores", "Scores for the course platforms not sent, by state", labels=["state"]
        )
        waiting = dict(
            ScoreToSend.objects.exclude(state=ScoreToSend.SENT)
            .values_list("state")
            .annotate(n=Count("id"))
            .values_list("state", "n")
        )
        for state in (ScoreToSend.PENDING, ScoreToSend.FAILED):
            outbox.add_metric([state], waiting.get(state, 0))
        yield outbox


COURSE.register(SharedState())


def exposition(scope: str = "") -> bytes:
    """The metrics in Prometheus's text format: this process's and the course's (``scope`` empty),
    or one of them (``process``, ``course``); an unknown scope is both."""
    registries = [REGISTRY, COURSE] if scope not in SCOPES else [REGISTRY if scope == "process" else COURSE]
    return b"".join(generate_latest(registry) for registry in registries)
