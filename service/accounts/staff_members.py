"""The Staff page (``/staff/members/``, the instructor's): the course's instructors and teaching
assistants, and a form with which an instructor adds one, as ``autograder accounts add`` does
(service/accounts/members.py add_staff). A new account has no password: the page gives, once, a one-time
link with which its owner sets one (valid 14 days, as a student's), never stored but as its digest."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from service.core.access import instructor_required
from service.core.forms import Form
from service.errors import ServiceError

from .members import STAFF_ROLES, add_staff, new_sign_in_link
from .models import Member


class StaffMember(Form):
    """Who to add, and as what: the same as ``accounts add USER --role ROLE --email EMAIL``."""

    username = forms.CharField(
        max_length=150,
        label="Username",
        help_text="What they sign in with: a new account, or one that has no role yet.",
        widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off", "autocapitalize": "none"}),
    )
    role = forms.ChoiceField(
        choices=[(value, label) for value, label in Member.ROLES if value in STAFF_ROLES],
        label="Role",
        help_text="An instructor changes everything; a teaching assistant marks and reads the gradebook.",
        widget=forms.Select(attrs={"class": "form-select"}),
    )
    email = forms.EmailField(
        required=False, label="Email (optional)", widget=forms.EmailInput(attrs={"class": "form-control"})
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for field in self.visible_fields():
            if field.help_text:
                field.field.widget.attrs["aria-describedby"] = f"{field.auto_id}-help"


@login_required
@require_http_methods(["GET", "POST"])
@instructor_required
def staff_members(request: HttpRequest) -> HttpResponse:
    form = StaffMember(request.POST if request.method == "POST" else None)
    done, link, status = "", "", 200
    if form.is_bound and form.is_valid():
        username = form.cleaned_data["username"].strip()
        try:
            done = f"{username}: {add_staff(username, form.cleaned_data['role'], None, form.cleaned_data['email'])}"
        except ServiceError as refused:
            form.add_error("username", str(refused))
        else:
            user = User.objects.get(username=username)
            if not user.has_usable_password():  # made now, or never given one: its owner sets it
                link = new_sign_in_link(request.build_absolute_uri("/"), user)
            form = StaffMember()
    if form.is_bound and form.errors:
        status = 400
    staff = Member.objects.filter(role__in=STAFF_ROLES).select_related("user").order_by("role", "user__username")
    context = {"form": form, "staff": staff, "done": done, "link": link}
    return render(request, "service/accounts/staff_members.html", context, status=status)
