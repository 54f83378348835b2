"""An exam taken online, placed in a platform's course by deep linking (a link with the custom
parameter ``exam`` and a line item of its own, resource id ``exam:NAME``), and each counted
attempt's score posted to that line item by Assignment and Grade Services when it ends, and again
when the staff grade the attempts (the open questions' marks counted), through the outbox of scores
to send (outbox.py), as an assignment's are: a platform that is slow or down never holds the attempt
or the page, and a score it refused is retried and listed on the Platforms page."""

from __future__ import annotations

import logging

from course.exams.grade import StudentResult
from course.exams.variants import ExamKey
from gradebook.models import Student
from service.lti.placements import LINE_ITEM_TAG

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
    linking) is that placement's column in that course from now on, as an assignment's is
    (scores.py's remember_line_item), and the launching student's score goes to it: an exam placed
    twice sends each student's score to the column they launched."""
    from service.lti.placements import bind_line_item, record_placement
    from service.lti.scores import resource_link_of

    bound = (lti_launch.ags_claim or {}).get("lineitem")
    if not bound:
        return
    item = bind_line_item(
        lti_launch.context,
        resource_id(name),
        bound,
        resource_link=resource_link_of(lti_launch),
        label=key.title,
        maximum_score=exam_maximum(key),
    )
    record_placement(lti_launch, item)


def send_exam_score(name: str, student: Student, result: StudentResult, shown: bool = True) -> int:
    """Put the student's exam score in the outbox of scores to send (outbox.py), for their column
    of the exam in each course they belong to (placements.queue_score), as queue_scores does for an
    assignment: sent by the workers' sender, with retries, never on the attempt's time. Not yet
    ``shown`` to the student, every question of it (sessions.ResultsRule.all_visible), the platform is
    told Submitted and Pending with no score, as an assignment's unpublished grade is
    (service/lti/scores.py). Returns how many line items get it."""
    from service.lti.placements import Score, queue_score

    awaiting = result.by_hand > len(result.marks)
    if not shown:
        score = Score(given=0.0, maximum=result.max_score, activity_progress="Submitted", grading_progress="Pending")
    else:
        score = Score(
            given=result.score,
            maximum=result.max_score,
            activity_progress="Completed",
            grading_progress="PendingManual" if awaiting else "FullyGraded",
        )
    return queue_score(student, resource_id(name), score)
