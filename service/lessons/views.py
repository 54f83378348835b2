"""The lessons' pages: the course's lessons, and a lesson's check questions, each with its form, the
student's last answer, right or wrong, and its feedback; for the staff, how the class's last
answers stand. A student reads and writes only their own answers (no student id is in the
addresses); answers count in no score."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from service.core.access import member_of, student_of
from service.errors import TooManyAnswers

from . import answers, questions
from .forms import Answer, Which


@login_required
@require_safe
def lesson_list(request: HttpRequest) -> HttpResponse:
    student = student_of(request.user)
    done = answers.answered(student)
    modules = [
        {
            "title": module.title,
            "number": module.number,
            "lessons": [
                {
                    "lesson": lesson,
                    "questions": len(lesson.checks) + len(lesson.generated),
                    "answered": done.get(lesson.slug, (0, 0)),
                }
                for lesson in module.lessons
            ],
        }
        for module in questions.modules()
    ]
    return render(request, "service/lessons/lessons.html", {"modules": modules})


@login_required
@require_http_methods(["GET", "POST"])
def lesson_page(request: HttpRequest, slug: str) -> HttpResponse:
    lesson = questions.lesson_or_404(slug)
    student = student_of(request.user)
    shown = {question.key: question for question in questions.questions_for(lesson, student.student_id)}
    posted: Answer | None = None
    status, retry_after = 200, None
    if request.method == "POST":
        which = Which(request.POST)
        question = shown.get(which.value("question", ""))
        if question is None or question.kind == questions.UNAVAILABLE:
            raise Http404("no such question")
        posted = Answer(question, request.POST)
        if posted.is_valid():
            value = posted.cleaned_data["answer"]
            try:
                answers.keep(student, lesson.slug, question.key, value, question.is_right(value))
            except TooManyAnswers as refused:
                posted.add_error(None, str(refused))
                status, retry_after = 429, refused.retry_after
            else:
                return redirect(reverse("lesson", args=[lesson.slug]) + f"#{question.key}")
        else:
            status = 400
    last = answers.last_answers(student, lesson.slug)
    counts = answers.class_counts(lesson.slug) if member_of(request.user).is_staff_member else None
    items: list[dict[str, Any]] = []
    for key, question in shown.items():
        given = last.get(key)
        form = posted if posted is not None and posted.shown.key == key else None
        if form is None:
            form = Answer(question, initial={"answer": given.value} if given is not None else {})
        items.append(
            {
                "question": question,
                "form": form,
                "chosen": form["answer"].value(),
                "last": given,
                "feedback": question.feedback(given.value) if given is not None else [],
                "counts": counts.get(key) if counts is not None else None,
            }
        )
    context = {
        "lesson": lesson,
        "key_idea": questions.key_idea(lesson),
        "items": items,
        "generated": any(question.generated for question in shown.values()),
        "staff": counts is not None,
        "limit": answers.PER_MINUTE,
    }
    response = render(request, "service/lessons/lesson.html", context, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response
