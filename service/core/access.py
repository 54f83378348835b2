"""Who may see what, and what a student is shown: one place for the rules the pages and the API share."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils import timezone

from autograder.assignment import Assignment as AssignmentSpec
from autograder.reports.model import Report
from course.folder import CourseFolder
from gradebook.book import Gradebook
from gradebook.extensions import due_for as student_due
from gradebook.grades import report_of
from gradebook.models import STAFF_PREFIX, Student
from service.accounts.models import Member, member_or_none
from service.handin.models import Job
from untrusted.text import bounded, storable

from .boundary import is_api
from .live_settings import LIVE, assignments_in_force, course_in_force

View = TypeVar("View", bound=Callable[..., Any])
# The API's one staff endpoint is the grades (GET /api/v1/assignments/<name>/grades): its refusal.
STAFF_ONLY_API = "only the course's staff see everyone's grades"


def course() -> CourseFolder:
    """The course as course.toml says now: read again whenever the file changes (as the worker reads
    it per job), so that the pages and the grader never disagree about a due date or a policy; while
    the file does not read, as it last read (service/core/live_settings.py)."""
    return course_in_force(Path(settings.GRADEWRIGHT_COURSE))


def assignments() -> dict[str, AssignmentSpec]:
    """Every assignment as its assignment.toml says now (read again when it or course.toml changes),
    or as it last read while it does not read (service/core/live_settings.py)."""
    return assignments_in_force(course())


def reread_course() -> None:
    """Forget the course as read (a change made within the file system's clock tick)."""
    LIVE.forget()


def state() -> Path:
    return Path(settings.GRADEWRIGHT_STATE)


def book() -> Gradebook:
    return Gradebook("default", "the service's database")


def assignment_or_404(name: str) -> AssignmentSpec:
    spec = assignments().get(name)
    if spec is None:
        known = ", ".join(sorted(assignments())) or "none"
        raise Http404(f"no assignment named {bounded(storable(name), 80)!r}; the course's assignments: {known}")
    return spec


def member_of(user) -> Member:
    """The account's membership with its student, read once a request: kept on the account, where the
    navigation's ``user.member`` and every role check find it (a student's start of an exam read
    it three times)."""
    if not get_user_model().member.related.is_cached(user):
        found = Member.objects.filter(user=user).select_related("student").first()
        if found is not None:
            user.member = found  # Django's own cache of the relation: not saved, only kept
    member = member_or_none(user)
    if member is None:
        raise Http404("this account is not a member of the course")
    return member


def student_of(user) -> Student:
    """The gradebook student an account hands in as (an instructor trying the site gets one of their own)."""
    member = member_of(user)
    if member.student is None:
        member.student, _ = Student.objects.get_or_create(student_id=f"{STAFF_PREFIX}{user.username}")
        member.save(update_fields=["student"])
    return member.student


def _refuse(request: HttpRequest, reason: str) -> NoReturn:
    """A page the account may not see is a 404, the same as one that does not exist (it reveals
    nothing); under /api/v1/ a 403 with its reason, as JSON (service/core/boundary.py's handler403)."""
    if is_api(request):
        raise PermissionDenied(reason)
    raise Http404("no such page")


def staff_only(request: HttpRequest) -> None:
    """Refuse anyone but the course's staff (instructors and teaching assistants): the check itself,
    which ``staff_required`` makes before its view runs."""
    if not member_of(request.user).is_staff_member:
        _refuse(request, STAFF_ONLY_API)


def staff_required(view: View) -> View:
    """The view is the course's staff's. Put it under ``login_required`` (or ``api_view``), so that
    an anonymous visitor is sent to sign in first, and under the method's check, as the views have it."""

    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        staff_only(request)
        return view(request, *args, **kwargs)

    return checked  # type: ignore[return-value]


def instructor_only(request: HttpRequest) -> None:
    """Refuse anyone but the course's instructors: the check itself, for a view whose reading is the
    staff's and whose changes are the instructor's, and which ``instructor_required`` makes."""
    if not member_of(request.user).is_instructor:
        _refuse(request, "only the course's instructors change its settings")


def instructor_required(view: View) -> View:
    """The view changes the course's settings: the instructor's only, never a teaching assistant's."""

    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        instructor_only(request)
        return view(request, *args, **kwargs)

    return checked  # type: ignore[return-value]


def job_for(user, job_id: int) -> Job:
    """A job the account may see: its own, or any for the course's staff. Anything else is a 404,
    the same as a job that does not exist, so ids reveal nothing."""
    job = Job.objects.filter(id=job_id).select_related("student", "submission").first()
    if job is None:
        raise Http404("no such submission")
    member = member_of(user)
    if not member.is_staff_member and job.student_id != student_of(user).id:
        raise Http404("no such submission")
    return job


def due_for(spec: AssignmentSpec, student: Student) -> datetime | None:
    """The student's due time: the assignment's, or their extension's."""
    return student_due(book(), spec, student)


def hidden_results_visible(spec: AssignmentSpec, student: Student) -> bool:
    """Whether every score of the assignment is shown to the student now (autograder.visibility:
    every check's visibility, their own due time, what the staff have published)."""
    from autograder.visibility import scores_shown
    from gradebook.publishing import published_state

    return scores_shown(spec.visibility_rules, due_for(spec, student), timezone.now(), published_state(book(), spec))


def hand_in_warnings(spec: AssignmentSpec, student: Student) -> list[str]:
    """What the student is told before a hand-in now (gradebook.counting.hand_in_warnings): the
    hand-in page and the API's list of assignments say the same sentences."""
    from gradebook.counting import hand_in_warnings as warnings

    return warnings(book(), spec, student, timezone.now(), hidden_results_visible(spec, student))


def counted_submission_id(spec: AssignmentSpec, student: Student) -> int | None:
    """The id of the student's submission that counts (gradebook.grades.counting_submission)."""
    from gradebook.grades import counting_submission

    counted = counting_submission(book(), spec, student)
    return None if counted is None else counted.id


def shown_report(job: Job, spec: AssignmentSpec, for_staff: bool) -> dict[str, Any] | None:
    """A graded job's report as its reader may see it: the grader's paths and tools never; each
    check, score and hand mark only as autograder.visibility allows the student (staff see all)."""
    if job.submission is None:
        return None
    return shown_submission(job.submission, spec, job.student, for_staff)


def shown_submission(submission, spec: AssignmentSpec, student: Student, for_staff: bool) -> dict[str, Any]:
    """``shown_report`` of a gradebook submission (the one that counts, on the assignments' list)."""
    from autograder.visibility import student_view
    from gradebook.publishing import published_state

    report: Report = report_of(book(), spec, submission)
    if for_staff:
        data = report.model_dump(mode="json", exclude={"submission", "reference", "sandbox", "visibility"})
        data["hidden_results"] = "shown"
        return data
    # The one rule (a hidden test's own fault shows its code: never in the student's view).
    published = published_state(book(), spec)
    view = student_view(report, spec.visibility_rules, due_for(spec, student), timezone.now(), published)
    return view.as_report(report)
