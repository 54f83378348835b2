"""Prometheus metrics (prometheus_client), one registry, served at ``/metrics`` to whom the operator
lets read them (``GRADEWRIGHT_METRICS``: off, staff or open; autograder/environment.py).

What this process sees, counted as it happens: the requests it answered by view and status, and the
exam answers it saved. What every process shares, read from the database at each scrape, so that any
of the site's processes reports the same (workers on other machines included): the jobs by state and
the time from hand-in to the end of grading, the queue's depth and its oldest job's age, the workers
alive, the LTI outbox's pending and failed scores. Labels take bounded values only: a view's name, a
status code, a state, never a student or a path."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

REGISTRY = CollectorRegistry()
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

        from .health import oldest_queued_age, workers_alive
        from .models import Job, ScoreToSend

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
        totals = ended.aggregate(
            count=Count("id"),
            total=Sum("took"),
            **{f"le{b}": Count("id", filter=Q(took__lte=timedelta(seconds=b))) for b in JOB_BUCKETS},
        )
        total = totals["total"]
        yield HistogramMetricFamily(
            "gradewright_job_latency_seconds",
            "Seconds from a hand-in to the end of its grading, for every job that ended",
            buckets=[*((str(b), totals[f"le{b}"]) for b in JOB_BUCKETS), ("+Inf", totals["count"])],
            sum_value=total.total_seconds() if isinstance(total, timedelta) else float(total or 0) / 1e6,
        )
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


REGISTRY.register(SharedState())
