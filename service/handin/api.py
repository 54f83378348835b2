"""The JSON API under ``/api/v1/``: what ``autograder submit`` and the pages' own scripts call.

Authentication: ``Authorization: Token <token>`` (from ``POST /api/v1/token`` or ``autograder
login``), on a JupyterHub's site a hub token (``Authorization: token <hub token>``, checked with the
hub: service/accounts/hub.py), or the pages' session, for which an unsafe method needs Django's CSRF token as a form would.
Errors are ``{"error": "..."}`` with 400, 401, 403, 404, 405 (with ``Allow``), 429 (too many failed
sign-ins, hand-ins or runs of the practice checks, with Retry-After), 503 (the hub cannot be reached to check its token) or 500, every one of them: those of the views here, and those the site answers for any
address under /api/v1/ (an unknown one, a submission id that is not a number) from
service/core/boundary.py's handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from service.accounts import hub
from service.accounts.models import ApiToken, digest
from service.accounts.throttle import one_try_at_a_time
from service.core.access import (
    assignment_or_404,
    assignments,
    book,
    counted_submission_id,
    due_for,
    hand_in_warnings,
    job_for,
    member_of,
    shown_report,
    staff_required,
    state,
    student_of,
)
from service.core.boundary import error_json, not_allowed
from service.core.logs import sign_in_refused
from service.errors import TooManyHandIns, UploadRefused

from . import forms, practice
from .models import Job, PracticeJob
from .uploads import allowance, read_upload, store

View = Callable[..., HttpResponse]


error = error_json


def api_view(methods: set[str]) -> Callable[[View], View]:
    """A view that answers JSON and authenticates by token or session (with CSRF for a session's
    unsafe methods). A method it does not take is a 405 with ``Allow``, before any authentication;
    a 404 it raises is JSON through the site's handler404 (service/core/boundary.py)."""

    def decorate(view: View) -> View:
        @csrf_exempt  # checked below, for sessions only: a token is not sent by a browser on its own
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in methods:
                return not_allowed(request, methods)
            header = request.headers.get("Authorization", "")
            scheme, _, secret = header.partition(" ")
            if scheme.lower() in {"token", "bearer"} and secret.strip():
                # The site's own token first; else, on a hub's site, a hub token, which the hub
                # itself must say is whose (service/accounts/hub.py): never a username merely stated.
                token = ApiToken.objects.filter(digest=digest(secret.strip())).select_related("user").first()
                if token is not None and token.user.is_active:
                    ApiToken.objects.filter(id=token.id).update(last_used_at=timezone.now())
                    request.user = token.user
                elif token is None and hub.enabled():
                    try:
                        request.user = hub.account_for_token(
                            secret.strip(), request.headers.get(hub.CLAIMED_USER_HEADER)
                        )
                    except hub.HubRefused as not_theirs:
                        sign_in_refused("hub token", "", request, str(not_theirs))
                        return error(not_theirs.status, str(not_theirs))
                else:
                    return error(401, "the token is not valid; sign in again with autograder login")
            elif request.user.is_authenticated:
                if request.method not in {"GET", "HEAD", "OPTIONS"}:
                    refused = CsrfViewMiddleware(lambda _: HttpResponse()).process_view(request, None, (), {})
                    if refused is not None:
                        return error(403, "CSRF check failed")
            else:
                return error(401, "sign in: send Authorization: Token <token>")
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


OPENAPI = Path(__file__).with_name("openapi.json")


def openapi(request: HttpRequest) -> HttpResponse:
    """The API's OpenAPI 3.1 description (service/handin/openapi.json)."""
    if request.method not in {"GET", "HEAD"}:
        return not_allowed(request, {"GET", "HEAD"})
    return HttpResponse(OPENAPI.read_bytes(), content_type="application/json")


@csrf_exempt
@one_try_at_a_time
def token(request: HttpRequest) -> HttpResponse:
    """``POST username, password`` -> ``{"token": ...}``, shown once. The sign-in page's own form
    checks them, so both are throttled alike (service/accounts/throttle.py: a locked sign-in is answered
    429 with the reason, by axes's middleware)."""
    if request.method != "POST":
        return not_allowed(request, {"POST"})
    form = AuthenticationForm(request, data=request.POST)
    if not form.is_valid():
        return error(401, "wrong username or password")
    user = form.get_user()
    return JsonResponse({"token": ApiToken.issue(user), "username": user.username}, status=201)


@api_view({"GET"})
def assignment_list(request: HttpRequest) -> HttpResponse:
    student = student_of(request.user)
    listed = []
    for spec in assignments().values():
        due, refused = due_for(spec, student), allowance(student, spec)
        listed.append(
            {
                "name": spec.name,
                "title": spec.title,
                "max_score": spec.max_score,
                "due": due.isoformat() if due else None,
                "feedback": spec.feedback,
                "visibility": spec.visibility_rules.default,
                "can_submit": refused is None,
                "why_not": refused,
                "counts": spec.counts,
                # Said before a hand-in now: late, would replace a better or an on-time grade.
                "hand_in_warnings": hand_in_warnings(spec, student),
                # Checks the student may run (POST .../practice) but never read, and how often.
                "practice_checks": practice.practice_count(spec),
                "practice_per_hour": spec.practice_per_hour,
            }
        )
    return JsonResponse({"assignments": listed})


