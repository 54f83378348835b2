"""Assignment and Grade Services: a line item per placement of an assignment in each platform
course that launched it, and each student's current score (automatic plus hand-graded, after the
late policy) put in the outbox whenever it changes, in the transaction that changes it, for the
column of the placement they launched (placements.py).

Nothing here talks to a platform on the grading path: ``service.lti.outbox`` sends the outbox
later, with retries, so that a platform that is slow or down never holds grading, and a score it
could not take is sent when it comes back (or listed, on the instructor's page and by
``autograder lti send-scores``)."""

from __future__ import annotations

import logging
from typing import Any

from autograder.assignment import Assignment as AssignmentSpec
from gradebook.book import Gradebook
from gradebook.grades import counting_submission, report_of
from gradebook.models import Student

from .connection import connector
from .placements import LINE_ITEM_TAG, Score, bind_line_item, queue_score, record_placement

logger = logging.getLogger("service.lti")
AGS = "https://purl.imsglobal.org/spec/lti-ags/scope"
SCOPES = {
    "can_publish_scores": f"{AGS}/score",
    "can_manage_lineitems": f"{AGS}/lineitem",
    "can_query_lineitems": f"{AGS}/lineitem.readonly",
    "can_access_results": f"{AGS}/result.readonly",  # read back a score posted with no answer (outbox.py)
}


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
    """On a launch of ``spec``: the column its scores go to for this placement (the launch's
    resource link) in the launch's course, and the launching student's scores to it from now on
    (placements.py). The one the launch's claim names is the one to use, on every launch: an
    instructor who deleted the column and placed the assignment again gave the link a new one.
    Without a claim: the one stored for the link, else the course's first, else one found or made
    through the line items service."""
    from lti_tool.models import LtiLineItem
    from pylti1p3.lineitem import LineItem

    context, link = lti_launch.context, resource_link_of(lti_launch)
    bound = (lti_launch.ags_claim or {}).get("lineitem")
    stored = LtiLineItem.objects.filter(context=context, resource_id=spec.name).order_by("id")
    known = (stored.filter(resource_link=link).first() if link is not None else None) or stored.first()
    if bound:
        url = bound
    elif known is not None:
        record_placement(lti_launch, known)
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
    item = bind_line_item(
        context, spec.name, url, resource_link=link, label=spec.title or spec.name, maximum_score=maximum(spec)
    )
    record_placement(lti_launch, item)


def resource_link_of(lti_launch):
    """The launch's resource link (django-lti keeps them): the placement, by which a column can be
    found again."""
    from lti_tool.models import LtiResourceLink

    if not lti_launch.resource_link_claim:
        return None
    try:
        return lti_launch.resource_link
    except LtiResourceLink.DoesNotExist:
        return None


def current_score(book: Gradebook, spec: AssignmentSpec, student: Student) -> Score:
    """The student's grade on ``spec``: the report of the submission that counts (the assignment's
    rule or the staff's choice: gradebook.grades.counting_submission), as the gradebook has it.
    Before the staff publish the assignment's grades (gradebook.publishing), only that it was
    handed in: Submitted, Pending, and no score (the outbox sends none); FullyGraded once published."""
    from gradebook.publishing import published_state

    counted = counting_submission(book, spec, student)
    if counted is None:
        return Score(given=0.0, maximum=maximum(spec), activity_progress="Initialized", grading_progress="NotReady")
    if not published_state(book, spec).assignment:
        return Score(given=0.0, maximum=maximum(spec), activity_progress="Submitted", grading_progress="Pending")
    report = report_of(book, spec, counted)
    awaiting = any(question.status == "manual" and question.mark is None for question in report.questions)
    return Score(
        given=report.final_score,
        maximum=maximum(spec),
        activity_progress="Submitted" if awaiting else "Completed",
        grading_progress="PendingManual" if awaiting else "FullyGraded",
    )


def queue_scores(book: Gradebook, spec: AssignmentSpec, student: Student, again: bool = False) -> int:
    """Put the student's current score on ``spec`` in the outbox, for their column of it in each
    platform course they belong to (placements.queue_score: the placement they launched); a score
    of theirs still waiting there is replaced (the newer wins: one POST, not one per grade). With
    ``again``, sent even if the platform has it already. Call it inside the transaction that
    changed the score. Returns how many line items will get it."""
    from lti_tool.models import LtiLineItem

    if getattr(student, "member", None) is None or not LtiLineItem.objects.filter(resource_id=spec.name).exists():
        return 0  # no platform has this assignment, or the student never came from one (no report read)
    return queue_score(student, spec.name, current_score(book, spec, student), again=again)


def score_changed(spec: AssignmentSpec, student: Student) -> list[str]:
    """After a grade, a mark or an override: the student's score into the outbox for the platforms
    (if any launched the assignment). Sent later, never on this page's time: nothing to report now."""
    from service.core.access import book

    gradebook = book()
    gradebook.run(lambda: queue_scores(gradebook, spec, student))
    return []
