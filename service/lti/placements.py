"""Where each score goes: an assignment or an exam may be placed more than once in a platform's
course (two links, each with its own column), and each student's score goes to the column of the
placement they launched, per student, course and assignment or exam.

- A column is stored per placement (resource link): placing the assignment again at the same link
  (the column deleted and made again) moves that placement's column, and every score waiting for
  it and every student who launched it follows (``bind_line_item``).
- At each launch the student's placement is recorded (``record_placement``); the last launched wins.
- A student who never launched it from a course gets the course's first column (``columns_for``).
- A score goes to the outbox for each course's one column (``queue_score``); one still waiting for
  another column of the same course is withdrawn, so a student's score is never in two columns.
  A score the platform has already (sent, and not changed since) is not queued again."""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel

from gradebook.models import Student

LINE_ITEM_TAG = "gradewright"


class Score(BaseModel):
    """A student's current score on an assignment or an exam, as AGS sends it."""

    given: float
    maximum: float
    activity_progress: str
    grading_progress: str


def bind_line_item(context, resource_id: str, url: str, *, resource_link=None, **fields):
    """The column of ``resource_id`` placed at ``resource_link`` in ``context`` (None: placed by the
    tool, with no link) is now at ``url``: the stored row moves there (the scores waiting for the
    old column and the students who launched it follow), or one is made. Returns it."""
    from lti_tool.models import LtiLineItem

    from .models import ScorePlacement, ScoreToSend

    with transaction.atomic():
        placed = LtiLineItem.objects.filter(context=context, resource_id=resource_id)
        at_link = placed.filter(resource_link=resource_link) if resource_link else placed.filter(resource_link=None)
        stored = list(at_link.order_by("id"))
        keep = next((item for item in stored if item.url == url), None)
        keep = keep or LtiLineItem.objects.filter(url=url).first() or (stored[0] if stored else None)
        if keep is None:
            keep = LtiLineItem(context=context, url=url, maximum_score=0.0)
        keep.url, keep.context, keep.resource_id, keep.tag = url, context, resource_id, LINE_ITEM_TAG
        if resource_link is not None:
            keep.resource_link = resource_link
        for name, value in fields.items():
            if value is not None:
                setattr(keep, name, value)
        keep.save()
        for item in stored:
            if item.pk == keep.pk:
                continue
            for row in ScoreToSend.objects.filter(line_item=item):  # to the column that stays; the newer wins
                there = ScoreToSend.objects.filter(line_item=keep, lti_user_id=row.lti_user_id).first()
                if there is not None and there.graded_at >= row.graded_at:
                    continue
                if there is not None:
                    there.delete()
                ScoreToSend.objects.filter(pk=row.pk).update(line_item=keep)
            ScorePlacement.objects.filter(line_item=item).update(line_item=keep)
            item.delete()
    return keep


def record_placement(lti_launch, line_item) -> None:
    """On a launch: the launching user's scores on the line item's assignment or exam, in its
    course, go to this column from now on."""
    from .models import ScorePlacement

    ScorePlacement.objects.update_or_create(
        lti_user=lti_launch.user,
        context=line_item.context,
        resource_id=line_item.resource_id,
        defaults={"line_item": line_item, "launched_at": timezone.now()},
    )


def columns_for(lti_user, resource_id: str) -> list:
    """The one column per platform course of ``lti_user`` (a member, scores allowed) that their
    score on ``resource_id`` goes to: the placement they launched last, else the course's first."""
    from lti_tool.models import LtiLineItem

    from .models import ScorePlacement

    items = LtiLineItem.objects.filter(
        resource_id=resource_id, context__members=lti_user, context__can_publish_scores=True
    ).distinct()
    launched = dict(
        ScorePlacement.objects.filter(lti_user=lti_user, resource_id=resource_id).values_list(
            "context_id", "line_item_id"
        )
    )
    by_course: dict[int, list] = {}
    for item in items.order_by("id"):
        by_course.setdefault(item.context_id, []).append(item)
    return [
        next((item for item in course if item.pk == launched.get(context)), course[0])
        for context, course in by_course.items()
    ]


def queue_score(student: Student, resource_id: str, score: Score, again: bool = False) -> int:
    """Put ``score`` in the outbox for the student's column of ``resource_id`` in each platform
    course they belong to (``columns_for``); a score of theirs still waiting there is replaced (the
    newer wins: one POST, not one per grade), and one waiting for another column of the same
    course is withdrawn. The same numbers as the score waiting, or (unless ``again``) as the one
    the platform has already, queue nothing: a regrade that changes nothing posts nothing. Call it
    inside the transaction that changed the score. Returns how many columns get it."""
    from lti_tool.models import LtiLineItem, LtiUser

    from .models import ScoreToSend

    member = getattr(student, "member", None)
    if member is None or not LtiLineItem.objects.filter(resource_id=resource_id).exists():
        return 0  # no platform has it, or the student never came from one
    now, queued = timezone.now(), 0
    for lti_user in LtiUser.objects.filter(auth_user=member.user_id):
        for item in columns_for(lti_user, resource_id):
            elsewhere = ScoreToSend.objects.filter(
                lti_user=lti_user, assignment=resource_id, line_item__context=item.context_id
            )
            elsewhere.exclude(line_item=item).exclude(state=ScoreToSend.SENT).delete()
            queued += 1
            there = ScoreToSend.objects.filter(lti_user=lti_user, line_item=item).first()
            if there is not None and _same(there, score):
                if there.state == ScoreToSend.PENDING or (there.state == ScoreToSend.SENT and not again):
                    continue  # waiting to be sent, or the platform has it: not posted twice
            ScoreToSend.objects.update_or_create(
                lti_user=lti_user,
                line_item=item,
                defaults={
                    "student": student,
                    "assignment": resource_id,
                    "score_given": score.given,
                    "score_maximum": score.maximum,
                    "activity_progress": score.activity_progress,
                    "grading_progress": score.grading_progress,
                    "graded_at": now,
                    "revision": uuid.uuid4().hex,
                    "state": ScoreToSend.PENDING,
                    "attempts": 0,
                    "next_attempt_at": now,
                    "last_error": "",
                    "unconfirmed": False,
                },
            )
    return queued


def _same(row, score: Score) -> bool:
    return (row.score_given, row.score_maximum, row.activity_progress, row.grading_progress) == (
        score.given,
        score.maximum,
        score.activity_progress,
        score.grading_progress,
    )
