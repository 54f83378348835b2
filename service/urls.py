from django.contrib import admin
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from .core.boundary import IdConverter

# Every id in an address is an <id:...>: a number the database can hold, or a 404 before any view.
register_converter(IdConverter, "id")
# Errors in one place: JSON ({"error": ...}) for every address under /api/v1/, a page otherwise.
handler400 = "service.core.boundary.bad_request"
handler403 = "service.core.boundary.permission_denied"
handler404 = "service.core.boundary.page_not_found"
handler500 = "service.core.boundary.server_error"

# Django's admin, the instructor's fallback console (service/operations/console.py: who gets in), under /admin/.
# Its include is named for its index page, as every other entry here has a name: what walks the
# site's routes by name (the tests' checks of every page) reaches the console too.
CONSOLE = path("admin/", admin.site.urls)
CONSOLE.name = "admin:index"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="assignments", http_method_names=["get", "head"]), name="home"),
    path("", include("service.accounts.urls")),
    path("", include("service.handin.urls")),
    path("", include("service.grades.urls")),
    path("", include("service.marking.urls")),
    path("", include("service.exams.urls")),
    path("", include("service.lessons.urls")),
    path("", include("service.lti.urls")),
    path("", include("service.operations.urls")),
    CONSOLE,
]
