"""Exams' open questions marked on the page: the exams the course lists (``exams`` in course.toml,
folders made by ``course exam build``), and for each open question a queue of its answers, one at a
time: the question's text, where the answer is on the student's paper sheet (q3 of their variant),
the student's name hidden unless asked for, a score from 0 to 1 and a comment. Marks are the same
records ``course exam marks import`` makes: ``course exam grade --gradebook`` counts them. Two
graders never lose each other's work unseen: the last save wins, and the one whose save replaced
another's is told."""

from __future__ import annotations

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from course.exams.csvfiles import ExamError
from course.exams.grade import OPEN_POINTS, load_key
from gradebook.errors import BadEdit
from gradebook.exams import OpenAnswer, open_answers, record_exam_mark
from gradebook.marks import replaced_notice
from untrusted.mathml import answer_markdown

from . import forms
from .access import book, course, staff_required
from .exam_sessions import online_answer
from .hand_grading import exam_answers, exam_or_404, taken

_MARKDOWN = answer_markdown()  # a question's text: Markdown with math, never raw HTML


@login_required
@require_safe
@staff_required
def exams_index(request: HttpRequest) -> HttpResponse:
    """The course's exams, each with its open questions: answers, and how many are still unmarked."""
    exams: list[dict[str, object]] = []
    for name, folder in course().exam_folders.items():
        try:
            title, answers = load_key(folder).title, taken(name, open_answers(book(), folder))
        except ExamError as exc:
            exams.append({"name": name, "problem": str(exc), "questions": []})
            continue
        questions: dict[str, dict] = {}
        for answer in answers:
            row = questions.setdefault(
                answer.question, {"id": answer.question, "text": answer.text, "answers": 0, "to_mark": 0}
            )
            row["answers"] += 1
            row["to_mark"] += answer.score is None
        exams.append({"name": name, "title": title, "questions": list(questions.values())})
    return render(request, "service/exams.html", {"exams": exams})


@login_required
@require_safe
@staff_required
def exam_start(request: HttpRequest, name: str, question: str) -> HttpResponse:
    answers = exam_answers(name, exam_or_404(name), question)
    if not answers:
        raise Http404("no such open question")
    first = next((answer for answer in answers if answer.score is None), answers[0])
    return redirect("exam-mark", name=name, question=question, student_id=first.student_id)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def exam_mark(request: HttpRequest, name: str, question: str, student_id: str) -> HttpResponse:
    folder = exam_or_404(name)
    answers = exam_answers(name, folder, question)
    position = next((i for i, answer in enumerate(answers) if answer.student_id == student_id), None)
    if position is None:
        raise Http404("not an answer to mark")
    answer = answers[position]
    following = answers[(position + 1) % len(answers)]
    if request.method == "POST":
        form = forms.ExamMark(request.POST)
        if _save(request, form, folder, answer):
            then = following if form.goes_on else answer
            return redirect("exam-mark", name=name, question=question, student_id=then.student_id)
        return redirect(request.path)
    context = {
        "name": name,
        "title": load_key(folder).title,
        "answer": answer,
        "points": OPEN_POINTS,
        "text_html": _MARKDOWN.render(answer.text),
        "position": position + 1,
        "count": len(answers),
        "to_mark": sum(a.score is None for a in answers),
        "show_names": forms.NamesShown(request.GET).value("names", False),
        "previous": answers[position - 1].student_id,
        "next": following.student_id,
        # Taken online: the student's typed answer (service/exam_sessions.py), not a paper sheet.
        "online": online_answer(name, answer.student_id, answer.question),
    }
    return render(request, "service/mark_exam_answer.html", context)


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
