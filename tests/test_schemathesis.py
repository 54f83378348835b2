"""The API against its own description: schemathesis (every phase: examples, coverage, fuzzing,
stateful; every check, from not_a_server_error to status, content type, schema and Allow header
conformance) drives the real `autograder serve` from service/handin/openapi.json, signed in with a
student's token, and finds no failure of any class. Bounded: a few examples an operation, a fixed
seed (a failure is reproduced with the same command), well under a minute on two busy cores."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import httpx
import pytest

from .conftest import ROOT
from .served import commands_env, course_copy, serve

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
OPENAPI = ROOT / "service" / "handin" / "openapi.json"
MAX_EXAMPLES = 5
SEED = 20261201


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """`autograder serve` (no grading worker: hand-ins stay queued) on a copy of the shipped course:
    (its address, the demo student's password)."""
    home = tmp_path_factory.mktemp("schemathesis-service")
    with serve(course_copy(home), commands_env(home), home / "serve.log", workers=0) as site:
        assert "student" in site.passwords, site.log.read_text()
        yield site.url, site.passwords["student"]


def test_schemathesis_finds_no_failure_against_the_running_service(service, tmp_path):
    url, password = service
    answer = httpx.post(f"{url}/api/v1/token", data={"username": "student", "password": password}, timeout=60)
    assert answer.status_code == 201, answer.text
    token = answer.json()["token"]
    report = tmp_path / "junit.xml"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            str(OPENAPI),
            "--url",
            f"{url}/api/v1",
            "--header",
            f"Authorization: Token {token}",
            "--checks",
            "all",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            str(SEED),
            "--workers",
            "1",
            "--request-timeout",
            "60",
            # Health checks judge the generator's speed on this machine, not the service.
            "--suppress-health-check",
            "all",
            "--no-color",
            "--report",
            "junit",
            "--report-junit-path",
            str(report),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=540,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    cases = list(ElementTree.parse(report).getroot().iter("testcase"))
    # Every operation of the description was driven (so a pass is not one over nothing), and none failed.
    assert {case.get("name") for case in cases} >= {
        "POST /token",
        "GET /assignments",
        "GET /assignments/{name}/grades",
        "GET /submissions",
        "POST /submissions",
        "GET /submissions/{id}",
    }, output[-3000:]
    assert not [case for case in cases if case.find("failure") is not None or case.find("error") is not None]


def test_the_description_says_which_files_a_submission_accepts():
    import json

    from service.handin.uploads import SUFFIXES
    from service.settings import MAX_UPLOAD_BYTES

    submit = json.loads(OPENAPI.read_text())["paths"]["/submissions"]["post"]
    text = (
        submit["description"]
        + submit["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]["file"]["description"]
    )
    assert all(suffix in text for suffix in SUFFIXES) and f"{MAX_UPLOAD_BYTES:,}" in submit["description"]
    assert {"400", "401", "403", "404", "413", "429"} <= set(submit["responses"])
