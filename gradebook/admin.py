"""The gradebook's tables in Django's admin, the instructor's fallback console for what no page or
command shows: read everywhere, changed only where a change is plain data (a student's roster
details). Grades are never written here: results come from grading, marks from the
marking pages and the commands, which check them and tell the course platforms.

Who may open the admin is the site's to say (``admin_site.has_permission``: the grading service's
console lets in the course's instructors only); every table here asks it, not Django's per-model
permissions, which the course's accounts do not carry. Registered only where the admin is
installed (the service's site); the gradebook's commands never import this module."""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib import admin
from django.http import HttpRequest

from .models import (
    Assignment,
    ExamExtension,
    ExamMark,
    ExamResult,
    Extension,
    Mark,
    Question,
    Result,
    RubricEdit,
    SimilarityRun,
    Student,
    Submission,
)


class ConsoleAdmin(admin.ModelAdmin):
    """A table in the console: whoever the site lets in reads it; it is changed only in the ways
    ``editing`` names ("add", "change", "delete"). Long tables are counted and paged cheaply."""

    editing: ClassVar[frozenset[str]] = frozenset()
    list_per_page = 100
    show_full_result_count = False  # no second COUNT(*) over a course's every submission

    def _let_in(self, request: HttpRequest) -> bool:
        return self.admin_site.has_permission(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._let_in(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._let_in(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return "add" in self.editing and self._let_in(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return "change" in self.editing and self._let_in(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return "delete" in self.editing and self._let_in(request)


@admin.register(Student)
class StudentAdmin(ConsoleAdmin):
    editing = frozenset({"change"})  # a roster's details fixed by hand (their grades are not here)
    list_display = ("student_id", "name", "email", "on_roster", "canvas_id", "moodle_id", "sis_id")
    list_filter = ("on_roster",)
    search_fields = ("student_id", "name", "email", "canvas_id", "moodle_id", "sis_id")
    ordering = ("student_id",)
    readonly_fields = ("student_id",)  # the key every grade is filed under


class QuestionInline(admin.TabularInline):
    model = Question
    fields = ("question_id", "title", "points", "manual", "position")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(ConsoleAdmin):
    list_display = ("name", "title", "max_score", "canvas_assignment_id")
    search_fields = ("name", "title")
    inlines = (QuestionInline,)


class ResultInline(admin.TabularInline):
    model = Result
    fields = ("question_id", "score", "max_score", "status", "feedback")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Submission)
class SubmissionAdmin(ConsoleAdmin):
    list_display = ("id", "student", "assignment", "submitted_at", "graded_at", "ran", "grader_version", "sha256")
    list_filter = ("assignment", "ran", "graded_at")
    search_fields = ("student__student_id", "student__name", "sha256")
    list_select_related = ("student", "assignment")
    raw_id_fields = ("student",)
    date_hierarchy = "graded_at"
    inlines = (ResultInline,)


@admin.register(Result)
class ResultAdmin(ConsoleAdmin):
    list_display = ("submission", "question_id", "score", "max_score", "status")
    list_filter = ("status", "submission__assignment")
    search_fields = ("submission__student__student_id", "question_id")
    list_select_related = ("submission",)
    raw_id_fields = ("submission",)


@admin.register(Mark)
class MarkAdmin(ConsoleAdmin):
    list_display = ("student", "assignment", "question_id", "score", "adjustment", "marked_by", "marked_at", "group")
    list_filter = ("assignment", "question_id", "marked_by")
    # A group's key finds every mark given with it (service/marking/groups.py).
    search_fields = ("student__student_id", "student__name", "comment", "group")
    list_select_related = ("student", "assignment")
    raw_id_fields = ("student", "submission")


@admin.register(Extension)
class ExtensionAdmin(ConsoleAdmin):
    # Read only: `autograder extend` grants them, checking the assignment has a due time.
    list_display = ("student", "assignment", "until", "granted_by", "granted_at")
    list_filter = ("assignment",)
    search_fields = ("student__student_id", "student__name")
    list_select_related = ("student", "assignment")


@admin.register(ExamExtension)
class ExamExtensionAdmin(ConsoleAdmin):
    # Read only: the exam's page and `autograder extend STUDENT EXAM` grant them, within their bounds.
    list_display = ("student", "exam", "extra_minutes", "until", "attempts", "granted_by", "granted_at")
    list_filter = ("exam",)
    search_fields = ("student__student_id", "student__name")
    list_select_related = ("student",)


@admin.register(ExamResult)
class ExamResultAdmin(ConsoleAdmin):
    list_display = ("exam", "student", "score", "max_score", "graded_at")
    list_filter = ("exam",)
    search_fields = ("student__student_id", "student__name")
    list_select_related = ("student",)


@admin.register(ExamMark)
class ExamMarkAdmin(ConsoleAdmin):
    list_display = ("exam", "question", "student", "score", "max_score", "marked_by", "marked_at", "group")
    list_filter = ("exam", "question")
    search_fields = ("student__student_id", "student__name", "comment")
    list_select_related = ("student",)


@admin.register(RubricEdit)
class RubricEditAdmin(ConsoleAdmin):
    list_display = ("assignment", "question_id", "item_id", "points", "text", "edited_by", "edited_at")
    list_filter = ("assignment", "question_id")


@admin.register(SimilarityRun)
class SimilarityRunAdmin(ConsoleAdmin):
    list_display = ("id", "assignment", "threshold", "state", "requested_by", "done", "total", "finished_at")
    list_filter = ("assignment", "state")
    exclude = ("report",)  # the report is the similarity page's to show
