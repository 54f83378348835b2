"""The admin site of the grading service (``/admin/``), the instructor's fallback console: the
course's instructors get in (and a superuser, made with Django's ``createsuperuser``), nobody else.
A visitor who is not signed in is sent to the site's own sign-in page (throttled as every sign-in
is: service/accounts/throttle.py); a member who is not an instructor is answered 404, as the staff's pages
answer a student. The tables are registered by gradebook/admin.py and service/admin.py."""

from __future__ import annotations

from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods


class ConsoleSite(admin.AdminSite):
    site_header = "Gradewright: the instructor's console"
    site_title = "Gradewright console"
    index_title = "The course's tables"
    enable_nav_sidebar = False  # the admin's sidebar filter needs nothing the pages lack, but is one more script

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        if not (user.is_authenticated and user.is_active):
            return False
        if user.is_superuser:
            return True
        from service.accounts.models import Member

        return Member.objects.filter(user=user, role=Member.INSTRUCTOR).exists()

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """The admin's own sign-in form is never shown: one sign-in page for the whole site."""
        if request.user.is_authenticated:
            raise Http404("no such page")
        return redirect_to_login(request.GET.get("next") or request.path, settings.LOGIN_URL)

    def admin_view(self, view: Any, cacheable: bool = False) -> Any:
        """Each console page: a visitor not signed in is sent to the site's sign-in page, a member who
        is not let in is answered 404 (before the admin's own redirect to its sign-in form); a method
        the admin does not take is a 405 with Allow, as everywhere on the site."""
        inner = super().admin_view(view, cacheable)

        @wraps(inner)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            if not self.has_permission(request):
                raise Http404("no such page")
            return inner(request, *args, **kwargs)

        return require_http_methods(["GET", "HEAD", "POST"])(checked)
