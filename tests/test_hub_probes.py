"""A hub's site behind HTTPS (issue #54): its probes and /metrics, under the hub's prefix, answer over
plain HTTP as docs/operators/observability.md says, and every other page still goes to https."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.usefixtures("empty_queue")

# The site's real WSGI application (service.server.application: the hub's prefix taken off first), asked
# over plain HTTP, as the orchestrator's probe and Prometheus ask from inside.
ASK = """
import io, json, sys
from pathlib import Path
from wsgiref.util import setup_testing_defaults
from service.settings import configure
configure(Path(sys.argv[1]), database_url=sys.argv[2], state=Path(sys.argv[3]))
from service.server import application
app, answers = application(), {}
for path in sys.argv[4:]:
    environ = {"PATH_INFO": path, "HTTP_HOST": "hub.example.edu", "wsgi.input": io.BytesIO()}
    setup_testing_defaults(environ)
    said = []
    body = b"".join(app(environ, lambda status, headers, *rest: said.append((status, dict(headers)))))
    status, headers = said[0]
    answers[path] = [int(status.split()[0]), headers.get("Location", "")]
print(json.dumps(answers))
"""
PREFIX = "/services/gradewright"


def test_the_probes_answer_over_plain_http_under_the_hubs_prefix(tmp_path):
    from django.conf import settings  # the tests' own database, migrated already

    prefix = PREFIX
    hub = {
        "JUPYTERHUB_API_URL": "http://127.0.0.1:1/hub/api",
        "JUPYTERHUB_CLIENT_ID": "service-gradewright",
        "JUPYTERHUB_API_TOKEN": "a-token",
        "JUPYTERHUB_SERVICE_PREFIX": f"{PREFIX}/",
    }
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTERHUB_")}
    env.update(GRADEWRIGHT_HTTPS="1", GRADEWRIGHT_ALLOWED_HOSTS="hub.example.edu", GRADEWRIGHT_METRICS="open")
    env.update(hub)
    paths = [f"{prefix}/{name}" for name in ("healthz", "readyz", "metrics", "assignments/", "staff/healthz")]
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            ASK,
            str(ROOT),
            f"sqlite:///{settings.DATABASES['default']['NAME']}",
            str(tmp_path),
            *paths,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    answers = json.loads(completed.stdout.splitlines()[-1])
    assert answers[f"{prefix}/healthz"][0] == 200
    assert (
        answers[f"{prefix}/readyz"][0] == 200
    )  # ready (the site serves; no worker here, said in its facts), over HTTP
    assert answers[f"{prefix}/metrics"][0] == 200
    # Any other page, over plain HTTP, goes to https as before, under the prefix.
    for page in ("assignments/", "staff/healthz"):
        status, location = answers[f"{prefix}/{page}"]
        assert status == 301 and location == f"https://hub.example.edu{prefix}/{page}"


def test_the_exemption_follows_the_prefix_and_only_the_probes():
    from service.settings import _behind_https

    for prefix, under in (("", ""), (PREFIX, PREFIX.lstrip("/") + "/"), ("/a.b/", "a.b/")):
        (pattern,) = _behind_https(prefix)["SECURE_REDIRECT_EXEMPT"]
        for name in ("healthz", "readyz", "metrics"):
            assert re.search(pattern, under + name)
        for other in ("assignments/", "staff/healthz", f"x{under}healthz", "axb/healthz"):
            assert not re.search(pattern, other)
