from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path, register_converter
from django.views.decorators.http import require_safe
from django.views.generic import RedirectView

from . import (
    api,
    exam_marking,
    exam_room,
    extensions,
    group_marking,
    hub,
    marking,
    online_exams,
    probes,
    reviews,
    staff,
    staff_members,
    throttle,
    views,
)
from .boundary import IdConverter
from .lti import pages as lti_pages
from .lti import views as lti

# Every id in an address is an <id:...>: a number the database can hold, or a 404 before any view.
register_converter(IdConverter, "id")
# Errors in one place: JSON ({"error": ...}) for every address under /api/v1/, a page otherwise.
handler400 = "service.boundary.bad_request"
handler403 = "service.boundary.permission_denied"
handler404 = "service.boundary.page_not_found"
handler500 = "service.boundary.server_error"

# Django's admin, the instructor's fallback console (service/console.py: who gets in), under /admin/.
# Its include is named for its index page, as every other entry here has a name: what walks the
# site's routes by name (the tests' checks of every page) reaches the console too.
CONSOLE = path("admin/", admin.site.urls)
CONSOLE.name = "admin:index"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="assignments", http_method_names=["get", "head"]), name="home"),
    path(
        "accounts/login/",
        throttle.one_try_at_a_time(auth_views.LoginView.as_view(template_name="service/login.html")),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("welcome/<str:secret>/", views.welcome, name="welcome"),
    path("assignments/", views.assignment_list, name="assignments"),
    path("assignments/<str:name>/", views.assignment_page, name="assignment"),
    path("assignments/<str:name>/notebook", views.download_notebook, name="notebook"),
    path("submissions/<id:job_id>/", views.submission_page, name="submission"),
    path("staff/roster/", views.roster_page, name="roster"),
    path("staff/members/", staff_members.staff_members, name="staff-members"),
    path("staff/gradebook/", staff.gradebook_index, name="gradebook-index"),
    path("staff/gradebook/<str:name>/", staff.gradebook_page, name="gradebook"),
    path("staff/statistics/<str:name>/", staff.statistics_page, name="statistics"),
    path("staff/statistics/<str:name>/<str:chart_name>.png", staff.statistics_chart, name="statistics-chart"),
    path("staff/students/<str:student_id>/", staff.student_page, name="student"),
    path("staff/students/<str:student_id>/diff/<id:first>/<id:second>/", staff.diff_page, name="diff"),
    path("staff/override/<id:job_id>/", staff.override, name="override"),
    path("staff/regrade/<str:name>/", staff.regrade, name="regrade"),
    path("staff/counts/<str:name>/", staff.choose_counted, name="choose-counted"),
    path("staff/similarity/<str:name>/", staff.similarity_page, name="similarity"),
    path("staff/exports/", staff.exports_page, name="exports"),
    path("staff/extensions/<str:name>/", extensions.extensions_page, name="extensions"),
    path("staff/reviews/", reviews.open_reviews, name="reviews"),
    path("staff/reviews/<id:review_id>/", reviews.answer, name="review-answer"),
    path("submissions/<id:job_id>/review/", reviews.ask, name="review-ask"),
    path("staff/exams/", exam_marking.exams_index, name="exams"),
    path("staff/exams/<str:name>/<str:question>/", exam_marking.exam_start, name="exam-start"),
    path("staff/exams/<str:name>/<str:question>/<str:student_id>/", exam_marking.exam_mark, name="exam-mark"),
    path("staff/marking/<str:name>/", marking.marking_index, name="marking"),
    path("staff/groups/<str:name>/<str:question_id>/", group_marking.mark_group, name="mark-group"),
    path("staff/exam-groups/<str:name>/<str:question>/", group_marking.mark_exam_group, name="exam-mark-group"),
    path("staff/exam-empty/<str:name>/<str:question>/", exam_marking.exam_mark_empty, name="exam-mark-empty"),
    path("staff/marking/<str:name>/<str:question_id>/", marking.marking_start, name="mark-start"),
    path("staff/marking/<str:name>/<str:question_id>/empty/", marking.mark_empty, name="mark-empty"),
    path("staff/rubric/<str:name>/<str:question_id>/", marking.edit_rubric, name="rubric-edit"),
    path("staff/marking/<str:name>/<str:question_id>/<id:submission_id>/", marking.mark_answer, name="mark-answer"),
    path("staff/platforms/", lti_pages.platforms_page, name="platforms"),
    path("lti/login/", lti.Login.as_view(), name="lti-login"),
    # For a platform that leaves the client id out of its login request: one address per registration.
    path("lti/login/<uuid:registration_uuid>/", lti.Login.as_view(), name="lti-login-for"),
    path("lti/launch/", lti.Launch.as_view(), name="lti-launch"),
    path("lti/deep-link/", lti.deep_link_choice, name="lti-deep-link"),
    path("lti/jwks.json", require_safe(lti.jwks), name="lti-jwks"),
    path("api/v1/openapi.json", api.openapi, name="api-openapi"),
    path("api/v1/token", api.token, name="api-token"),
    path("api/v1/assignments", api.assignment_list, name="api-assignments"),
    path("api/v1/assignments/<str:name>/grades", api.grades, name="api-grades"),
    path("api/v1/assignments/<str:name>/notebook", api.notebook, name="api-notebook"),
    path("api/v1/submissions", api.submissions, name="api-submissions"),
    path("api/v1/submissions/<id:job_id>", api.submission, name="api-submission"),
    # Exams taken online (service/online_exams.py): the student's own attempt only, no attempt id.
    path("exams/<str:name>/", online_exams.exam_page, name="exam-take"),
    path("exams/<str:name>/answer", online_exams.save, name="exam-save"),
    path("exams/<str:name>/submit", online_exams.submit, name="exam-submit"),
    path("exams/<str:name>/state", online_exams.attempt_state, name="exam-state"),
    path("staff/online-exams/<str:name>/", online_exams.staff_page, name="exam-online"),
    path("staff/online-exams/<str:name>/room/", exam_room.exam_room, name="exam-room"),
    path("staff/online-exams/<str:name>/attempts/<id:attempt_id>/", online_exams.attempt_log, name="exam-log"),
    path("staff/online-exams/<str:name>/results/<path:file>", online_exams.result_file, name="exam-result"),
    # JupyterHub sign-in (service/hub.py): the hub's OAuth, started here, finished at the callback
    # (JupyterHub's default address for a service's: <prefix>oauth_callback).
    path("hub/login/", hub.hub_login, name="hub-login"),
    path("oauth_callback", hub.oauth_callback, name="hub-oauth-callback"),
    # For the operator's proxy, orchestrator and Prometheus (service/probes.py).
    path("healthz", probes.healthz, name="healthz"),
    path("readyz", probes.readyz, name="readyz"),
    path("metrics", probes.metrics, name="metrics"),
    CONSOLE,
]
