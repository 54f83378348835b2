"""The service's own tables: who an account is in the course, API tokens, one-time sign-in links,
and the queue of hand-ins to grade. Grades themselves live in the gradebook's tables."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models

from gradebook.models import Student, Submission


def digest(secret: str) -> str:
    """What is stored of a token or link: its SHA-256, never the secret itself."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Member(models.Model):
    INSTRUCTOR, TA, STUDENT = "instructor", "ta", "student"
    ROLES = [(INSTRUCTOR, "Instructor"), (TA, "Teaching assistant"), (STUDENT, "Student")]

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="member")
    role = models.CharField(max_length=20, choices=ROLES, default=STUDENT)
    # A student's row in the gradebook: what they hand in is filed under it.
    student = models.OneToOneField(Student, on_delete=models.SET_NULL, null=True, blank=True, related_name="member")

    @property
    def is_staff_member(self) -> bool:
        return self.role in {self.INSTRUCTOR, self.TA}


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True)

    @classmethod
    def issue(cls, user) -> str:
        """A new token for ``user``: returned once, stored only as its digest."""
        secret = secrets.token_urlsafe(32)
        cls.objects.create(user=user, digest=digest(secret))
        return secret


class SignInLink(models.Model):
    """A one-time link with which a student sets their password."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_links")
    digest = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True)


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
    # What the worker that claimed the job was woken by (service/wakeup.py): "notification"
    # (PostgreSQL's NOTIFY), "change" (SQLite's data version), "poll" (its slow fallback look), or
    # "" when it looked at the queue straight after its previous job.
    woken_by = models.CharField(max_length=20, blank=True)
    worker = models.CharField(max_length=200, blank=True)  # the lease's owner
    lease_expires_at = models.DateTimeField(null=True)  # renewed while grading; past it, the job is free again
    attempts = models.PositiveIntegerField(default=0)
    regrade = models.BooleanField(default=False)  # grade again even a file graded before (the staff asked)
    question = models.CharField(max_length=200, blank=True)  # a regrade of this question alone
    error = models.TextField(blank=True)  # the grader's own failure, for the instructor
    submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, related_name="jobs")

    class Meta:
        ordering = ["id"]


class ReviewRequest(models.Model):
    """A student's request that the staff look again at one question of a graded submission."""

    OPEN, ANSWERED = "open", "answered"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="reviews")
    question_id = models.CharField(max_length=200)
    state = models.CharField(max_length=20, default=OPEN, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        # One thread per question of a submission, however many requests arrive at once: the
        # database refuses a second, and get_or_create then reads the first.
        constraints = [models.UniqueConstraint(fields=["job", "question_id"], name="one_review_per_question")]


class ReviewMessage(models.Model):
    """One message of a review's thread, the student's or the staff's."""

    request = models.ForeignKey(ReviewRequest, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    by_staff = models.BooleanField(default=False)
    text = models.TextField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class UsedLaunch(models.Model):
    """A platform's launch (its id_token's nonce), kept once used: the same token presented again
    is a replay, refused."""

    issuer = models.CharField(max_length=255)
    nonce = models.CharField(max_length=255)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "nonce"], name="one_use_per_launch")]


class ClosedAssignment(models.Model):
    """An assignment the instructor closed to hand-ins (the page's button): students' uploads are
    refused, by the page and the API alike, until it is opened again."""

    name = models.CharField(max_length=200, unique=True)
    closed_at = models.DateTimeField(auto_now_add=True)
    closed_by = models.CharField(max_length=150, blank=True)


# Models of this app kept in modules of their own, registered with the app here: exams taken online
# (service/exam_models.py) and the outbox of LTI scores (service/lti/models.py).
from .exam_models import ExamAccommodation, ExamAnswer, ExamAttempt, ExamLogEntry, OnlineExam  # noqa: E402, F401
from .lti.models import ScoreToSend  # noqa: E402, F401
