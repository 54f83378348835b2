"""The one lease rule (gradebook.leases) and fair claiming, on SQLite and PostgreSQL: two workers,
one paused past its lease, the job graded once and no grade overwritten; a flood of 30 hand-ins from
one student beside an honest student's one, whose job is claimed next (tests/lease_scenario.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import nullcontext

import pytest

from .conftest import ROOT
from .postgres import fresh_database, needs_postgres


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def seen(request, tmp_path_factory) -> dict:
    state = tmp_path_factory.mktemp(f"leases-{request.param}")
    with fresh_database() if request.param == "postgres" else nullcontext() as url:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        ran = subprocess.run(
            [sys.executable, "-m", "tests.lease_scenario", str(state), *([url] if url else [])],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a process of its own, its database migrated (about 10 s)
@pytest.mark.timeout(300)
def test_a_worker_paused_past_its_lease_overwrites_no_grade(seen):
    paused = seen["paused"]
    assert paused["same_job"]  # B claimed the very job A had
    assert paused["lease_lost_heard"]  # A's lease thread heard renew()'s answer and stopped
    assert "finished without its lease" in paused["refused"]  # A's grade and job end: rolled back
    # Graded once, by B: one row, B's 10/10 kept, the job B's.
    assert paused["state"] == "graded" and paused["worker"] == "worker-b" and paused["job_submission_is_bs"]
    assert paused["rows"] == 1 and paused["score"] == paused["max_score"] == 10
    assert any("finished without its lease" in line for line in seen["logged"])
    assert any("its lease was lost" in line for line in seen["logged"])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_flood_of_hand_ins_keeps_no_one_else_waiting(seen):
    # The flood's first job, then the honest student's, then the flood again.
    assert seen["flood"]["claimed"] == ["flooder", "honest", "flooder"]
