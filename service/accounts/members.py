"""Accounts: for the roster's students, the one-time sign-in links an instructor mails them; for
anyone, the list of accounts and a new password (``autograder accounts``)."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.utils import timezone
from pydantic import BaseModel

from course.private_files import private_text
from gradebook.models import STAFF_PREFIX, Student
from service.errors import ServiceError
from untrusted import spreadsheet

from .models import ApiToken, Member, SignInLink, digest

LINK_LIFETIME = timedelta(days=14)


def new_sign_in_link(base_url: str, user: User) -> str:
    """A new one-time link with which ``user`` sets their password (valid ``LINK_LIFETIME``): the
    address, given once; only its digest is kept."""
    secret = secrets.token_urlsafe(32)
    SignInLink.objects.create(user=user, digest=digest(secret), expires_at=timezone.now() + LINK_LIFETIME)
    return f"{base_url.rstrip('/')}/welcome/{secret}/"


def sign_in_links(base_url: str, out: Path) -> int:
    """For every roster student: an account (their student_id as username) and a new one-time
    link to set its password, written to ``out`` (student_id, name, email, link) for a mail merge."""
    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with private_text(out, newline="") as handle:  # live sign-in links
        writer = spreadsheet.writer(handle)
        writer.writerow(["student_id", "name", "email", "link"])
        for student in Student.objects.filter(on_roster=True).order_by("student_id"):
            linked = Member.objects.filter(student=student).select_related("user").first()
            if linked is not None and linked.user.username != student.student_id[:150]:
                continue  # an account of their own already (made by their course platform's launch)
            user, _ = User.objects.get_or_create(username=student.student_id[:150], defaults={"email": student.email})
            member = Member.objects.filter(user=user).first()
            if member is not None and member.is_staff_member:
                continue  # a staff account of that name is never made a student's, nor given a link
            Member.objects.update_or_create(user=user, defaults={"student": student, "role": Member.STUDENT})
            writer.writerow([student.student_id, student.name, student.email, new_sign_in_link(base_url, user)])
            count += 1
    return count


class Account(BaseModel):
    """One account of the service, as ``autograder accounts list`` shows it."""

    username: str
    role: str
    student_id: str | None
    name: str
    last_login: datetime | None
    active: bool


def list_accounts() -> list[Account]:
    """Every account, staff first, then by username."""
    members = {m.user_id: m for m in Member.objects.select_related("student")}
    accounts = []
    for user in User.objects.order_by("username"):
        member = members.get(user.id)
        student = member.student if member is not None else None
        accounts.append(
            Account(
                username=user.username,
                role=member.get_role_display() if member is not None else "no role (not a member of the course)",
                student_id=student.student_id
                if student is not None and not student.student_id.startswith(STAFF_PREFIX)
                else None,
                name=(student.name if student is not None else "") or user.get_full_name(),
                last_login=user.last_login,
                active=user.is_active,
            )
        )
    return sorted(accounts, key=lambda account: (account.student_id is not None, account.username))


def _account(username: str) -> User:
    user = User.objects.filter(username=username).first()
    if user is None:
        known = ", ".join(User.objects.order_by("username").values_list("username", flat=True)[:10])
        raise ServiceError(f"no account named {username!r}" + (f" (accounts: {known}, ...)" if known else ""))
    return user


def unlock(username: str | None = None, address: str | None = None) -> int:
    """Forget the failed sign-ins that lock ``username`` (from every address) or ``address`` (for
    every username): django-axes's records, the lock's only state. The number forgotten."""
    from axes.utils import reset

    if username is None and address is None:
        raise ServiceError("name an account to unlock, or an --address")
    if username is not None:
        _account(username)
    return reset(ip=address, username=username)


def set_password(username: str, password: str) -> None:
    """A new password for ``username``, checked by Django's password validators; the account's
    API tokens and sessions end with the old one (a reset is often because it leaked), and a lock
    of its sign-ins with them (the new password is the staff's answer to it)."""
    user = _account(username)
    try:
        validate_password(password, user)
    except ValidationError as invalid:
        raise ServiceError(f"{username}: {' '.join(invalid.messages)}") from None
    user.set_password(password)
    user.save(update_fields=["password"])
    ApiToken.objects.filter(user=user).delete()
    unlock(username)
    from django.contrib.sessions.models import Session

    for session in Session.objects.all():  # the sessions of that user only: Django keeps the user id inside
        if session.get_decoded().get("_auth_user_id") == str(user.pk):
            session.delete()


STAFF_ROLES = (Member.INSTRUCTOR, Member.TA)


def add_staff(username: str, role: str, password: str | None = None, email: str = "") -> str:
    """Make ``username`` an instructor or a teaching assistant (``role``): a new account, with
    ``password`` (checked by Django's password validators) or none usable until one is set (``accounts
    password``), or an account that has no role yet (made by Django's ``createsuperuser``, say), or
    a staff member's whose role changes. A student's account is never made staff's: their hand-ins
    and grades are filed under it. What was done, in words."""
    if role not in STAFF_ROLES:
        raise ServiceError(f"{role!r} is not a staff role: give one of {', '.join(STAFF_ROLES)}")
    label = dict(Member.ROLES)[role].lower()
    username = username.strip()
    if not username or len(username) > 150:
        raise ServiceError("give a username of 1 to 150 characters")
    user = User.objects.filter(username=username).first()
    made = user is None
    if user is None:
        user = User(username=username, email=email)
    if password is not None:
        try:
            validate_password(password, user)
        except ValidationError as invalid:
            raise ServiceError(f"{username}: {' '.join(invalid.messages)}") from None
    member = Member.objects.filter(user=user).first() if not made else None
    if member is not None and not member.is_staff_member:
        raise ServiceError(
            f"{username} is a student's account (their hand-ins are filed under it); make the staff member an account "
            "of their own"
        )
    if made:
        if password is None:
            user.set_unusable_password()
        else:
            user.set_password(password)
        user.save()
    elif password is not None:
        set_password(username, password)
    if member is None:
        Member.objects.create(user=user, role=role)
        return f"{label} account made" if made else f"made {label} (it had no role)"
    if member.role == role:
        return f"{label} already"
    was = member.get_role_display().lower()
    member.role = role
    member.save(update_fields=["role"])
    return f"made {label} (was {was})"
