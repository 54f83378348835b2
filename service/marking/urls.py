"""The addresses of hand grading, review requests and extensions:
included by service/urls.py, which registers the ``id`` converter they use before it includes them."""

from django.urls import path

from . import extensions, reviews
from . import groups as group_marking
from . import views as marking

urlpatterns = [
    path("staff/extensions/<str:name>/", extensions.extensions_page, name="extensions"),
    path("staff/reviews/", reviews.open_reviews, name="reviews"),
    path("staff/reviews/<id:review_id>/", reviews.answer, name="review-answer"),
    path("submissions/<id:job_id>/review/", reviews.ask, name="review-ask"),
    path("staff/marking/<str:name>/", marking.marking_index, name="marking"),
    path("staff/groups/<str:name>/<str:question_id>/", group_marking.mark_group, name="mark-group"),
    path("staff/marking/<str:name>/<str:question_id>/", marking.marking_start, name="mark-start"),
    path("staff/marking/<str:name>/<str:question_id>/empty/", marking.mark_empty, name="mark-empty"),
    path("staff/rubric/<str:name>/<str:question_id>/", marking.edit_rubric, name="rubric-edit"),
    path("staff/marking/<str:name>/<str:question_id>/<id:submission_id>/", marking.mark_answer, name="mark-answer"),
]
