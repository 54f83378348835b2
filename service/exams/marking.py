"""Exams' open questions marked on the page: the exams the course lists (``exams`` in course.toml,
folders made by ``course exam build``), and for each open question a queue of its answers, one at a
time: the question's text, where the answer is on the student's paper sheet (q3 of their variant),
the student's name hidden unless asked for, a score from 0 to 1 and a comment. Marks are the same
records ``course exam marks import`` makes: ``course exam grade --gradebook`` counts them. Two
graders never lose each other's work unseen: the last save wins, and the one whose save replaced
another's is told. Empty answers (typed blank online: gradebook.marking.empty_answers' rule) are not in the
queue: the exams' list lists them and gives them 0 with one button (``exam_mark_empty``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from course.exams.csvfiles import ExamError
from course.exams.grade import OPEN_POINTS, load_key
from course.exams.variants import ExamKey
from course.wording import plural
from gradebook.errors import BadEdit
from gradebook.exams import OpenAnswer, open_answers, record_exam_mark, sheets_graded
from gradebook.marking.empty_answers import NO_ANSWER, give_empty_exam_zero
from gradebook.marking.marks import replaced_notice
from service.core.access import book, course, staff_required
from service.marking import forms as marking_forms
from service.marking.answers import (
    ExamQuestion,
    empty_listing,
    exam_answers,
    exam_or_404,
    exam_questions,
    neighbours,
    taken,
)

from . import forms
from .models import OnlineExam
from .text import question_html, question_title


def _answer_page(name: str, question: str, student: str) -> str:
    return reverse("exam-mark", args=[name, question, student])


@login_required
@require_safe
@staff_required
def exams_index(request: HttpRequest) -> HttpResponse:
    """The course's exams, each with its open questions: answers, how many are still to mark, and
    the empty ones (listed, with the button that gives them 0)."""
    exams: list[dict[str, object]] = []
    for name, folder in course().exam_folders.items():
        try:
            key, answers = load_key(folder), taken(name, open_answers(book(), folder))
        except ExamError as exc:
            exams.append({"name": name, "problem": str(exc), "questions": []})
            continue
        questions = [
            {"id": question, "text": standing.answers[0].text, "html": question_html(standing.answers[0].text)}
            | {"answers": len(standing.answers), "to_mark": len(standing.waiting)}
            | empty_listing(
                standing.order,
                standing.empty,
                standing.empty_waiting,
                reverse("exam-mark-empty", args=[name, question]),
                partial(_answer_page, name, question),
            )
            for question, standing in exam_questions(name, answers).items()
        ]
        exams.append({"name": name, "title": key.title, "questions": questions, "sheets": _sheets(name, key)})
    return render(request, "service/exams/exams.html", {"exams": exams})


def _sheets(name: str, key: ExamKey) -> dict[str, int] | None:
    """For an exam on paper, whose answers the list holds (gradebook.exams.open_answers' rule): the
    roster's size, how many sheets were graded and how many students handed none in. None for an
    exam taken online (its attempts say who took it)."""
    if OnlineExam.objects.filter(name=name).exists():
        return None
    roster = {variant.student.student_id for variant in key.variants}
    graded = len(sheets_graded(book(), key.title) & roster)
    return {"roster": len(roster), "graded": graded, "absent": len(roster) - graded}


def _question(name: str, question: str) -> tuple[Path, ExamQuestion]:
    """The exam's folder and its open question's answers, or 404."""
    folder = exam_or_404(name)
    answers = exam_answers(name, folder, question)
    if not answers:
        raise Http404("no such open question")
    return folder, exam_questions(name, answers)[question]


@login_required
@require_safe
@staff_required
def exam_start(request: HttpRequest, name: str, question: str) -> HttpResponse:
    _, standing = _question(name, question)
    if not standing.queue:
        messages.info(request, "every answer to this question is empty")
        return redirect("exams")
    first = next(iter(standing.waiting), standing.queue[0])
    return redirect("exam-mark", name=name, question=question, student_id=first.student_id)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def exam_mark(request: HttpRequest, name: str, question: str, student_id: str) -> HttpResponse:
    folder, standing = _question(name, question)
    answer = next((answer for answer in standing.answers if answer.student_id == student_id), None)
    if answer is None:
        raise Http404("not an answer to mark")
    previous, following = neighbours(standing.order, standing.empty, student_id)
    if request.method == "POST":
        form = forms.ExamMark(request.POST)
        if _save(request, form, folder, answer):
            then = following if form.goes_on else student_id
            return redirect("exam-mark", name=name, question=question, student_id=then)
        return redirect(request.path)
    queue = [a.student_id for a in standing.queue]
    context = {
        "name": name,
        "title": load_key(folder).title,
        "answer": answer,
        "points": OPEN_POINTS,
        "text_html": question_html(answer.text),  # as the student saw it, math as MathML
        "question_title": question_title(answer.text),
        "position": queue.index(student_id) + 1 if student_id in queue else None,
        "count": len(queue),
        "to_mark": len(standing.waiting),
        "show_names": marking_forms.NamesShown(request.GET).value("names", False),
        "previous": previous,
        "next": following,
        # Taken online: the student's typed answer (service/exams/sessions.py), not a paper sheet.
        "online": standing.texts[student_id],
    }
    return render(request, "service/exams/mark_exam_answer.html", context)


@login_required
@require_http_methods(["POST"])
@staff_required
def exam_mark_empty(request: HttpRequest, name: str, question: str) -> HttpResponse:
    """The exams' list's button: 0 with "No answer was given." to each empty answer it listed that
    is still empty and not marked, each through record_exam_mark (gradebook.marking.empty_answers)."""
    folder, standing = _question(name, question)
    form = marking_forms.EmptyAnswers(request.POST, answers=sorted(standing.empty_waiting))
    chosen = form.value("answers", [])
    marked = give_empty_exam_zero(book(), folder, question, chosen, request.user.get_username())
    messages.success(request, f"{question}: {plural(len(marked), 'empty answer')} given 0: {NO_ANSWER}")
    return redirect("exams")


def _save(request: HttpRequest, form: forms.ExamMark, folder: Path, answer: OpenAnswer) -> bool:
    if not form.is_valid():
        messages.error(request, f"the score is a number between 0 and {OPEN_POINTS:g}")
        return False
    score, seen = form.cleaned_data["score"], form.cleaned_data["seen"]
    notice = replaced_notice(answer.marked_at, seen)
    if notice:
        messages.warning(request, notice)
    try:
        record_exam_mark(
            book(),
            folder,
            answer.student_id,
            answer.question,
            score,
            form.cleaned_data["comment"],
            by=request.user.get_username(),
        )
    except BadEdit as exc:
        messages.error(request, str(exc))
        return False
    return True
