"""Grading jobs that kill the Dask worker running them, for the fault tests. Workers import this
module by name, so it lives in the tests package rather than in a test file's body."""

from __future__ import annotations

import os
from pathlib import Path

from autograder.batch import grade_job


def dies_once(submission: dict, *args) -> dict:
    """Kills its worker the first time it runs for a submission; grades on the retry."""
    marker = Path(submission["path"]).with_suffix(".died")
    if not marker.exists():
        marker.write_text("this job killed its worker once\n")
        os._exit(1)
    return grade_job(submission, *args)


def poison_for(student: str):
    return _Poison(student)


class _Poison:
    """Kills every worker it lands on when grading ``student``; grades everyone else."""

    def __init__(self, student: str):
        self.student = student

    def __call__(self, submission: dict, *args) -> dict:
        if submission["student"] == self.student:
            os._exit(1)
        return grade_job(submission, *args)
