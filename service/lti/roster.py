"""Names and Role Provisioning Services: the roster follows the platform course's membership, so that
every student has a gradebook row (and is listed as missing work) before their first launch, and a
student who leaves the course (removed from it, or Inactive or Deleted in its membership) leaves the
roster and the grade files, their grades kept and shown as dropped; back on the roster if they return."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from gradebook.models import Student

from .connection import connector
from .identities import INSTRUCTORS, TEACHING_ASSISTANT

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
ACTIVE = "Active"  # NRPS's statuses: Active, Inactive, Deleted (absent: Active)


@dataclass(frozen=True)
class RosterSync:
    placed: int  # students on the roster now, as the platform lists them
    dropped: int  # students taken off it by this sync


def _is_student(member: Mapping[str, Any]) -> bool:
    roles = set(member.get("roles") or [])
    if TEACHING_ASSISTANT in roles or (roles & INSTRUCTORS):
        return False
    return not roles or any(role.endswith("#Learner") or role == "Learner" for role in roles)


def sync_roster(context) -> RosterSync:
    """Fetch the members of ``context`` (a django-lti LtiContext) and make the roster follow them:
    an Active student matched by SIS id or email when the roster has them, added otherwise; a student
    Inactive or Deleted, or no longer listed since the last sync, dropped."""
    from lti_tool.models import LtiMembership
    from pylti1p3.names_roles import NamesRolesProvisioningService

    if not context.memberships_url:
        return RosterSync(0, 0)
    service = NamesRolesProvisioningService(
        connector(context.deployment.registration), {"context_memberships_url": context.memberships_url}
    )
    members: list[Mapping[str, Any]] = list(service.get_members())
    listed = {str(member.get("user_id") or "") for member in members}
    # The students the last sync knew in this course and the platform no longer lists.
    gone: list[Mapping[str, Any]] = [
        {"user_id": membership.user.sub, "email": membership.user.email or ""}
        for membership in LtiMembership.objects.filter(context=context, is_learner=True, is_active=True).select_related(
            "user"
        )
        if membership.user.sub not in listed
    ]
    context.update_memberships([dict(member) for member in members])
    LtiMembership.objects.filter(context=context).exclude(user__sub__in=listed).update(is_active=False)
    registration = context.deployment.registration
    placed, kept = 0, set()
    for member in members:
        if not _is_student(member) or member.get("status", ACTIVE) != ACTIVE:
            continue
        row = _roster_row(registration, member) or _new_row(member)
        row.name = row.name or str(member.get("name") or "")
        row.email = row.email or str(member.get("email") or "")
        row.sis_id = row.sis_id or str(member.get("lis_person_sourcedid") or "")
        row.on_roster, row.dropped_at = True, None
        row.save()
        kept.add(row.pk)
        placed += 1
    leaving = [member for member in members if _is_student(member) and member.get("status", ACTIVE) != ACTIVE]
    dropped = 0
    for member in [*leaving, *gone]:
        left = _roster_row(registration, member)
        if left is None or left.pk in kept or left.dropped_at is not None:
            continue
        left.on_roster, left.dropped_at = False, timezone.now()
        left.save(update_fields=["on_roster", "dropped_at"])
        dropped += 1
    return RosterSync(placed, dropped)


def _roster_row(registration, member: Mapping[str, Any]) -> Student | None:
    """The roster's row of a platform member: by SIS id, email, the account their launches made, or
    the id a sync gave a member with neither."""
    from lti_tool.models import LtiUser

    sub, email = str(member.get("user_id") or ""), str(member.get("email") or "")
    sourcedid = str(member.get("lis_person_sourcedid") or "")
    return (
        (Student.objects.filter(sis_id=sourcedid).first() if sourcedid else None)
        or (Student.objects.filter(email__iexact=email).first() if email else None)
        or _linked_row(LtiUser.objects.filter(registration=registration, sub=sub).first())
        or Student.objects.filter(student_id=f"lti:{sub}").first()
    )


def _new_row(member: Mapping[str, Any]) -> Student:
    email, sourcedid = str(member.get("email") or ""), str(member.get("lis_person_sourcedid") or "")
    wanted = sourcedid or email or f"lti:{member.get('user_id') or ''}"
    return Student.objects.filter(student_id=wanted).first() or Student(student_id=wanted)


def _linked_row(lti_user) -> Student | None:
    if lti_user is None or lti_user.auth_user_id is None:
        return None
    member = getattr(lti_user.auth_user, "member", None)
    return member.student if member is not None else None
