"""Who a verified launch is in the course: a Django account of its own (no password: it signs in
only through its platform), a role from the launch's roles claim, and for a student the gradebook
row their work is filed under."""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import User
from django.db import transaction

from gradebook.models import Student
from service.accounts.models import Member

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
TEACHING_ASSISTANT = f"{MEMBERSHIP}/Instructor#TeachingAssistant"
INSTRUCTORS = {f"{MEMBERSHIP}#Instructor", f"{MEMBERSHIP}#Administrator", f"{MEMBERSHIP}#ContentDeveloper"}
SOURCEDID = "https://purl.imsglobal.org/spec/lti/claim/lis"
PLATFORM = "https://purl.imsglobal.org/spec/lti/claim/tool_platform"
CUSTOM = "https://purl.imsglobal.org/spec/lti/claim/custom"


def role_of(roles: list[str]) -> str:
    """The course role a launch's roles claim gives: a teaching assistant (checked first: platforms
    send TAs the Instructor role too), an instructor, else a student (the least a launch can be)."""
    given = set(roles or [])
    if TEACHING_ASSISTANT in given:
        return Member.TA
    if given & INSTRUCTORS:
        return Member.INSTRUCTOR
    return Member.STUDENT


def account_for(lti_launch) -> User:
    """The account of the launch's user, made on their first launch; their role follows the
    platform's on every launch."""
    lti_user = lti_launch.user
    role = role_of(lti_launch.roles_claim or [])
    claims = lti_launch.get_launch_data()
    with transaction.atomic():
        user = lti_user.auth_user
        if user is None:
            digest = hashlib.sha256(f"{lti_user.registration.issuer}\n{lti_user.sub}".encode()).hexdigest()[:24]
            user, made = User.objects.get_or_create(username=f"lti-{digest}")
            if made:
                user.set_unusable_password()
            lti_user.auth_user = user
            lti_user.save(update_fields=["auth_user"])
        user.first_name, user.last_name = lti_user.given_name[:150], lti_user.family_name[:150]
        user.email = lti_user.email
        user.save()
        member, _ = Member.objects.get_or_create(user=user, defaults={"role": role})
        member.role = role
        if role == Member.STUDENT:
            member.student = _student_row(member, lti_user, claims)
        member.save()
    return user


def _student_row(member: Member, lti_user, claims: dict) -> Student:
    """The gradebook row of a launching student: theirs already, the roster's (by SIS id or
    email), or a new one. The platform's own ids are kept for grade files."""
    sourcedid = str((claims.get(SOURCEDID) or {}).get("person_sourcedid") or "")
    row = member.student
    if row is None and sourcedid:
        row = (
            Student.objects.filter(sis_id=sourcedid, member__isnull=True).first()
            or Student.objects.filter(student_id=sourcedid, member__isnull=True).first()
        )
    if row is None and lti_user.email:
        row = Student.objects.filter(email__iexact=lti_user.email, member__isnull=True).first()
    if row is None:  # the roster's row by the same id (NRPS made it), else a new one
        wanted = sourcedid or lti_user.email or f"lti:{lti_user.sub}"
        row = Student.objects.filter(student_id=wanted, member__isnull=True).first()
        if row is None:
            if Student.objects.filter(student_id=wanted).exists():  # another account's: never shared
                wanted = f"lti:{lti_user.registration_id}:{lti_user.sub}"
            row, _ = Student.objects.get_or_create(student_id=wanted)
    row.on_roster, row.dropped_at = True, None  # launched from the course: in it
    row.name = row.name or lti_user.name
    row.email = row.email or lti_user.email
    row.sis_id = row.sis_id or sourcedid
    family = str((claims.get(PLATFORM) or {}).get("product_family_code") or "").lower()
    if family == "moodle":  # Moodle's subject is its user id, which its grade files use
        row.moodle_id = lti_user.sub
    canvas_id = (claims.get(CUSTOM) or {}).get("canvas_user_id")
    if canvas_id and str(canvas_id).isdigit():  # the custom field canvas_user_id=$Canvas.user.id
        row.canvas_id = str(canvas_id)
    row.save()
    return row
