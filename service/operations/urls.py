"""The addresses of the probes of the operator's proxy, orchestrator and Prometheus:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path

from . import probes

urlpatterns = [
    # For the operator's proxy, orchestrator and Prometheus (service/operations/probes.py).
    path("healthz", probes.healthz, name="healthz"),
    path("readyz", probes.readyz, name="readyz"),
    path("metrics", probes.metrics, name="metrics"),
]
