"""Hand grading on the page: for each hand-graded question, one answer at a time, the student's name
hidden unless asked for, the answer rendered (Markdown, never raw HTML), the question's rubric (items
applied with a click or a key) and a comment. A mark's score comes from the rubric items' current
points (gradebook.grades.mark_score), so changing an item's points in the manifest regrades every
answer that used it. Two graders never lose each other's work unseen: the last save wins, and the
one whose save replaced another's is told. Empty answers (gradebook.marking.empty_answers) are not in the
queue: the marking list lists them and gives them 0 with one button (``mark_empty``)."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from course.wording import plural
from gradebook.errors import BadEdit
from gradebook.grades import counted_rows, mark_score
from gradebook.marking.empty_answers import NO_ANSWER, empty_answers, give_empty_zero
from gradebook.marking.marks import give_mark, replaced_notice
from gradebook.marking.rubrics import current_rubrics, edit_item
from gradebook.models import Mark, Result, Submission
from service.core.access import assignment_or_404, book, staff_required
from untrusted.mathml import answer_markdown

from . import forms
from .answers import empty_listing, manual_question, neighbours, starters, to_mark

_MARKDOWN = answer_markdown()  # an answer's HTML is shown as text, never run; its math as safe MathML


def _order(spec: AssignmentSpec) -> list[int]:
    """Each student's submission that counts (its id), in the order they were recorded (not by
    name: anonymous); a fixed number of queries, whatever the course's size."""
    return list(counted_rows(book(), spec).select_related(None).order_by("id").values_list("id", flat=True))


def _answer_page(name: str, question_id: str, submission: int) -> str:
    return reverse("mark-answer", args=[name, question_id, submission])


@login_required
@require_safe
@staff_required
def marking_index(request: HttpRequest, name: str) -> HttpResponse:
    spec = assignment_or_404(name)
    manual = [q for q in spec.questions if q.manual]
    order = _order(spec) if manual else []
    standing = to_mark(spec, manual) if manual else {}
    rows = [
        {"question": q, "answers": len(order), "to_mark": len(standing[q.id].waiting)}
        | empty_listing(
            order,
            standing[q.id].empty,
            standing[q.id].empty_waiting,
            reverse("mark-empty", args=[spec.name, q.id]),
            partial(_answer_page, spec.name, q.id),
        )
        for q in manual
    ]
    return render(request, "service/marking/marking_index.html", {"spec": spec, "rows": rows})


@login_required
@require_safe
@staff_required
def marking_start(request: HttpRequest, name: str, question_id: str) -> HttpResponse:
    spec = assignment_or_404(name)
    question = manual_question(spec, question_id)
    order = _order(spec)
    standing = to_mark(spec, [question])[question.id]
    queue = [s for s in order if s not in standing.empty]
    if not queue:
        messages.info(request, "no answer to mark yet" if not order else "every answer to this question is empty")
        return redirect("marking", name=name)
    first = next((s for s in queue if s in standing.waiting), queue[0])
    return redirect("mark-answer", name=name, question_id=question_id, submission_id=first)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def mark_answer(request: HttpRequest, name: str, question_id: str, submission_id: int) -> HttpResponse:
    spec = current_rubrics(book(), assignment_or_404(name))
    question = manual_question(spec, question_id)
    order = _order(spec)
    if submission_id not in order:
        raise Http404("not an answer to mark")
    empty = empty_answers(book(), spec, {question.id: starters(spec).get(question.id, frozenset())})[question.id]
    queue = [s for s in order if s not in empty]
    previous, following = neighbours(order, empty, submission_id)
    submission = Submission.objects.select_related("student", "assignment").get(id=submission_id)
    mark = Mark.objects.filter(
        student=submission.student, assignment=submission.assignment, question_id=question.id
    ).first()
    if request.method == "POST":
        form = forms.MarkAnswer(request.POST, items=[item.id for item in question.rubric])
        saved = _save(request, form, question, submission, mark)
        if saved is None:
            return redirect(request.path)
        then = following if form.goes_on else submission.id
        return redirect("mark-answer", name=name, question_id=question_id, submission_id=then)
    result = Result.objects.filter(submission=submission, question_id=question.id).first()
    answers = (result.answers if result else {}) or {}
    context = {
        "spec": spec,
        "question": question,
        "submission": submission,
        "mark": mark,
        "score": mark_score(mark, question) if mark else None,
        "answer_html": [_MARKDOWN.render(text) for _, text in sorted(answers.items())],
        "position": queue.index(submission_id) + 1 if submission_id in queue else None,
        "count": len(queue),
        "show_names": forms.NamesShown(request.GET).value("names", False),
        "previous": previous,
        "next": following,
        "rubric": [(n, item) for n, item in enumerate(question.rubric, start=1)],
    }
    return render(request, "service/marking/mark_answer.html", context)


