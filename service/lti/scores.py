"""Assignment and Grade Services: one line item per assignment in each platform course that
launched it, and each student's current score (automatic plus hand-graded, after the late policy)
put in the outbox whenever it changes, in the transaction that changes it.

Nothing here talks to a platform on the grading path: ``service.lti.outbox`` sends the outbox
later, with retries, so that a platform that is slow or down never holds grading, and a score it
could not take is sent when it comes back (or listed, on the instructor's page and by
``autograder lti send-scores``)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.utils import timezone
from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from gradebook.book import Gradebook
from gradebook.grades import report_of, submissions_in_order
from gradebook.models import Student

from .connection import connector

logger = logging.getLogger("service.lti")
AGS = "https://purl.imsglobal.org/spec/lti-ags/scope"
SCOPES = {
    "can_publish_scores": f"{AGS}/score",
    "can_manage_lineitems": f"{AGS}/lineitem",
    "can_query_lineitems": f"{AGS}/lineitem.readonly",
}
LINE_ITEM_TAG = "gradewright"


def maximum(spec: AssignmentSpec) -> float:
    return float(sum(question.points for question in spec.questions))


def scopes(context) -> list[str]:
    return [scope for flag, scope in SCOPES.items() if getattr(context, flag)]


def service(context, lineitem: str | None = None, using=None):
    """pylti1p3's AGS client for a django-lti context (through ``using``, a connector, if given)."""
    from pylti1p3.assignments_grades import AssignmentsGradesService

    data: Any = {"scope": scopes(context), "lineitems": context.lineitems_url}
    if lineitem:
        data["lineitem"] = lineitem
    return AssignmentsGradesService(using or connector(context.deployment.registration), data)


def remember_line_item(lti_launch, spec: AssignmentSpec) -> None:
    """On a launch of ``spec``: the line item its scores go to in the launch's course. The one the
    launch's claim names is the one to use, on every launch: an instructor who deleted the column
    and placed the assignment again gave the link a new one. Without a claim: the one stored, else
    one found or made through the line items service."""
    from lti_tool.models import LtiLineItem
    from pylti1p3.lineitem import LineItem

    context = lti_launch.context
    bound = (lti_launch.ags_claim or {}).get("lineitem")
    if bound:
        url = bound
    elif LtiLineItem.objects.filter(context=context, resource_id=spec.name).exists():
        return
    elif context.can_manage_lineitems and context.lineitems_url:
        wanted = (
            LineItem()
            .set_label(spec.title or spec.name)
            .set_score_maximum(maximum(spec))
            .set_resource_id(spec.name)
            .set_tag(LINE_ITEM_TAG)
        )
        url = service(context).find_or_create_lineitem(wanted, find_by="resource_id").get_id()
    else:
        return  # the platform offers no grade service to this link
    bind_line_item(
        context,
        spec.name,
        url,
        label=spec.title or spec.name,
        maximum_score=maximum(spec),
        resource_link=resource_link_of(lti_launch),
    )


def resource_link_of(lti_launch):
    """The launch's resource link (django-lti keeps them), by which a column can be found again."""
    from lti_tool.models import LtiResourceLink

    if not lti_launch.resource_link_claim:
        return None
    try:
        return lti_launch.resource_link
    except LtiResourceLink.DoesNotExist:
        return None


def bind_line_item(context, assignment: str, url: str, **fields):
    """The one line item of ``assignment`` in ``context`` is now at ``url``: the stored row moves
    there (scores waiting for the old column go to the new one), or one is made. Returns it."""
    from django.db import transaction
    from lti_tool.models import LtiLineItem

    from ..models import ScoreToSend

    with transaction.atomic():
        stored = list(LtiLineItem.objects.filter(context=context, resource_id=assignment).order_by("id"))
        keep = next((item for item in stored if item.url == url), None)
        keep = keep or LtiLineItem.objects.filter(url=url).first() or (stored[0] if stored else None)
        if keep is None:
            keep = LtiLineItem(context=context, url=url, maximum_score=0.0)
        keep.url, keep.context, keep.resource_id, keep.tag = url, context, assignment, LINE_ITEM_TAG
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
            item.delete()
    return keep


class Score(BaseModel):
    """A student's current score on an assignment, as AGS sends it."""

    given: float
    maximum: float
    activity_progress: str
    grading_progress: str


def current_score(book: Gradebook, spec: AssignmentSpec, student: Student) -> Score:
    latest = submissions_in_order(book, spec.name, student).last()
    if latest is None:
        return Score(given=0.0, maximum=maximum(spec), activity_progress="Initialized", grading_progress="NotReady")
    report = report_of(book, spec, latest)
    awaiting = any(question.status == "manual" and question.mark is None for question in report.questions)
    return Score(
        given=report.final_score,
        maximum=maximum(spec),
        activity_progress="Submitted" if awaiting else "Completed",
        grading_progress="PendingManual" if awaiting else "FullyGraded",
    )


def queue_scores(book: Gradebook, spec: AssignmentSpec, student: Student) -> int:
    """Put the student's current score on ``spec`` in the outbox, for every line item of it in a
    platform course they belong to; a score of theirs still waiting there is replaced (the newer
    wins: one POST, not one per grade). Call it inside the transaction that changed the score.
    Returns how many line items will get it."""
    from lti_tool.models import LtiLineItem, LtiUser

    from ..models import ScoreToSend

    member = getattr(student, "member", None)
    if member is None or not LtiLineItem.objects.filter(resource_id=spec.name).exists():
        return 0  # no platform has this assignment, or the student never came from one
    now, queued, score = timezone.now(), 0, None
    for lti_user in LtiUser.objects.filter(auth_user=member.user_id):
        items = LtiLineItem.objects.filter(
            resource_id=spec.name, context__members=lti_user, context__can_publish_scores=True
        ).distinct()
        for item in items:
            score = score or current_score(book, spec, student)  # the report once, whatever the courses
            ScoreToSend.objects.update_or_create(
                lti_user=lti_user,
                line_item=item,
                defaults={
                    "student": student,
                    "assignment": spec.name,
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
                },
            )
            queued += 1
    return queued


def score_changed(spec: AssignmentSpec, student: Student) -> list[str]:
    """After a grade, a mark or an override: the student's score into the outbox for the platforms
    (if any launched the assignment). Sent later, never on this page's time: nothing to report now."""
    from ..access import book

    gradebook = book()
    gradebook.run(lambda: queue_scores(gradebook, spec, student))
    return []
