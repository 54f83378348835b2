"""An exam taken online, placed in a platform's course by deep linking (a link with the custom
parameter ``exam`` and a line item of its own, resource id ``exam:NAME``), and each counted
attempt's score posted to that line item by Assignment and Grade Services when it ends, and again
when the staff grade the attempts (the open questions' marks counted), through the outbox of scores
to send (outbox.py), as an assignment's are: a platform that is slow or down never holds the attempt
or the page, and a score it refused is retried and listed on the Platforms page."""

from __future__ import annotations

import logging
import uuid

from course.exams.grade import StudentResult
from course.exams.variants import ExamKey
from gradebook.models import Student

from .scores import LINE_ITEM_TAG

logger = logging.getLogger("service.lti")
EXAM_PARAMETER = "exam"  # the custom parameter a placed exam link carries
EXAM_CHOICE = "exam:"  # the deep link page's value for an exam, and its line item's resource id


def resource_id(name: str) -> str:
    return f"{EXAM_CHOICE}{name}"


def exam_maximum(key: ExamKey) -> float:
    """An exam's points: one per question of a variant, as the paper path counts them."""
    return float(len(key.variants[0].questions))


def exam_resource(launch_url: str, name: str, key: ExamKey):
    """The deep link's content item for an exam, with its line item."""
    from pylti1p3.deep_link_resource import DeepLinkResource
    from pylti1p3.lineitem import LineItem

    return (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(key.title)
        .set_custom_params({EXAM_PARAMETER: name})
        .set_lineitem(
            LineItem()
            .set_label(key.title)
            .set_score_maximum(exam_maximum(key))
            .set_resource_id(resource_id(name))
            .set_tag(LINE_ITEM_TAG)
        )
    )


def remember_exam_line_item(lti_launch, name: str, key: ExamKey) -> None:
    """On a launch of an exam: the line item the platform bound to the launched link (made by deep
    linking) is the exam's column in that course from now on, as an assignment's is (scores.py's
    remember_line_item): an exam placed twice sends its score to the column the student launched."""
    from .scores import bind_line_item, resource_link_of

    bound = (lti_launch.ags_claim or {}).get("lineitem")
    if not bound:
        return
    bind_line_item(
        lti_launch.context,
        resource_id(name),
        bound,
        label=key.title,
        maximum_score=exam_maximum(key),
        resource_link=resource_link_of(lti_launch),
    )


def send_exam_score(name: str, student: Student, result: StudentResult) -> int:
    """Put the student's exam score in the outbox of scores to send (outbox.py), for every line item
    of the exam in a course they belong to, as queue_scores does for an assignment: sent by the
    workers' sender, with retries, never on the attempt's time. Returns how many line items get it."""
    from django.utils import timezone
    from lti_tool.models import LtiLineItem, LtiUser

    from ..models import ScoreToSend

    member = getattr(student, "member", None)
    if member is None or not LtiLineItem.objects.filter(resource_id=resource_id(name)).exists():
        return 0  # no platform has this exam, or the student never came from one
    awaiting = result.by_hand > len(result.marks)
    now, queued = timezone.now(), 0
    for lti_user in LtiUser.objects.filter(auth_user=member.user_id):
        items = LtiLineItem.objects.filter(
            resource_id=resource_id(name), context__members=lti_user, context__can_publish_scores=True
        ).distinct()
        for item in items:
            ScoreToSend.objects.update_or_create(
                lti_user=lti_user,
                line_item=item,
                defaults={
                    "student": student,
                    "assignment": resource_id(name),
                    "score_given": result.score,
                    "score_maximum": result.max_score,
                    "activity_progress": "Completed",
                    "grading_progress": "PendingManual" if awaiting else "FullyGraded",
                    "graded_at": now,
                    "revision": uuid.uuid4().hex,
                    "state": ScoreToSend.PENDING,
                    "attempts": 0,
                    "next_attempt_at": now,
                    "last_error": "",
                },
            )
            queued += 1
    return queued
