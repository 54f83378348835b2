"""A student's answers to lessons' check questions on the site (practice, counted in no score): every
answer kept as it was given, with its result; the last one of a question is what the student reads
on their return."""

from __future__ import annotations

from django.db import models

from gradebook.models import Student


class LessonAnswer(models.Model):
    """One answer to one check question of a lesson: the letter chosen, or the text typed."""

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="lesson_answers")
    lesson = models.CharField(max_length=200)  # the lesson's slug
    question = models.CharField(max_length=300)  # questions.Question.key: <slug>-check-<n>, <slug>-<id>
    value = models.TextField()
    right = models.BooleanField()  # as judged when it was given
    at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["student", "lesson"], name="lesson_answers_of_student"),
            models.Index(fields=["student", "at"], name="lesson_answers_by_time"),  # the limit a minute
            models.Index(fields=["lesson", "question"], name="lesson_answers_of_question"),  # the staff's counts
        ]

    def __str__(self) -> str:
        return f"answer to {self.question}"
