"""The student's pages of a hand-in: the course's assignments, one assignment (download, hand in, run the
practice checks, your submissions), one submission (its state, then its feedback)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

from gradebook.grades import COUNTS_HELP, counting_submission
from service.core.access import (
    assignment_or_404,
    assignments,
    book,
    counted_submission_id,
    due_for,
    hand_in_warnings,
    instructor_required,
    job_for,
    member_of,
    shown_report,
    shown_submission,
    state,
    student_of,
)
from service.errors import UploadRefused

from . import forms, practice
from .models import ClosedAssignment, Job
from .releases import own_notebook_response
from .uploads import allowance, read_upload, store


@login_required
@require_safe
def assignment_list(request: HttpRequest) -> HttpResponse:
    student = student_of(request.user)
    staff = member_of(request.user).is_staff_member
    rows = []
    for spec in assignments().values():
        # The student's hand-ins (a regrade the staff queued is none), the latest one's state, and
        # the grade that counts (gradebook.grades.counting_submission) as its reader may see it (the
        # hidden tests' rules kept).
        jobs = Job.objects.filter(student=student, assignment=spec.name, regrade=False).select_related("submission")
        latest = jobs.order_by("-id").first()
        counted = counting_submission(book(), spec, student)
        shown = shown_submission(counted, spec, student, staff) if counted is not None else None
        rows.append(
            {
                "spec": spec,
                "due": due_for(spec, student),
                "submissions": jobs.count(),
                "latest": latest,
                "report": shown,
            }
        )
    from service.exams.views import exams_open_for  # the online exams open to this student (README "Exams")

    return render(request, "service/handin/assignments.html", {"rows": rows, "exams": exams_open_for(student)})


@login_required
@require_http_methods(["GET", "POST"])
def assignment_page(request: HttpRequest, name: str) -> HttpResponse:
    received = timezone.now()  # a hand-in's first time (service/handin/live.py), before the upload is read
    spec = assignment_or_404(name)
    student = student_of(request.user)
    member = member_of(request.user)
    switch = forms.OpenOrClose(request.POST)
    if request.method == "POST" and switch.is_valid():
        return _open_or_close(request, spec.name, switch.cleaned_data["submissions"])
    if request.method == "POST":
        form = forms.HandIn(request.POST, request.FILES)
        if not form.is_valid():
            messages.error(request, "choose a notebook to hand in")
        else:
            upload = form.cleaned_data["notebook"]
            try:
                job = store(state(), student, spec, upload.name or "", read_upload(upload), received)
            except UploadRefused as refused:
                messages.error(request, str(refused))
            else:
                return redirect("submission", job_id=job.id)
        return redirect("assignment", name=name)
    # The student's hand-ins, each with its own time, and its score as it stands now (a regrade
    # the staff queued grades one of them again: never a hand-in of its own), as its reader may see
    # it (README "The pages"); the one that counts for their grade marked.
    jobs = list(
        Job.objects.filter(student=student, assignment=spec.name, regrade=False)
        .select_related("submission")
        .order_by("-id")
    )
    counted = counting_submission(book(), spec, student)
    regraded = set(  # a regrade is an event of its submission: graded again, whatever the clocks say
        Job.objects.filter(student=student, assignment=spec.name, regrade=True, state=Job.GRADED).values_list(
            "submission_id", flat=True
        )
    )
    for job in jobs:
        job.shown = shown_report(job, spec, member.is_staff_member) if job.state == Job.GRADED else None
        job.counts = counted is not None and job.submission_id == counted.id
        job.regraded = job.submission_id is not None and job.submission_id in regraded
    context = {
        "spec": spec,
        "due": due_for(spec, student),
        "jobs": jobs,
        "refused": allowance(student, spec),
        "warnings": hand_in_warnings(spec, student),
        "counts": COUNTS_HELP[spec.counts],
        "closed": ClosedAssignment.objects.filter(name=spec.name).first(),
        "instructor": member.is_instructor,
        **_practice_context(student, spec),
    }
    return render(request, "service/handin/assignment.html", context)


def _practice_context(student, spec) -> dict:
    """The assignment page's practice checks: how many, the runs left, the latest run (its live part)."""
    count = practice.practice_count(spec)
    if not count:
        return {"practice": 0}
    run = practice.latest_run(student, spec)
    return {
        "practice": count,
        "practice_refused": practice.practice_allowance(student, spec),
        "runs_left": practice.runs_left(student, spec),
        "run": practice.shown(run) if run else None,
        "poll": practice.poll_every(run) if run else None,
    }


