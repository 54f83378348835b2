"""The outbox of scores for the course platforms: a row per LTI user and line item, written in the
transaction that records the grade (or the mark) it comes from, and sent later, outside grading,
by ``service.lti.outbox``. One row per pair: a newer score replaces the one still waiting."""

from __future__ import annotations

from django.db import models

from gradebook.models import Student


class ScoreToSend(models.Model):
    PENDING, SENT, FAILED = "pending", "sent", "failed"
    STATES = [(PENDING, "pending"), (SENT, "sent"), (FAILED, "failed")]

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="scores_to_send")
    lti_user = models.ForeignKey("lti_tool.LtiUser", on_delete=models.CASCADE, related_name="+")
    # The column's row: when the platform's column moves (the assignment placed again), its URL is
    # updated there, and every score waiting for it follows.
    line_item = models.ForeignKey("lti_tool.LtiLineItem", on_delete=models.CASCADE, related_name="+")
    assignment = models.CharField(max_length=200)
    score_given = models.FloatField()
    score_maximum = models.FloatField()
    activity_progress = models.CharField(max_length=30)
    grading_progress = models.CharField(max_length=30)
    # The AGS timestamp: when the grade was recorded, not when it is sent, so that a late retry
    # never replaces a newer score at the platform (platforms keep the newest timestamp's).
    graded_at = models.DateTimeField()
    # Changed with every new score: the sender marks a row sent only if it sent this revision.
    revision = models.CharField(max_length=32)
    state = models.CharField(max_length=10, choices=STATES, default=PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(db_index=True)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True)
    # The claim's token (gradebook.leases); the claim lasts until next_attempt_at.
    lease = models.CharField(max_length=32, blank=True)

    class Meta:
        app_label = "service"
        constraints = [
            models.UniqueConstraint(fields=["lti_user", "line_item"], name="one_score_per_user_and_line_item")
        ]

    def __str__(self) -> str:
        return f"{self.student} on {self.assignment}: score to send ({self.state})"
