"""The addresses of exams taken online, and their marking:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path

from service.marking import groups as group_marking

from . import marking as exam_marking
from . import room as exam_room
from . import views as online_exams

urlpatterns = [
    path("staff/exams/", exam_marking.exams_index, name="exams"),
    path("staff/exams/<str:name>/<str:question>/", exam_marking.exam_start, name="exam-start"),
    path("staff/exams/<str:name>/<str:question>/<str:student_id>/", exam_marking.exam_mark, name="exam-mark"),
    path("staff/exam-groups/<str:name>/<str:question>/", group_marking.mark_exam_group, name="exam-mark-group"),
    path("staff/exam-empty/<str:name>/<str:question>/", exam_marking.exam_mark_empty, name="exam-mark-empty"),
    # Exams taken online (service/exams/views.py): the student's own attempt only, no attempt id.
    path("exams/<str:name>/", online_exams.exam_page, name="exam-take"),
    path("exams/<str:name>/answer", online_exams.save, name="exam-save"),
    path("exams/<str:name>/submit", online_exams.submit, name="exam-submit"),
    path("exams/<str:name>/state", online_exams.attempt_state, name="exam-state"),
    path("staff/online-exams/<str:name>/", online_exams.staff_page, name="exam-online"),
    path("staff/online-exams/<str:name>/publish", online_exams.publish, name="exam-publish"),
    path("staff/online-exams/<str:name>/room/", exam_room.exam_room, name="exam-room"),
    path("staff/online-exams/<str:name>/attempts/<id:attempt_id>/", online_exams.attempt_log, name="exam-log"),
    path("staff/online-exams/<str:name>/results/<path:file>", online_exams.result_file, name="exam-result"),
]
