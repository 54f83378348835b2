"""The accounts' pages: the one-time sign-in link (the student sets a password) and the instructor's
roster (import a roster CSV, download the students' sign-in links)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from course.wording import plural
from service.core.access import book, instructor_required

from . import forms
from .models import Member, SignInLink, digest


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
    return render(request, "service/accounts/welcome.html", {"form": form, "username": link.user.username})


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

    from .members import sign_in_links

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
    return render(request, "service/accounts/roster.html", context)
