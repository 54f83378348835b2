"""Review requests: a student asks the staff to look again at one question of a graded submission,
with a message; the staff answer in the same thread (and may set the question's score on the page);
both see the thread on the submission's page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from service.accounts.models import staff_request
from service.core.access import assignment_or_404, assignments, job_for, member_of, staff_required
from service.handin.models import Job

from . import forms
from .models import ReviewMessage, ReviewRequest

MAX_MESSAGE = 4000


@login_required
@require_http_methods(["POST"])
def ask(request: HttpRequest, job_id: int) -> HttpResponse:
    """The student's request (or a further message in its thread)."""
    job = job_for(request.user, job_id)
    if member_of(request.user).is_staff_member or job.state != Job.GRADED:
        raise Http404("no such submission to review")
    spec = assignment_or_404(job.assignment)
    form = forms.ReviewAsk(request.POST, questions=[q.id for q in spec.questions], longest=MAX_MESSAGE)
    if not form.is_valid():
        messages.error(request, "say which question, and why it should be looked at again")
        return redirect("submission", job_id=job.id)
    question, text = form.cleaned_data["question"], form.cleaned_data["message"]
    review, _ = ReviewRequest.objects.get_or_create(job=job, question_id=question, defaults={})
    review.state = ReviewRequest.OPEN
    review.save(update_fields=["state"])
    ReviewMessage.objects.create(request=review, author=request.user, text=text)
    messages.info(request, "your request was sent to the course's staff")
    return redirect("submission", job_id=job.id)


@login_required
@require_http_methods(["POST"])
@staff_required
def answer(request: HttpRequest, review_id: int) -> HttpResponse:
    review = ReviewRequest.objects.filter(id=review_id).select_related("job").first()
    if review is None:
        raise Http404("no such review request")
    text = forms.ReviewAnswer(request.POST, longest=MAX_MESSAGE).value("message", "")
    if text:
        ReviewMessage.objects.create(request=review, author=request.user, by_staff=True, text=text)
        review.state = ReviewRequest.ANSWERED
        review.save(update_fields=["state"])
    return redirect("submission", job_id=review.job_id)


@login_required
@require_safe
@staff_required
def open_reviews(request: HttpRequest) -> HttpResponse:
    """The requests waiting for an answer, then those answered (newest first): none vanishes once answered."""
    every = ReviewRequest.objects.select_related("job", "job__student").order_by("-id")
    waiting, answered = (
        list(every.filter(state=ReviewRequest.OPEN)),
        list(every.filter(state=ReviewRequest.ANSWERED)[:200]),
    )
    titles = {name: spec.title for name, spec in assignments().items()}
    for review in waiting + answered:  # the assignment's title where the course still lists it
        review.title = titles.get(review.job.assignment, review.job.assignment)
    return render(request, "service/marking/reviews.html", {"waiting": waiting, "answered": answered})


def context(request: HttpRequest) -> dict[str, int]:
    """Every page's ``reviews_waiting`` for the staff's navigation: how many requests wait for an answer."""
    if not staff_request(request):
        return {}
    return {"reviews_waiting": ReviewRequest.objects.filter(state=ReviewRequest.OPEN).count()}


def threads(job: Job) -> dict[str, ReviewRequest]:
    """A submission's review threads, by question."""
    return {review.question_id: review for review in job.reviews.prefetch_related("messages")}