@api_view({"GET"})
def notebook(request: HttpRequest, name: str) -> HttpResponse:
    """The student's own notebook, as the assignment page's download gives it (what
    gradewright.fetch() and JupyterLab's Fetch put in a student's home): the values drawn for them
    in it, for an assignment with parameters."""
    from .releases import own_notebook_response

    student = student_of(request.user)  # members of the course only
    spec = assignment_or_404(name)
    return own_notebook_response(spec, state(), student.student_id)


@api_view({"GET"})
@staff_required
def grades(request: HttpRequest, name: str) -> HttpResponse:
    """An assignment's current grades, for the course's staff: every student on the roster or with a
    submission (marks included, late penalty taken off, as the grade files have them)."""
    from gradebook.grades import current_grades

    spec = assignment_or_404(name)
    listed = []
    for grade in current_grades(book(), spec, everyone=True):
        report = grade.report
        listed.append(
            {
                "student_id": grade.student_id,
                "name": grade.name,
                "email": grade.email,
                "submissions": grade.submissions,
                "questions": {q.id: q.score for q in report.questions} if report else {},
                "score": report.score if report else None,
                "late_penalty": (report.late.points if report.late else 0.0) if report else None,
                "final_score": report.final_score if report else None,
                "max_score": spec.max_score,
            }
        )
    return JsonResponse({"assignment": spec.name, "grades": listed})


@api_view({"GET", "POST"})
def submissions(request: HttpRequest) -> HttpResponse:
    student = student_of(request.user)
    if request.method == "GET":
        # The student's hand-ins (a regrade the staff queued is none: it grades one of them again).
        jobs = Job.objects.filter(student=student, regrade=False).order_by("-id")
        if assignment := forms.SubmissionsQuery(request.GET).value("assignment"):
            jobs = jobs.filter(assignment=assignment)
        counted = _counted(student, {job.assignment for job in jobs})
        return JsonResponse({"submissions": [_job(job, counted) for job in jobs]})
    received = timezone.now()  # the job's first time (service/handin/live.py), before the upload is read
    form = forms.ApiHandIn(request.POST, request.FILES)
    spec = assignment_or_404(form.value("assignment", ""))
    if "file" in form.errors:
        return error(400, "send the notebook as the multipart field 'file'")
    upload = form.cleaned_data["file"]
    try:
        job = store(state(), student, spec, upload.name or "", read_upload(upload), received)
    except UploadRefused as refused:
        return _refused(refused)
    return JsonResponse(_job(job, set()), status=201)


def _refused(refused: UploadRefused) -> HttpResponse:
    """A hand-in or a run of the practice checks refused: 400 saying why; over an hourly limit, 429
    with Retry-After."""
    if isinstance(refused, TooManyHandIns):
        answer = error(429, str(refused))
        answer["Retry-After"] = str(refused.retry_after)
        return answer
    return error(400, str(refused))


@api_view({"GET"})
def submission(request: HttpRequest, job_id: int) -> HttpResponse:
    from . import live

    job = job_for(request.user, job_id)
    member = member_of(request.user)
    data = _job(job, _counted(job.student, {job.assignment}))
    if job.state == Job.GRADED:
        data["report"] = shown_report(job, assignment_or_404(job.assignment), member.is_staff_member)
    live.record_shown(job, member)
    if member.is_staff_member:  # where the student's wait went: the staff's, never a student's
        data["times"] = live.times(job)
    return JsonResponse(data)


@api_view({"POST"})
def practice_request(request: HttpRequest, name: str) -> HttpResponse:
    """Queue a run of the student's practice checks on the notebook sent as ``file`` (else their
    latest hand-in), of ``question``'s alone if given: 201 with the run, which ``GET
    /api/v1/practice/<id>`` gives again until it is done. 429 with Retry-After over the hourly limit;
    404 for an assignment without practice checks."""
    student = student_of(request.user)
    spec = assignment_or_404(name)
    if not practice.practice_count(spec):  # nothing there to run: as an address that does not exist
        raise Http404("this assignment has no practice checks")
    form = forms.Practice(request.POST, request.FILES)
    if not form.is_valid():
        return error(400, form.first_error())
    try:
        run = practice.request_practice(state(), student, spec, form.upload(read_upload), form.cleaned_data["question"])
    except UploadRefused as refused:
        return _refused(refused)
    return JsonResponse(practice.shown(run), status=201)


@api_view({"GET"})
def practice_run(request: HttpRequest, job_id: int) -> HttpResponse:
    """A run of the practice checks, to its own student alone (anyone else's is a 404, as a run that
    does not exist is: ids reveal nothing)."""
    student = student_of(request.user)
    run = PracticeJob.objects.filter(id=job_id, student=student).first()
    if run is None:
        raise Http404("no such practice run")
    return JsonResponse(practice.shown(run))


def _counted(student, names: set[str]) -> set[int]:
    """The ids of the student's submissions that count, on the assignments named that still exist."""
    specs = assignments()
    counted = (counted_submission_id(specs[name], student) for name in names if name in specs)
    return {pk for pk in counted if pk is not None}


def _job(job: Job, counted: set[int]) -> dict[str, Any]:
    return {
        "id": job.id,
        "assignment": job.assignment,
        "state": job.state,
        "file": job.original_name,
        "sha256": job.sha256,
        "submitted_at": job.created_at.isoformat(timespec="seconds"),
        "graded_at": job.finished_at.isoformat(timespec="seconds") if job.finished_at else None,
        "page": reverse("submission", args=[job.id]),
        "counts": job.submission_id is not None and job.submission_id in counted,  # the grade is this one's
        "error": "the grader could not grade this submission; your instructor has been told"
        if job.state == Job.FAILED
        else "",
    }
