"""Names and Role Provisioning Services: the platform course's members into the roster, so that
every student has a gradebook row (and is listed as missing work) before their first launch."""

from __future__ import annotations

from gradebook.models import Student

from .connection import connector
from .identities import INSTRUCTORS, TEACHING_ASSISTANT

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


def sync_roster(context) -> int:
    """Fetch the members of ``context`` (a django-lti LtiContext) and put its students on the roster:
    matched by SIS id or email when the roster has them, added otherwise. Returns how many."""
    from lti_tool.models import LtiUser
    from pylti1p3.names_roles import NamesRolesProvisioningService

    if not context.memberships_url:
        return 0
    service = NamesRolesProvisioningService(
        connector(context.deployment.registration), {"context_memberships_url": context.memberships_url}
    )
    members = service.get_members()
    context.update_memberships(members)
    placed = 0
    for member in members:
        roles = set(member.get("roles") or [])
        if member.get("status", "Active") != "Active" or TEACHING_ASSISTANT in roles or (roles & INSTRUCTORS):
            continue
        if roles and not any(role.endswith("#Learner") or role == "Learner" for role in roles):
            continue
        sub, email = str(member.get("user_id") or ""), str(member.get("email") or "")
        sourcedid = str(member.get("lis_person_sourcedid") or "")
        row = (
            (Student.objects.filter(sis_id=sourcedid).first() if sourcedid else None)
            or (Student.objects.filter(email__iexact=email).first() if email else None)
            or _linked_row(LtiUser.objects.filter(registration=context.deployment.registration, sub=sub).first())
        )
        if row is None:
            wanted = sourcedid or email or f"lti:{sub}"
            row = Student.objects.filter(student_id=wanted).first() or Student(student_id=wanted)
        row.name = row.name or str(member.get("name") or "")
        row.email = row.email or email
        row.sis_id = row.sis_id or sourcedid
        row.on_roster = True
        row.save()
        placed += 1
    return placed


def _linked_row(lti_user) -> Student | None:
    if lti_user is None or lti_user.auth_user_id is None:
        return None
    member = getattr(lti_user.auth_user, "member", None)
    return member.student if member is not None else None
