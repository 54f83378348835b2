"""Students' answers to lessons' check questions: each kept as given, with its result (practice:
counted in no score), at most ``PER_MINUTE`` a minute for a student however many arrive at once;
the last answer to each question, which the student reads on their return; and, for the staff, how
many students' last answers are right or wrong."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from course.wording import plural
from gradebook.models import STAFF_PREFIX, Student
from service.core.limits import full_until, hold, seconds_until
from service.errors import TooManyAnswers

from .models import LessonAnswer

PER_MINUTE = 20  # a student's answers a minute, over every lesson: a person answers far fewer
LONGEST = 500  # characters of a typed answer


def keep(student: Student, lesson: str, question: str, value: str, right: bool) -> LessonAnswer:
    """The answer kept, or TooManyAnswers when the student gave ``PER_MINUTE`` in the last minute.
    Counted and inserted while holding the student's row (service.core.limits.hold, as a hand-in's
    limits are), so answers sent at once are counted one after another."""
    with transaction.atomic():
        hold(student)
        now, minute = timezone.now(), timedelta(minutes=1)
        again = full_until(LessonAnswer.objects.filter(student=student, at__gt=now - minute), "at", PER_MINUTE, minute)
        if again is not None:
            wait = seconds_until(again, now)
            raise TooManyAnswers(
                f"{plural(PER_MINUTE, 'answer')} in a minute is the most the site takes: "
                f"try again in {plural(max(1, wait), 'second')}",
                wait,
            )
        return LessonAnswer.objects.create(
            student=student, lesson=lesson, question=question, value=value, right=right, at=now
        )


def _lasts(answers: QuerySet, *per: str) -> QuerySet:
    """The ids of the last of ``answers`` for each value of the fields ``per`` (the last given: ids
    grow as answers are kept), for an ``id__in``: one query with its caller's."""
    return answers.values(*per).annotate(last=Max("id")).values("last")


def last_answers(student: Student, lesson: str) -> dict[str, LessonAnswer]:
    """The student's last answer to each question of the lesson, by its key."""
    mine = LessonAnswer.objects.filter(student=student, lesson=lesson)
    return {answer.question: answer for answer in LessonAnswer.objects.filter(id__in=_lasts(mine, "question"))}


def answered(student: Student) -> dict[str, tuple[int, int]]:
    """For each lesson the student answered: (questions answered, of them right at the last answer)."""
    rows = LessonAnswer.objects.filter(
        id__in=_lasts(LessonAnswer.objects.filter(student=student), "lesson", "question")
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
    students = LessonAnswer.objects.filter(lesson=lesson).exclude(student__student_id__startswith=STAFF_PREFIX)
    counts = (
        LessonAnswer.objects.filter(id__in=_lasts(students, "student", "question"))
        .values("question")
        .annotate(rights=Count("id", filter=Q(right=True)), wrongs=Count("id", filter=Q(right=False)))
    )
    return {row["question"]: Counts(row["rights"], row["wrongs"]) for row in counts}
