"""Restores that keep every grade (issue #37): a site's state folder graded, backed up with the real
command, restored at another path and regraded there (tests/restore_scenario.py): the uploads are
found (kept relative to the state folder), the restored gradebook is its owner's only, and an upload
that cannot be read fails its regrade with the reason and replaces no grade. Jobs kept before with
absolute paths are rewritten by a migration."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from .conftest import ROOT, needs_sandbox


def _run(*args: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran.stdout


@needs_sandbox
@pytest.mark.slow  # three processes, one grading and two regrades in the real sandbox (about 30 s)
@pytest.mark.timeout(600)
def test_a_state_folder_restored_at_another_path_regrades_and_loses_no_grade(tmp_path):
    first, second, archive = tmp_path / "first" / "state", tmp_path / "elsewhere" / "state", tmp_path / "b.tar.gz"
    first.mkdir(parents=True)
    graded = json.loads(_run("tests.restore_scenario", "grade", str(first)).splitlines()[-1])
    assert graded["state"] == "graded" and graded["score"] == 10
    assert not graded["file"].startswith("/")  # kept relative to the state folder
    _run("autograder", "gradebook", "backup", str(archive), "--state", str(first))
    _run("autograder", "gradebook", "restore", str(archive), "--state", str(second))
    seen = json.loads(_run("tests.restore_scenario", "regrade", str(second)).splitlines()[-1])
    assert seen["mode"] == "0o600"  # password hashes, LTI keys and grades: the owner's only
    assert seen["regraded"] == {"state": "graded", "error": "", "score": 10.0}  # found at its new path
    lost = seen["lost"]
    assert lost["state"] == "failed" and lost["attempts"] == 1  # failed at once: trying again would not help
    assert "cannot be read" in lost["error"] and graded["file"] in lost["error"]
    assert lost["score"] == 10.0 and seen["graded_jobs"] == 2  # the grade stands


def test_the_migration_makes_old_absolute_upload_paths_relative():
    from django.apps import apps

    from gradebook.models import Student
    from service.handin.models import Job

    migration = importlib.import_module("service.migrations.0016_uploads_relative_to_state")
    row = Student.objects.get_or_create(student_id="before-relative-paths")[0]
    made = {
        "/srv/course/.gradewright/uploads/a1/0f3c/submission.py": "uploads/a1/0f3c/submission.py",
        "/elsewhere/submission.py": "/elsewhere/submission.py",  # not the service's: left as it is
        "uploads/a1/9e2d/a1.ipynb": "uploads/a1/9e2d/a1.ipynb",
    }
    jobs = {
        old: Job.objects.create(
            student=row, assignment="a1", file=old, original_name="x", size=1, sha256="0", state=Job.GRADED
        )
        for old in made
    }
    migration.forwards(apps, None)
    assert {old: Job.objects.get(id=job.id).file for old, job in jobs.items()} == made
