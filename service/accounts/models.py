"""Accounts: who an account is in the course (its role, its row in the gradebook), API tokens,
one-time sign-in links, and the platforms' launches already used (a launch signs a person in)."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import models

from gradebook.models import Student


def digest(secret: str) -> str:
    """What is stored of a token or link: its SHA-256, never the secret itself."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Member(models.Model):
    INSTRUCTOR, TA, STUDENT = "instructor", "ta", "student"
    ROLES = [(INSTRUCTOR, "Instructor"), (TA, "Teaching assistant"), (STUDENT, "Student")]

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="member")
    role = models.CharField(max_length=20, choices=ROLES, default=STUDENT)
    # A student's row in the gradebook: what they hand in is filed under it.
    student = models.OneToOneField(Student, on_delete=models.SET_NULL, null=True, blank=True, related_name="member")

    @property
    def is_staff_member(self) -> bool:
        return self.role in {self.INSTRUCTOR, self.TA}

    @property
    def is_instructor(self) -> bool:
        return self.role == self.INSTRUCTOR

    def __str__(self) -> str:
        return f"{self.user} ({self.get_role_display().lower()})"


def member_or_none(user: Any) -> Member | None:
    """The account's membership, read once per account object: Django keeps it on the account
    (``user.member``), where the navigation, staff_request and access.member_of all find it."""
    try:
        return user.member
    except Member.DoesNotExist:
        return None


def staff_request(request: Any) -> bool:
    """Whether the request's account is the course's staff (an instructor or a TA): every page's
    navigation and banner ask it (a student's exam page among them), from the one membership read."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return False
    member = member_or_none(user)
    return member is not None and member.is_staff_member


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True)

    @classmethod
    def issue(cls, user) -> str:
        """A new token for ``user``: returned once, stored only as its digest."""
        secret = secrets.token_urlsafe(32)
        cls.objects.create(user=user, digest=digest(secret))
        return secret

    def __str__(self) -> str:
        return f"API token of {self.user}"


class SignInLink(models.Model):
    """A one-time link with which a student sets their password."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_links")
    digest = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"sign-in link for {self.user}"


class UsedLaunch(models.Model):
    """A platform's launch (its id_token's nonce), kept once used: the same token presented again
    is a replay, refused."""

    issuer = models.CharField(max_length=255)
    nonce = models.CharField(max_length=255)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "nonce"], name="one_use_per_launch")]

    def __str__(self) -> str:
        return f"launch from {self.issuer}"
