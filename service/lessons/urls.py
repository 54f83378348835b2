"""The addresses of the lessons' check questions: included by service/urls.py. The student's own
answers only: no student id is in them."""

from django.urls import path

from . import views

urlpatterns = [
    path("lessons/", views.lesson_list, name="lessons"),
    path("lessons/<str:slug>/", views.lesson_page, name="lesson"),
]