@login_required
@require_http_methods(["POST"])
@staff_required
def mark_empty(request: HttpRequest, name: str, question_id: str) -> HttpResponse:
    """The marking list's button: 0 with "No answer was given." to each empty answer it listed that
    is still empty and not marked, each a mark like any other (gradebook.marking.empty_answers)."""
    from service.lti.scores import score_changed

    spec = assignment_or_404(name)
    question = manual_question(spec, question_id)
    standing = to_mark(spec, [question])[question.id]
    form = forms.EmptyAnswers(request.POST, answers=[str(s) for s in standing.empty_waiting])
    chosen = [int(token) for token in form.value("answers", [])]
    texts = starters(spec).get(question.id, frozenset())
    marked = give_empty_zero(book(), spec, question, chosen, texts, request.user.get_username())
    messages.success(request, f"{plural(len(marked), 'empty answer')} given 0: {NO_ANSWER}")
    for submission in marked:
        for problem in score_changed(spec, submission.student):
            messages.warning(request, problem)
    return redirect("marking", name=spec.name)


def _save(
    request: HttpRequest, form: forms.MarkAnswer, question: Question, submission: Submission, mark: Mark | None
) -> Mark | None:
    """Record the grader's mark (the last save wins); None when the form was not valid."""
    if not form.is_valid():
        messages.error(request, "the score and the adjustment are numbers")
        return None
    applied = form.cleaned_data["rubric"]
    adjustment = form.value("adjustment", 0.0)
    score = form.value("score", 0.0) if not question.rubric else 0.0
    seen = form.cleaned_data["seen"]
    try:
        saved = give_mark(
            book(),
            submission,
            question,
            score,
            form.cleaned_data["comment"],
            request.user.get_username(),
            rubric=applied,
            adjustment=adjustment if question.rubric else 0.0,
        )
    except BadEdit as exc:  # the score out of the question's bounds: the form's error
        messages.error(request, str(exc))
        return None
    notice = replaced_notice(mark.marked_at, seen, mark.marked_by) if mark is not None else None
    if notice:
        messages.warning(request, notice)
    from service.lti.scores import score_changed

    for problem in score_changed(assignment_or_404(submission.assignment.name), submission.student):
        messages.warning(request, problem)
    return saved


@login_required
@require_http_methods(["POST"])
@staff_required
def edit_rubric(request: HttpRequest, name: str, question_id: str) -> HttpResponse:
    """Change a rubric item's text and points, or add an item, from the marking page: every answer
    marked with the item is regraded at once (marks follow the items' current points), and the
    changed scores go to the course platforms."""
    from gradebook.errors import BadEdit
    from service.lti.scores import score_changed

    spec = assignment_or_404(name)
    form = forms.RubricItem(request.POST)
    try:
        if not form.is_valid():
            raise ValueError(form.first_error())
        item = edit_item(
            book(),
            spec,
            question_id,
            form.value("item"),
            form.cleaned_data["text"],
            form.cleaned_data["points"],
            request.user.get_username(),
        )
    except ValueError:
        messages.error(request, "an item's points are a number")
    except BadEdit as exc:
        messages.error(request, str(exc))
    else:
        using = Mark.objects.filter(assignment__name=spec.name, question_id=question_id).select_related("student")
        affected = [mark.student for mark in using if item.id in mark.rubric]
        for student in affected:
            for problem in score_changed(spec, student):
                messages.warning(request, problem)
        messages.success(request, f"rubric item {item.id!r} saved; applied to {plural(len(affected), 'mark')} using it")
    back = form.value("back", "")
    if back.startswith(f"/staff/marking/{spec.name}/"):  # only back to this assignment's marking pages
        return redirect(back)
    return redirect("marking", name=spec.name)
