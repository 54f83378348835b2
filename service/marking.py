"""Hand grading on the page: for each hand-graded question, one answer at a time, the student's name
hidden unless asked for, the answer rendered (Markdown, never raw HTML), the question's rubric (items
applied with a click or a key) and a comment. A mark's score comes from the rubric items' current
points (gradebook.grades.mark_score), so changing an item's points in the manifest regrades every
answer that used it. Two graders never lose each other's work unseen: the last save wins, and the
one whose save replaced another's is told."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from autograder.assignment import Question
from gradebook.errors import BadEdit
from gradebook.grades import latest_rows, mark_score
from gradebook.marks import give_mark
from gradebook.models import Mark, Result, Submission
from gradebook.rubrics import current_rubrics, edit_item
from untrusted.mathml import answer_markdown

from . import forms
from .access import assignment_or_404, book, staff_required

_MARKDOWN = answer_markdown()  # an answer's HTML is shown as text, never run; its math as safe MathML


def _queue(assignment: str) -> list[int]:
    """Each student's latest submission (its id), in the order they were recorded (not by name:
    anonymous); one query, whatever the course's size."""
    return list(latest_rows(book(), assignment).select_related(None).order_by("id").values_list("id", flat=True))


def _manual(spec, question_id: str) -> Question:
    question = next((q for q in spec.questions if q.manual and q.id == question_id), None)
    if question is None:
        raise Http404("no such question graded by hand")
    return question


def _waiting(spec, questions: list[Question]) -> dict[str, set[int]]:
    """Per hand-graded question, the latest submissions (their ids) whose answer is not marked, or
    changed since it was: from the whole course's grades at once (a fixed number of queries)."""
    from gradebook.grades import current_grades

    students = dict(latest_rows(book(), spec.name).select_related(None).values_list("student__student_id", "id"))
    waiting: dict[str, set[int]] = {question.id: set() for question in questions}
    for grade in current_grades(book(), spec, detail=False):
        for result in grade.report.questions if grade.report else []:
            if result.id in waiting and (result.mark is None or result.mark.answer_changed):
                waiting[result.id].add(students[grade.student_id])
    return waiting


@login_required
@require_safe
@staff_required
def marking_index(request: HttpRequest, name: str) -> HttpResponse:
    spec = assignment_or_404(name)
    manual = [q for q in spec.questions if q.manual]
    answers = latest_rows(book(), spec.name).count() if manual else 0
    waiting = _waiting(spec, manual) if manual else {}
    rows = [{"question": q, "answers": answers, "to_mark": len(waiting[q.id])} for q in manual]
    return render(request, "service/marking_index.html", {"spec": spec, "rows": rows})


@login_required
@require_safe
@staff_required
def marking_start(request: HttpRequest, name: str, question_id: str) -> HttpResponse:
    spec = assignment_or_404(name)
    question = _manual(spec, question_id)
    queue = _queue(spec.name)
    if not queue:
        messages.info(request, "no answer to mark yet")
        return redirect("marking", name=name)
    waiting = _waiting(spec, [question])[question.id]
    first = next((s for s in queue if s in waiting), queue[0])
    return redirect("mark-answer", name=name, question_id=question_id, submission_id=first)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def mark_answer(request: HttpRequest, name: str, question_id: str, submission_id: int) -> HttpResponse:
    spec = current_rubrics(book(), assignment_or_404(name))
    question = _manual(spec, question_id)
    queue = _queue(spec.name)
    position = next((i for i, s in enumerate(queue) if s == submission_id), None)
    if position is None:
        raise Http404("not an answer to mark")
    submission = Submission.objects.select_related("student", "assignment").get(id=submission_id)
    mark = Mark.objects.filter(
        student=submission.student, assignment=submission.assignment, question_id=question.id
    ).first()
    if request.method == "POST":
        form = forms.MarkAnswer(request.POST, items=[item.id for item in question.rubric])
        saved = _save(request, form, question, submission, mark)
        if saved is None:
            return redirect(request.path)
        following = queue[(position + 1) % len(queue)] if form.goes_on else submission.id
        return redirect("mark-answer", name=name, question_id=question_id, submission_id=following)
    result = Result.objects.filter(submission=submission, question_id=question.id).first()
    answers = (result.answers if result else {}) or {}
    context = {
        "spec": spec,
        "question": question,
        "submission": submission,
        "mark": mark,
        "score": mark_score(mark, question) if mark else None,
        "answer_html": [_MARKDOWN.render(text) for _, text in sorted(answers.items())],
        "position": position + 1,
        "count": len(queue),
        "show_names": forms.NamesShown(request.GET).value("names", False),
        "previous": queue[position - 1],
        "next": queue[(position + 1) % len(queue)],
        "rubric": [(n, item) for n, item in enumerate(question.rubric, start=1)],
    }
    return render(request, "service/mark_answer.html", context)


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
    if mark is not None and mark.marked_at.isoformat() != seen:
        messages.warning(
            request,
            f"{mark.marked_by or 'another grader'} had marked this answer at "
            f"{mark.marked_at:%H:%M:%S}; your mark replaced theirs",
        )
    from .lti.scores import score_changed

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

    from .lti.scores import score_changed

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
        messages.success(request, f"rubric item {item.id!r} saved; {len(affected)} marks that use it follow it")
    back = form.value("back", "")
    if back.startswith(f"/staff/marking/{spec.name}/"):  # only back to this assignment's marking pages
        return redirect(back)
    return redirect("marking", name=spec.name)
