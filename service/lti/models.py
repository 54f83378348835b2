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
    # The last attempt was posted and never answered (a read timeout): the platform may hold it
    # already, so the next attempt reads the platform's result first and posts only if it differs.
    unconfirmed = models.BooleanField(default=False)
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


class ScorePlacement(models.Model):
    """Where a student launched an assignment or an exam from, in one platform course: the column
    (line item) of the placement (resource link) they launched last. An assignment placed twice in
    a course (two links, two columns) sends each student's score to their own placement's column;
    a student who never launched it gets the course's first column."""

    lti_user = models.ForeignKey("lti_tool.LtiUser", on_delete=models.CASCADE, related_name="+")
    context = models.ForeignKey("lti_tool.LtiContext", on_delete=models.CASCADE, related_name="+")
    # The assignment's name, or "exam:NAME" for an exam (the line item's resource id).
    resource_id = models.CharField(max_length=255)
    # A column that is gone from the tool's records takes its placements with it: the student's
    # score then goes to the course's first column, until they launch again.
    line_item = models.ForeignKey("lti_tool.LtiLineItem", on_delete=models.CASCADE, related_name="+")
    launched_at = models.DateTimeField()

    class Meta:
        app_label = "service"
        constraints = [
            models.UniqueConstraint(
                fields=["lti_user", "context", "resource_id"], name="one_placement_per_user_and_resource"
            )
        ]

    def __str__(self) -> str:
        return f"{self.lti_user} launched {self.resource_id} from {self.line_item}"
