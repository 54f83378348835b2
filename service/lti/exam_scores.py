"""An exam taken online, placed in a platform's course by deep linking (a link with the custom
parameter ``exam`` and a line item of its own, resource id ``exam:NAME``), and each counted
attempt's score posted to that line item by Assignment and Grade Services when it ends, and again
when the staff grade the attempts (the open questions' marks counted). Best effort, as scores.py's:
a platform that refuses is logged and never fails the attempt or the page."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from course.exams.grade import StudentResult
from course.exams.variants import ExamKey
from gradebook.models import Student

from .scores import LINE_ITEM_TAG, _service

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
        DeepLinkResource().set_url(launch_url).set_title(key.title).set_custom_params({EXAM_PARAMETER: name})
        .set_lineitem(LineItem().set_label(key.title).set_score_maximum(exam_maximum(key))
                      .set_resource_id(resource_id(name)).set_tag(LINE_ITEM_TAG))
    )  # fmt: skip


def remember_exam_line_item(lti_launch, name: str, key: ExamKey) -> None:
    """On a launch of an exam: the line item the platform bound to its link (made by deep linking)."""
    from lti_tool.models import LtiLineItem

    bound = (lti_launch.ags_claim or {}).get("lineitem")
    if not bound or LtiLineItem.objects.filter(context=lti_launch.context, resource_id=resource_id(name)).exists():
        return
    LtiLineItem.objects.update_or_create(
        url=bound,
        defaults={"context": lti_launch.context, "maximum_score": exam_maximum(key), "label": key.title,
                  "resource_id": resource_id(name), "tag": LINE_ITEM_TAG},
    )  # fmt: skip


def send_exam_score(name: str, student: Student, result: StudentResult) -> list[str]:
    """Post the student's exam score to every line item of the exam in a course they belong to."""
    from lti_tool.models import LtiLineItem, LtiUser
    from pylti1p3.exception import LtiException
    from pylti1p3.grade import Grade
    from pylti1p3.lineitem import LineItem
    from requests import RequestException

    if not LtiLineItem.objects.filter(resource_id=resource_id(name)).exists():
        return []  # no platform has this exam: no query more
    member = getattr(student, "member", None)
    if member is None:
        return []
    problems = []
    awaiting = result.by_hand > len(result.marks)
    for lti_user in LtiUser.objects.filter(auth_user=member.user_id):
        items = LtiLineItem.objects.filter(
            resource_id=resource_id(name), context__members=lti_user, context__can_publish_scores=True
        ).select_related("context__deployment__registration")
        for item in items:
            grade = (Grade().set_user_id(lti_user.sub).set_score_given(result.score)
                     .set_score_maximum(result.max_score).set_activity_progress("Completed")
                     .set_grading_progress("PendingManual" if awaiting else "FullyGraded")
                     .set_timestamp(datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")))  # fmt: skip
            try:
                _service(item.context, item.url).put_grade(grade, LineItem({"id": item.url}))
            except (LtiException, RequestException, ValueError) as exc:
                problem = f"{student.student_id}: the exam score could not be sent to {item.label} ({exc})"
                logger.warning(problem)
                problems.append(problem)
    return problems
