"""Assignment and Grade Services: one line item per assignment in each platform course that
launched it, and each student's current score (automatic plus hand-graded, after the late policy)
posted to it whenever it changes.

Posting is best effort by design: a platform that is down or refuses is reported (in the log and to
the caller), and never fails the grading or the page that changed the score; the next change, or
``autograder lti send-scores``, sends the score again (AGS scores replace the previous one)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from autograder.assignment import Assignment as AssignmentSpec
from gradebook.book import Gradebook
from gradebook.grades import report_of, submissions_in_order
from gradebook.models import Student

from .connection import connector

logger = logging.getLogger("service.lti")
AGS = "https://purl.imsglobal.org/spec/lti-ags/scope"
SCOPES = {"can_publish_scores": f"{AGS}/score", "can_manage_lineitems": f"{AGS}/lineitem",
          "can_query_lineitems": f"{AGS}/lineitem.readonly"}  # fmt: skip
LINE_ITEM_TAG = "gradewright"


def maximum(spec: AssignmentSpec) -> float:
    return float(sum(question.points for question in spec.questions))


def _service(context, lineitem: str | None = None):
    from pylti1p3.assignments_grades import AssignmentsGradesService

    data: Any = {"scope": [scope for flag, scope in SCOPES.items() if getattr(context, flag)],
            "lineitems": context.lineitems_url}  # fmt: skip
    if lineitem:
        data["lineitem"] = lineitem
    return AssignmentsGradesService(connector(context.deployment.registration), data)


def remember_line_item(lti_launch, spec: AssignmentSpec) -> None:
    """On a launch of ``spec``: the line item its scores go to in the launch's course, the one the
    platform bound to the link (made by deep linking), else found or made through the line items
    service."""
    from lti_tool.models import LtiLineItem
    from pylti1p3.lineitem import LineItem

    context = lti_launch.context
    if LtiLineItem.objects.filter(context=context, resource_id=spec.name).exists():
        return
    bound = (lti_launch.ags_claim or {}).get("lineitem")
    if bound:
        url = bound
    elif context.can_manage_lineitems and context.lineitems_url:
        wanted = (LineItem().set_label(spec.title or spec.name).set_score_maximum(maximum(spec))
                  .set_resource_id(spec.name).set_tag(LINE_ITEM_TAG))  # fmt: skip
        url = _service(context).find_or_create_lineitem(wanted, find_by="resource_id").get_id()
    else:
        return  # the platform offers no grade service to this link
    LtiLineItem.objects.update_or_create(
        url=url,
        defaults={"context": context, "maximum_score": maximum(spec), "label": spec.title or spec.name,
                  "resource_id": spec.name, "tag": LINE_ITEM_TAG},
    )  # fmt: skip


def send_scores(book: Gradebook, spec: AssignmentSpec, students: list[Student]) -> list[str]:
    """Post each student's current score on ``spec`` to every line item of it in a course they
    belong to on a platform. Returns the problems, one line each (nothing raised)."""
    from lti_tool.models import LtiLineItem, LtiUser
    from pylti1p3.exception import LtiException
    from pylti1p3.lineitem import LineItem
    from requests import RequestException

    problems = []
    for student in students:
        member = getattr(student, "member", None)
        if member is None:
            continue
        for lti_user in LtiUser.objects.filter(auth_user=member.user_id):
            items = LtiLineItem.objects.filter(
                resource_id=spec.name, context__members=lti_user, context__can_publish_scores=True
            ).select_related("context__deployment__registration")
            if not items:
                continue
            grade = _grade(book, spec, student, lti_user.sub)  # the report once, whatever the number of courses
            for item in items:
                try:
                    _service(item.context, item.url).put_grade(grade, LineItem({"id": item.url}))
                except (LtiException, RequestException, ValueError) as exc:
                    problem = f"{student.student_id}: the score could not be sent to {item.label} ({exc})"
                    logger.warning(problem)
                    problems.append(problem)
    return problems


def _grade(book: Gradebook, spec: AssignmentSpec, student: Student, user_id: str):
    from pylti1p3.grade import Grade

    latest = submissions_in_order(book, spec.name, student).last()
    grade = Grade().set_user_id(user_id).set_score_maximum(maximum(spec))
    grade.set_timestamp(datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    if latest is None:
        return grade.set_score_given(0.0).set_activity_progress("Initialized").set_grading_progress("NotReady")
    report = report_of(book, spec, latest)
    awaiting = any(question.status == "manual" and question.mark is None for question in report.questions)
    grade.set_score_given(report.final_score).set_activity_progress("Submitted" if awaiting else "Completed")
    return grade.set_grading_progress("PendingManual" if awaiting else "FullyGraded")


def score_changed(spec: AssignmentSpec, student: Student) -> list[str]:
    """After a grade, a mark or an override: the student's score to the platforms (if any launched
    the assignment); the problems, for the page or the log."""
    from lti_tool.models import LtiLineItem

    if not LtiLineItem.objects.filter(resource_id=spec.name).exists():
        return []  # no platform has this assignment: nothing to send, no query more
    from ..access import book

    return send_scores(book(), spec, [student])