@login_required
@require_http_methods(["GET", "POST"])
def practice_page(request: HttpRequest, name: str) -> HttpResponse:
    """POST: queue a run of the student's practice checks (on the notebook sent, else their latest
    hand-in), then back to the assignment's page, where the run's result appears when it is ready.
    GET ``?part=live``: that live part alone, for the student's own latest run (never another's: the
    run is the signed-in student's, by who asks, not by an id)."""
    spec = assignment_or_404(name)
    student = student_of(request.user)
    if request.method == "GET":
        if request.GET.get("part") != "live":
            return redirect(reverse("assignment", args=[spec.name]) + "#practice")
        return render(request, "service/handin/practice_live.html", {"spec": spec, **_practice_context(student, spec)})
    form = forms.Practice(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, form.first_error())
    else:
        try:
            practice.request_practice(state(), student, spec, form.upload(read_upload), form.cleaned_data["question"])
        except UploadRefused as refused:
            messages.error(request, str(refused))
    return redirect(reverse("assignment", args=[spec.name]) + "#practice")


@instructor_required
def _open_or_close(request: HttpRequest, name: str, submissions: str) -> HttpResponse:
    """The instructor opens or closes the assignment to hand-ins (a course setting: not a TA's)."""
    if submissions == "close":
        ClosedAssignment.objects.get_or_create(name=name, defaults={"closed_by": request.user.get_username()})
        messages.info(request, "submissions are closed: students' hand-ins are refused until you open them")
    else:
        ClosedAssignment.objects.filter(name=name).delete()
        messages.info(request, "submissions are open")
    return redirect("assignment", name=name)


@login_required
@require_safe
def download_notebook(request: HttpRequest, name: str) -> HttpResponse:
    """The student's own notebook (their values drawn in it, for an assignment with parameters)."""
    student = student_of(request.user)  # members of the course only
    spec = assignment_or_404(name)
    return own_notebook_response(spec, state(), student.student_id)


def _not_their_values(spec, job: Job, report: dict) -> str:
    from autograder.reports.model import OwnValues
    from gradebook.own_values import not_theirs

    values = report.get("own_values")
    return not_theirs(book(), spec, job.student.student_id, OwnValues.model_validate(values) if values else None)


@login_required
@require_safe
def submission_page(request: HttpRequest, job_id: int) -> HttpResponse:
    """The submission's page; with ``?part=live``, its live part alone, which the page asks for again
    (htmx) until the job has finished: the same view, so refused to exactly whom the page is."""
    job = job_for(request.user, job_id)
    spec = assignment_or_404(job.assignment)
    from service.marking.reviews import threads

    from . import live

    live_part = request.GET.get("part") == "live"
    if live_part:
        job = live.held_until_finished(job)  # answered when the feedback is there, within a second
    member = member_of(request.user)
    staff = member.is_staff_member
    report = shown_report(job, spec, staff) if job.state == Job.GRADED else None
    live.record_shown(job, member)
    context = {
        "job": job,
        "spec": spec,
        "report": report,
        "staff": staff,
        "threads": threads(job),
        "poll": live.poll_every(job),
        # The student's grade is this submission's (by the rule, or the staff's choice).
        "counts": job.state == Job.GRADED
        and not job.regrade
        and job.submission_id is not None
        and counted_submission_id(spec, job.student) == job.submission_id,
        "timeline": live.timeline(job) if staff else None,
        # A notebook of one's own holding another's values: whose, for the staff (gradebook.own_values).
        "not_their_values": _not_their_values(spec, job, report) if staff and report else "",
    }
    part = "service/handin/submission_live.html" if live_part else "service/handin/submission.html"
    return render(request, part, context)
