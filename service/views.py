"""The pages: sign in, the course's assignments, one assignment (download, hand in, your
submissions), one submission (its state, then its feedback), and the one-time sign-in link."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

from course.wording import plural
from gradebook.grades import COUNTS_HELP, counting_submission

from . import forms
from .access import (
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
from .errors import UploadRefused
from .models import ClosedAssignment, Job, Member, SignInLink, digest
from .releases import released_notebook
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
    from .online_exams import exams_open_for  # the online exams open to this student (README "Exams")

    return render(request, "service/assignments.html", {"rows": rows, "exams": exams_open_for(student)})


@login_required
@require_http_methods(["GET", "POST"])
def assignment_page(request: HttpRequest, name: str) -> HttpResponse:
    received = timezone.now()  # a hand-in's first time (service/live.py), before the upload is read
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
    }
    return render(request, "service/assignment.html", context)


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
def download_notebook(request: HttpRequest, name: str) -> FileResponse:
    member_of(request.user)  # members of the course only
    spec = assignment_or_404(name)
    return FileResponse(
        released_notebook(spec, state()).open("rb"), as_attachment=True, filename=spec.released_notebook
    )


@login_required
@require_safe
def submission_page(request: HttpRequest, job_id: int) -> HttpResponse:
    """The submission's page; with ``?part=live``, its live part alone, which the page asks for again
    (htmx) until the job has finished: the same view, so refused to exactly whom the page is."""
    job = job_for(request.user, job_id)
    spec = assignment_or_404(job.assignment)
    from . import live
    from .reviews import threads

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
    }
    part = "service/submission_live.html" if live_part else "service/submission.html"
    return render(request, part, context)


@require_http_methods(["GET", "POST"])
def welcome(request: HttpRequest, secret: str) -> HttpResponse:
    """A one-time sign-in link: the student sets a password, and is signed in."""
    link = SignInLink.objects.filter(digest=digest(secret), used_at=None, expires_at__gt=timezone.now()).first()
    if link is None:
        raise Http404("this sign-in link is not valid any more; ask your instructor for a new one")
    form = SetPasswordForm(link.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        link.used_at = timezone.now()
        link.save(update_fields=["used_at"])
        login(request, link.user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("assignments")
    return render(request, "service/welcome.html", {"form": form, "username": link.user.username})


ROSTER_PAGE = 500  # students on one page of the roster


@login_required
@require_http_methods(["GET", "POST"])
@instructor_required
def roster_page(request: HttpRequest) -> HttpResponse:
    """The instructor's roster: import a roster CSV (as `autograder roster import`), and download the
    students' one-time sign-in links (as `autograder links`)."""
    import tempfile
    from pathlib import Path

    from gradebook.errors import BadFile
    from gradebook.models import Student
    from gradebook.roster import import_roster

    from .accounts import sign_in_links

    if request.method == "POST" and forms.RosterAction(request.POST).value("action") == "links":
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "links.csv"
            sign_in_links(request.build_absolute_uri("/"), out)
            response = HttpResponse(out.read_bytes(), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="sign-in-links.csv"'
        return response
    if request.method == "POST":
        form = forms.RosterImport(request.POST, request.FILES)
        if not form.is_valid():
            messages.error(request, "choose a roster CSV file of at most 2 MB")
            return redirect("roster")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "roster.csv"
            path.write_bytes(form.cleaned_data["roster"].read())
            try:
                result = import_roster(book(), path)
            except BadFile as refused:
                messages.error(request, str(refused).replace(str(path), "the roster"))
                return redirect("roster")
        messages.info(request, f"{plural(result.added, 'student')} added, {result.updated} updated")
        for problem in result.problems:
            messages.error(request, f"row {problem.row}: {problem.what}")
        return redirect("roster")
    from urllib.parse import quote

    from django.core.paginator import Paginator
    from django.db.models import Q

    # A page of the roster at a time, filtered and paged in the database (LIMIT/OFFSET): a course of
    # thousands answers as fast as one of ten.
    students = Student.objects.filter(on_roster=True).order_by("student_id")
    query = forms.RosterQuery(request.GET)
    search = query.value("q", "")
    if search:
        students = students.filter(
            Q(student_id__icontains=search) | Q(name__icontains=search) | Q(email__icontains=search)
        )
    page = Paginator(students, ROSTER_PAGE).get_page(query.value("page"))
    accounts = set(Member.objects.filter(student__in=list(page)).values_list("student_id", flat=True))
    context = {
        "students": page,
        "page": page,
        "accounts": accounts,
        "search": search,
        "query": f"q={quote(search)}" if search else "",
    }
    return render(request, "service/roster.html", context)
