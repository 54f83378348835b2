"""The service's tables in Django's admin (service/operations/console.py: the instructor's console), beside
the gradebook's (gradebook/admin.py): read everywhere; changed only where the change is a course
setting the pages also make (a member's role, an account without one made staff, an assignment
opened again to hand-ins). Secrets are never shown: tokens and links are stored as digests, and the
admin lists them without those."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.models import User
from django.http import HttpRequest

from gradebook.admin import ConsoleAdmin

from .accounts.members import STAFF_ROLES
from .accounts.models import ApiToken, Member, SignInLink
from .exams.models import ExamAttempt, ExamLogEntry, ExamQuestionResults, OnlineExam
from .handin.models import ClosedAssignment, Job
from .lti.models import ScoreToSend
from .marking.models import ReviewMessage, ReviewRequest


class StaffMemberForm(forms.ModelForm):
    """A member added in the console: an account that has no role yet (one made by
    ``createsuperuser``, a hub's or a platform's launch not yet a member) made an instructor or a
    teaching assistant. A new account, with its password: ``autograder accounts add``."""

    class Meta:
        model = Member
        fields = ("user", "role")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        user = self.fields["user"]
        assert isinstance(user, forms.ModelChoiceField)
        user.queryset = User.objects.filter(member__isnull=True).order_by("username")
        user.help_text = "An account that is not a member of the course yet (a new one: autograder accounts add)."
        role = self.fields["role"]
        assert isinstance(role, forms.ChoiceField)
        role.choices = [(value, label) for value, label in Member.ROLES if value in STAFF_ROLES]


@admin.register(Member)
class MemberAdmin(ConsoleAdmin):
    # A role changed (a student made a teaching assistant); an account with no role made staff.
    editing = frozenset({"change", "add"})
    list_display = ("user", "role", "student")
    list_filter = ("role",)
    search_fields = ("user__username", "student__student_id", "student__name")
    list_select_related = ("user", "student")
    fields = ("user", "role", "student")
    readonly_fields = ("user", "student")

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = StaffMemberForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("user", "role") if obj is None else self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.readonly_fields


@admin.register(ApiToken)
class ApiTokenAdmin(ConsoleAdmin):
    list_display = ("user", "created_at", "last_used_at")
    search_fields = ("user__username",)
    list_select_related = ("user",)
    exclude = ("digest",)


@admin.register(SignInLink)
class SignInLinkAdmin(ConsoleAdmin):
    list_display = ("user", "expires_at", "used_at")
    search_fields = ("user__username",)
    list_select_related = ("user",)
    exclude = ("digest",)


@admin.register(Job)
class JobAdmin(ConsoleAdmin):
    list_display = (
        "id",
        "student",
        "assignment",
        "state",
        "original_name",
        "created_at",
        "finished_at",
        "attempts",
        "regrade",
        "question",
        "worker",
    )
    list_filter = ("state", "assignment", "regrade")
    search_fields = ("student__student_id", "student__name", "original_name", "sha256", "error")
    list_select_related = ("student",)
    date_hierarchy = "created_at"


@admin.register(ClosedAssignment)
class ClosedAssignmentAdmin(ConsoleAdmin):
    editing = frozenset({"delete"})  # opened again, as the assignment page's button does
    list_display = ("name", "closed_at", "closed_by")


class ReviewMessageInline(admin.TabularInline):
    model = ReviewMessage
    fields = ("at", "author", "by_staff", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReviewRequest)
class ReviewRequestAdmin(ConsoleAdmin):
    list_display = ("id", "job", "question_id", "state", "created_at")
    list_filter = ("state",)
    search_fields = ("job__student__student_id", "question_id")
    list_select_related = ("job",)
    inlines = (ReviewMessageInline,)


@admin.register(ScoreToSend)
class ScoreToSendAdmin(ConsoleAdmin):
    list_display = (
        "student",
        "assignment",
        "score_given",
        "score_maximum",
        "state",
        "attempts",
        "next_attempt_at",
        "sent_at",
        "last_error",
    )
    list_filter = ("state", "assignment")
    search_fields = ("student__student_id", "last_error")
    list_select_related = ("student",)


class ExamQuestionResultsInline(admin.TabularInline):
    """Each question's own results setting and publishing (set on the exam's staff page)."""

    model = ExamQuestionResults
    fields = ("question", "results", "published_at", "published_by")
    extra = 0


@admin.register(OnlineExam)
class OnlineExamAdmin(ConsoleAdmin):
    list_display = ("name", "opens_at", "closes_at", "minutes", "results", "trial")
    exclude = ("access_code",)  # the proctor's to give out in the room, set on the exam's page
    inlines = [ExamQuestionResultsInline]


class ExamLogInline(admin.TabularInline):
    model = ExamLogEntry
    fields = ("at", "action", "address", "detail")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ExamAttempt)
class ExamAttemptAdmin(ConsoleAdmin):
    list_display = (
        "exam",
        "student",
        "number",
        "trial",
        "started_at",
        "ends_at",
        "ended_at",
        "ended_reason",
        "correct",
    )
    list_filter = ("exam", "trial", "ended_reason")
    search_fields = ("student__student_id", "student__name")
    list_select_related = ("student",)
    inlines = (ExamLogInline,)
