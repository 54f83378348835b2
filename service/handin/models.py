"""The queue of hand-ins to grade (service/handin/queue.py claims and ends its jobs), the students' runs
of their practice checks (service/handin/practice.py), and the assignments the instructor closed to
hand-ins."""

from __future__ import annotations

from django.db import models

from gradebook.models import Student, Submission


class Job(models.Model):
    """A hand-in waiting for, in, or past grading."""

    QUEUED, GRADING, GRADED, FAILED = "queued", "grading", "graded", "failed"
    STATES = [(QUEUED, "queued"), (GRADING, "grading"), (GRADED, "graded"), (FAILED, "failed")]

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="jobs")
    assignment = models.CharField(max_length=200)
    file = models.CharField(max_length=500)  # where the upload is stored, under the state folder
    original_name = models.CharField(max_length=300)
    size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    state = models.CharField(max_length=20, choices=STATES, default=QUEUED, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)  # queued: the hand-in kept and its job made
    # Where a student's wait goes (README "The grading service", docs/benchmarks.md): the request's
    # arrival, the claim by a worker, the start of the grading itself, its end, and the first time
    # the page or the API showed the finished job to its student. For the staff only.
    received_at = models.DateTimeField(null=True)
    claimed_at = models.DateTimeField(null=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)
    shown_at = models.DateTimeField(null=True)
    # What the worker that claimed the job was woken by (service/handin/wakeup.py): "notification"
    # (PostgreSQL's NOTIFY), "change" (SQLite's data version), "poll" (its slow fallback look), or
    # "" when it looked at the queue straight after its previous job.
    woken_by = models.CharField(max_length=20, blank=True)
    worker = models.CharField(max_length=200, blank=True)  # the lease's owner
    lease_expires_at = models.DateTimeField(null=True)  # renewed while grading; past it, the job is free again
    lease = models.CharField(max_length=32, blank=True)  # the claim's token (gradebook.leases): its end needs it
    attempts = models.PositiveIntegerField(default=0)
    regrade = models.BooleanField(default=False)  # grade again even a file graded before (the staff asked)
    question = models.CharField(max_length=200, blank=True)  # a regrade of this question alone
    error = models.TextField(blank=True)  # the grader's own failure, for the instructor
    submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, related_name="jobs")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.assignment}: hand-in {self.pk} by {self.student}"


class PracticeJob(models.Model):
    """A student's run of an assignment's practice checks (autograder.practice): queued by the page or
    the API, run by a worker in the sandbox, its result kept for its student alone. Never a hand-in:
    it counts in no score and in none of the submission limits."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(QUEUED, "queued"), (RUNNING, "running"), (DONE, "done"), (FAILED, "failed")]

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="practice_jobs")
    assignment = models.CharField(max_length=200)
    # The notebook run, under the state folder: a hand-in's stored upload, or one sent for this run
    # alone (under practice/, removed once run). ``handed_in``: the hand-in it is, if one.
    file = models.CharField(max_length=500)
    original_name = models.CharField(max_length=300)
    sha256 = models.CharField(max_length=64)
    handed_in = models.ForeignKey(Job, on_delete=models.SET_NULL, null=True, related_name="practice_jobs")
    question = models.CharField(max_length=200, blank=True)  # one question's practice checks, or all
    state = models.CharField(max_length=20, choices=STATES, default=QUEUED, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True)
    worker = models.CharField(max_length=200, blank=True)
    lease = models.CharField(max_length=32, blank=True)  # the claim's token (gradebook.leases)
    lease_expires_at = models.DateTimeField(null=True)
    attempts = models.PositiveIntegerField(default=0)
    # autograder.practice.PracticeRun as JSON: each check's question, sentence and pass or fail, and
    # why none ran; nothing of a check's code, inputs or messages is ever in it.
    result = models.JSONField(null=True)
    error = models.TextField(blank=True)  # the grader's own failure, for the logs: never shown to the student

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["student", "assignment", "created_at"])]

    def __str__(self) -> str:
        return f"{self.assignment}: practice run {self.pk} by {self.student}"


class ClosedAssignment(models.Model):
    """An assignment the instructor closed to hand-ins (the page's button): students' uploads are
    refused, by the page and the API alike, until it is opened again."""

    name = models.CharField(max_length=200, unique=True)
    closed_at = models.DateTimeField(auto_now_add=True)
    closed_by = models.CharField(max_length=150, blank=True)

    def __str__(self) -> str:
        return f"{self.name}, closed"
