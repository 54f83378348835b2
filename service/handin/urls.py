"""The addresses of the student's assignments, hand-in and submissions, and the JSON API:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path

from . import api, views

urlpatterns = [
    path("assignments/", views.assignment_list, name="assignments"),
    path("assignments/<str:name>/", views.assignment_page, name="assignment"),
    path("assignments/<str:name>/notebook", views.download_notebook, name="notebook"),
    path("assignments/<str:name>/practice", views.practice_page, name="practice"),
    path("submissions/<id:job_id>/", views.submission_page, name="submission"),
    path("api/v1/openapi.json", api.openapi, name="api-openapi"),
    path("api/v1/token", api.token, name="api-token"),
    path("api/v1/assignments", api.assignment_list, name="api-assignments"),
    path("api/v1/assignments/<str:name>/grades", api.grades, name="api-grades"),
    path("api/v1/assignments/<str:name>/notebook", api.notebook, name="api-notebook"),
    path("api/v1/assignments/<str:name>/practice", api.practice_request, name="api-practice-request"),
    path("api/v1/practice/<id:job_id>", api.practice_run, name="api-practice"),
    path("api/v1/submissions", api.submissions, name="api-submissions"),
    path("api/v1/submissions/<id:job_id>", api.submission, name="api-submission"),
]
