"""Accounts for the roster's students, and the one-time sign-in links an instructor mails them."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.models import User
from django.utils import timezone

from gradebook.models import Student
from untrusted import spreadsheet

from .models import Member, SignInLink, digest

LINK_LIFETIME = timedelta(days=14)


def sign_in_links(base_url: str, out: Path) -> int:
    """For every roster student: an account (their student_id as username) and a new one-time
    link to set its password, written to ``out`` (student_id, name, email, link) for a mail merge."""
    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle)
        writer.writerow(["student_id", "name", "email", "link"])
        for student in Student.objects.filter(on_roster=True).order_by("student_id"):
            linked = Member.objects.filter(student=student).select_related("user").first()
            if linked is not None and linked.user.username != student.student_id[:150]:
                continue  # an account of their own already (made by their course platform's launch)
            user, _ = User.objects.get_or_create(username=student.student_id[:150],
                                                 defaults={"email": student.email})  # fmt: skip
            member = Member.objects.filter(user=user).first()
            if member is not None and member.is_staff_member:
                continue  # a staff account of that name is never made a student's, nor given a link
            Member.objects.update_or_create(user=user, defaults={"student": student, "role": Member.STUDENT})
            secret = secrets.token_urlsafe(32)
            SignInLink.objects.create(user=user, digest=digest(secret), expires_at=timezone.now() + LINK_LIFETIME)
            writer.writerow([student.student_id, student.name, student.email,
                             f"{base_url.rstrip('/')}/welcome/{secret}/"])  # fmt: skip
            count += 1
    return count
