"""The metrics' shape: no ``_created`` series, the version and the process's own metrics, hand-ins and
regrades apart in the latency histogram, and the series read from the database in the course's scope
alone, so that a sum over the site's processes (each scraped with ``scope=process``) counts nothing twice."""

from __future__ import annotations

import re

from autograder.version import grader_version
from service.operations.metrics import EXAM_SAVES, exposition


def names(text: str) -> set[str]:
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_each_scope_has_its_own_series_and_none_is_created():
    EXAM_SAVES.labels("saved").inc()  # a counter with a sample, which prometheus_client would give a _created
    process, course, both = exposition("process").decode(), exposition("course").decode(), exposition().decode()
    assert not [name for name in names(both) if name.endswith("_created")]
    assert f'gradewright_build_info{{version="{grader_version()}"}} 1.0' in process
    assert {"process_resident_memory_bytes", "process_cpu_seconds_total", "python_info"} <= names(process)
    assert "gradewright_exam_saves_total" in names(process)
    shared = {
        "gradewright_jobs",
        "gradewright_queue_depth",
        "gradewright_workers_alive",
        "gradewright_lti_outbox_scores",
    }
    assert shared <= names(course) and not shared & names(process)
    assert not names(course) & {"gradewright_build_info", "gradewright_exam_saves_total", "process_cpu_seconds_total"}
    assert names(both) == names(process) | names(course)
    kinds = set(re.findall(r'^gradewright_job_latency_seconds_count\{kind="([^"]+)"\}', course, re.M))
    assert kinds == {"hand-in", "regrade"}
