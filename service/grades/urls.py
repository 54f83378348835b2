"""The addresses of the staff's pages on grades:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path

from . import views as staff

urlpatterns = [
    path("staff/gradebook/", staff.gradebook_index, name="gradebook-index"),
    path("staff/gradebook/<str:name>/", staff.gradebook_page, name="gradebook"),
    path("staff/statistics/<str:name>/", staff.statistics_page, name="statistics"),
    path("staff/statistics/<str:name>/<str:chart_name>.png", staff.statistics_chart, name="statistics-chart"),
    path("staff/students/<str:student_id>/", staff.student_page, name="student"),
    path("staff/students/<str:student_id>/diff/<id:first>/<id:second>/", staff.diff_page, name="diff"),
    path("staff/override/<id:job_id>/", staff.override, name="override"),
    path("staff/regrade/<str:name>/", staff.regrade, name="regrade"),
    path("staff/counts/<str:name>/", staff.choose_counted, name="choose-counted"),
    path("staff/publish/<str:name>/", staff.publish_grades, name="publish-grades"),
    path("staff/similarity/<str:name>/", staff.similarity_page, name="similarity"),
    path("staff/exports/", staff.exports_page, name="exports"),
]
