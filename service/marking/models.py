"""Review requests: a student's request that the staff look again at one question of a graded
submission, and its thread of messages (service/marking/reviews.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from service.handin.models import Job


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

    def __str__(self) -> str:
        return f"review of question {self.question_id} of hand-in {self.job_id}"


class ReviewMessage(models.Model):
    """One message of a review's thread, the student's or the staff's."""

    request = models.ForeignKey(ReviewRequest, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    by_staff = models.BooleanField(default=False)
    text = models.TextField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{'staff' if self.by_staff else 'student'} message {self.pk}"
