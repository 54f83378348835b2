"""Students' answers to lessons' check questions: each kept as given, with its result (practice:
counted in no score), at most ``PER_MINUTE`` a minute for a student however many arrive at once;
the last answer to each question, which the student reads on their return; and, for the staff, how
many students' last answers are right or wrong."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from course.wording import plural
from gradebook.models import STAFF_PREFIX, Student
from service.errors import TooManyAnswers

from .models import LessonAnswer

PER_MINUTE = 20  # a student's answers a minute, over every lesson: a person answers far fewer
LONGEST = 500  # characters of a typed answer


def keep(student: Student, lesson: str, question: str, value: str, right: bool) -> LessonAnswer:
    """The answer kept, or TooManyAnswers when the student gave ``PER_MINUTE`` in the last minute.
    Counted and inserted while holding the student's row (on SQLite, the write lock every transaction
    of the service takes at its start), so answers sent at once are counted one after another."""
    with transaction.atomic():
        Student.objects.select_for_update(no_key=connection.features.has_select_for_no_key_update).filter(
            pk=student.pk
        ).exists()
        now = timezone.now()
        recent = list(
            LessonAnswer.objects.filter(student=student, at__gt=now - timedelta(minutes=1))
            .order_by("at")
            .values_list("at", flat=True)[:PER_MINUTE]
        )
        if len(recent) >= PER_MINUTE:
            wait = math.ceil((recent[0] + timedelta(minutes=1) - now).total_seconds())
            raise TooManyAnswers(
                f"{plural(PER_MINUTE, 'answer')} in a minute is the most the site takes: "
                f"try again in {plural(max(1, wait), 'second')}",
                wait,
            )
        return LessonAnswer.objects.create(
            student=student, lesson=lesson, question=question, value=value, right=right, at=now
        )


def last_answers(student: Student, lesson: str) -> dict[str, LessonAnswer]:
    """The student's last answer to each question of the lesson, by its key."""
    last: dict[str, LessonAnswer] = {}
    for answer in LessonAnswer.objects.filter(student=student, lesson=lesson).order_by("id"):
        last[answer.question] = answer
    return last


def answered(student: Student) -> dict[str, tuple[int, int]]:
    """For each lesson the student answered: (questions answered, of them right at the last answer)."""
    rows = LessonAnswer.objects.filter(
        id__in=LessonAnswer.objects.filter(student=student)
        .values("lesson", "question")
        .annotate(last=Max("id"))
        .values("last")
    )
    counts = rows.values("lesson").annotate(answers=Count("id"), rights=Count("id", filter=Q(right=True)))
    return {row["lesson"]: (row["answers"], row["rights"]) for row in counts}


@dataclass(frozen=True)
class Counts:
    right: int
    wrong: int


def class_counts(lesson: str) -> dict[str, Counts]:
    """For each question of the lesson: how many students' last answers are right, and wrong (the
    staff's own tries left out)."""
    last = (
        LessonAnswer.objects.filter(lesson=lesson)
        .exclude(student__student_id__startswith=STAFF_PREFIX)
        .values("student", "question")
        .annotate(last=Max("id"))
        .values("last")
    )
    counts = (
        LessonAnswer.objects.filter(id__in=last)
        .values("question")
        .annotate(rights=Count("id", filter=Q(right=True)), wrongs=Count("id", filter=Q(right=False)))
    )
    return {row["question"]: Counts(row["rights"], row["wrongs"]) for row in counts}
