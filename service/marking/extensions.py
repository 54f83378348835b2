"""An assignment's extensions on a page of the staff's (``autograder extend`` from the browser): each
student's own due time, granted, changed or taken back through gradebook.extensions, the new score
sent to the course platforms (a late penalty may change with it). The staff read it; the instructor
changes it."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from gradebook.errors import GradebookError
from gradebook.extensions import extend, revoke
from gradebook.models import Extension
from service.core.access import assignment_or_404, book, instructor_only, member_of, staff_required
from service.core.forms import Form
from service.templatetags.pages import moment

LOCAL_INPUT = "%Y-%m-%dT%H:%M"  # a datetime-local input's value (UTC, as the page says)


class ExtensionForm(Form):
    """An extension granted or changed (``until``), or taken back (``action`` revoke)."""

    action = forms.ChoiceField(choices=[("grant", "grant"), ("revoke", "revoke")])
    student_id = forms.CharField(max_length=400, label="Student id")
    until = forms.DateTimeField(
        required=False,
        label="Due for them at (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "class": "form-control"}, format=LOCAL_INPUT),
    )


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def extensions_page(request: HttpRequest, name: str) -> HttpResponse:
    spec = assignment_or_404(name)
    if request.method == "POST":
        instructor_only(request)
        _change(request, spec, ExtensionForm(request.POST))
        return redirect("extensions", name=name)
    given = book().run(
        lambda: list(
            Extension.objects.filter(assignment__name=spec.name)
            .select_related("student")
            .order_by("student__student_id")
        )
    )
    context = {
        "spec": spec,
        "extensions": [(extension, extension.until.strftime(LOCAL_INPUT)) for extension in given],
        "instructor": member_of(request.user).is_instructor,
    }
    return render(request, "service/marking/extensions.html", context)


def _change(request: HttpRequest, spec, form: ExtensionForm) -> None:
    from service.lti.scores import score_changed

    if not form.is_valid():
        messages.error(request, form.first_error())
        return
    student_id, until = form.cleaned_data["student_id"].strip(), form.cleaned_data["until"]
    try:
        if form.cleaned_data["action"] == "revoke":
            if not revoke(book(), student_id, spec):
                messages.error(request, f"{student_id} has no extension of {spec.title}")
                return
            said = f"{student_id}: the extension is taken back; due {moment(spec.due)} as everyone"
        elif until is None:
            messages.error(request, "give the student's own due time")
            return
        else:
            extend(book(), student_id, spec, until, by=request.user.get_username())
            said = f"{student_id}: due {moment(until)}"
    except GradebookError as refused:
        messages.error(request, str(refused))
        return
    messages.info(request, said)
    student = book().student(student_id)
    for problem in score_changed(spec, student):
        messages.warning(request, problem)
