"""Marking by answer groups (gradebook.marking.groups): a hand-graded question's answers gathered into
groups of identical and near-identical answers, largest first, one group at a time: its
representative answer, its members (each can be taken out before saving), the rubric and a comment
(or, for an exam's open question, a score). Saving gives each member ticked its own mark through
the same writer as the single-answer page (gradebook.marking.marks.give_mark, or record_exam_mark), with
the group's key in common, so history, regrades, overrides and exports see marks like any other.
Members are shown by their place in the question's answers unless the grader asks for names, as on
the single-answer page, and posted by their answer's id (a submission's, or an exam answer's:
``_exam_answer_id``), never by their place, which a student handing in or finishing meanwhile shifts;
students never reach these pages.

Each member whose words differ from the representative's shows its own, the words that differ
highlighted, so that a near-twin is seen before it is marked with the rest; a grader splits one out
of its group in one key (``x``, or its button): it is a group of its own on this grader's pages (the
session keeps who was split out, question by question) until they are put back."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.crypto import salted_hmac
from django.utils.html import escape
from django.views.decorators.http import require_http_methods

from autograder.assignment import Question
from course.exams.grade import OPEN_POINTS
from course.wording import plural
from gradebook.errors import BadEdit
from gradebook.exams import OpenAnswer, open_answers, record_exam_mark
from gradebook.marking.groups import (
    DEFAULT_THRESHOLD,
    Answer,
    AnswerGroup,
    assignment_answers,
    differing_words,
    group_answers,
    vocabulary_of,
)
from gradebook.marking.marks import give_mark, replaced_notice
from gradebook.marking.rubrics import current_rubrics
from service.core.access import assignment_or_404, book, course, staff_required
from service.exams.text import question_html, question_title
from untrusted.mathml import answer_markdown

from . import forms
from .answers import exam_answers, exam_or_404, exam_questions, manual_question, starters, taken, to_mark

_MARKDOWN = answer_markdown()  # an answer's HTML is shown as text, never run; its math as safe MathML


@dataclass
class ShownMember:
    token: str  # what the form posts: a submission's id (an assignment), the answer's id (an exam: _exam_answer_id)
    label: str  # "answer 7", or the student's id and name when names are shown
    status: str  # "to mark", "answer changed since marked", "marked"
    html: str | None  # the member's own words, where they differ from the representative's (those marked)
    seen: str  # when its mark was made, as the page shows it ("" for none): a save since is told
    differs: bool = False  # a word of its own differs from the representative's (not only case or punctuation)


@dataclass
class Page:
    """What the template shows of one question's groups."""

    title: str
    crumbs: list[tuple[str, str]]
    single: str  # the single-answer page of this question
    groups: list[AnswerGroup]
    texts: dict[str, str | None]  # each answer's text by its key
    labels: dict[str, str]
    tokens: dict[str, str]
    statuses: dict[str, str]
    seen: dict[str, str]  # each answer's mark's time as the page read it ("" for none), by its key
    rubric: list = field(default_factory=list)
    points: float = OPEN_POINTS
    question_html: str = ""
    left_out: str = ""  # what the page leaves out, said under its title (the empty answers)
    apart: int = 0  # how many answers this grader split out of their groups
    # Each marked answer's mark as the form takes it (rubric ids, adjustment, score, comment), by its
    # key: a group whose marked members agree opens with that mark filled in (shared_mark).
    marks: dict[str, GivenMark] = field(default_factory=dict)


@dataclass(frozen=True)
class GivenMark:
    """A mark as the group's form shows it: reopened, the group shows what it was given."""

    rubric: tuple[str, ...] = ()
    adjustment: float = 0.0
    score: float | None = None
    comment: str = ""


def shared_mark(group: AnswerGroup, page: Page) -> tuple[GivenMark | None, bool]:
    """The mark the group's marked members share, to fill the form in with (None where none is
    marked); and whether their marks differ (then nothing is filled in, and the page says so)."""
    given = {page.marks[key] for key in group.members if key in page.marks and page.statuses[key] == "marked"}
    if len(given) == 1:
        return next(iter(given)), False
    return None, len(given) > 1


def _query(request: HttpRequest) -> tuple[float, int, bool]:
    query = forms.GroupQuery(request.GET)
    return query.value("threshold", DEFAULT_THRESHOLD), query.value("group", 1), query.value("names", False)


def _here(path: str, threshold: float, number: int, names: bool) -> str:
    shown = {"threshold": f"{threshold:g}", "group": number} | ({"names": 1} if names else {})
    return f"{path}?{urlencode(shown)}"


def _render(request: HttpRequest, page: Page, threshold: float, number: int, names: bool) -> HttpResponse:
    number = min(max(number, 1), max(len(page.groups), 1))
    group = page.groups[number - 1] if page.groups else None
    members = []
    if group is not None:
        shown = page.texts[group.representative]
        for key in group.members:
            text = page.texts[key]
            html, differs = _own_words(shown, text) if key != group.representative and text != shown else (None, False)
            members.append(
                ShownMember(page.tokens[key], page.labels[key], page.statuses[key], html, page.seen[key], differs)
            )
    representative = page.texts[group.representative] if group else None
    given, differing = shared_mark(group, page) if group is not None else (None, False)
    summary = [
        {
            "number": n,
            "size": len(g),
            "to_mark": sum(page.statuses[key] != "marked" for key in g.members),
            "url": _here(request.path, threshold, n, names),
        }
        for n, g in enumerate(page.groups, start=1)
    ]
    context = {
        "page": page,
        "group": group,
        "number": number,
        "members": members,
        "representative_html": _MARKDOWN.render(representative) if representative else "",
        "summary": summary,
        "threshold": threshold,
        "show_names": names,
        "names_url": _here(request.path, threshold, number, True),
        "previous": _here(request.path, threshold, number - 1 if number > 1 else len(page.groups), names),
        "next": _here(request.path, threshold, number % max(len(page.groups), 1) + 1, names),
        "rubric": list(enumerate(page.rubric, start=1)),
        "given": given,  # the group's mark, shown when it is reopened
        "marks_differ": differing,
    }
    return render(request, "service/marking/mark_group.html", context)


def _own_words(representative: str | None, text: str | None) -> tuple[str, bool]:
    """A member's answer as escaped HTML, each word the representative has not in a <mark>; and
    whether there is one."""
    if not text:
        return "<em>No answer.</em>", bool(representative)
    pieces = differing_words(representative or "", text)
    html = "".join(f"<mark>{escape(piece)}</mark>" if differs else escape(piece) for piece, differs in pieces)
    return html, any(differs for _, differs in pieces)


def _apart_key(request: HttpRequest) -> str:
    return f"groups-apart:{request.path}"


def _apart(request: HttpRequest) -> frozenset[str]:
    """The answers (their keys) this grader split out of their groups on this question's page."""
    return frozenset(request.session.get(_apart_key(request), []))


def _split(request: HttpRequest, form: forms.GroupSplit, keys: dict[str, str], labels: dict[str, str]) -> None:
    """A member split out of its group (``keys``: each member's token to its answer's key), or every
    answer split out put back."""
    apart = set(_apart(request))
    if form.value("rejoin", False):
        request.session[_apart_key(request)] = []
        messages.success(request, f"{plural(len(apart), 'answer')} split out put back in their groups")
        return
    token = form.value("split", "")
    if token not in keys:
        messages.error(request, "that answer is no longer one of the question's: nothing was split out")
        return
    request.session[_apart_key(request)] = sorted(apart | {keys[token]})
    messages.success(request, f"{labels[keys[token]]} split out: it is a group of its own now")


def _saved(
    request: HttpRequest,
    threshold: float,
    number: int,
    names: bool,
    count: int,
    form: forms.GroupMark,
    gone: str = "handed in again",
) -> HttpResponse:
    messages.success(request, f"{plural(count, 'answer')} marked through group {number}")
    if form.left_out:
        messages.warning(
            request,
            f"{plural(form.left_out, 'answer')} {gone} since the page was read "
            f"{'was' if form.left_out == 1 else 'were'} left out",
        )
    goes_on = form.goes_on
    return redirect(_here(request.path, threshold, number + 1 if goes_on else number, names))


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def mark_group(request: HttpRequest, name: str, question_id: str) -> HttpResponse:
    spec = current_rubrics(book(), assignment_or_404(name))
    question = manual_question(spec, question_id)
    threshold, number, names = _query(request)
    every = assignment_answers(book(), spec, question.id, starters(spec).get(question.id, frozenset()))
    place = {f.student_id: n for n, f in enumerate(every, start=1)}  # as the marking list names them
    found = [f for f in every if not f.empty]  # the empty answers: the marking list's button
    if request.method == "POST" and forms.GroupSplit.asked(request.POST):
        keys = {str(f.submission_id): f.student_id for f in found}
        labels = {f.student_id: _label(place[f.student_id], f.student_id, names) for f in found}
        _split(request, forms.GroupSplit(request.POST), keys, labels)
        return redirect(_here(request.path, threshold, number, names))
    if request.method == "POST":
        form = forms.GroupMark(
            request.POST, items=[item.id for item in question.rubric], members=[str(f.submission_id) for f in found]
        )
        ticked = {int(token) for token in form.value("members", [])}
        chosen = [f for f in found if f.submission_id in ticked]
        count = _give_group_mark(request, form, question, chosen, place)
        if count is None:
            return redirect(_here(request.path, threshold, number, names))
        return _saved(request, threshold, number, names, count, form)
    waiting = to_mark(spec, [question])[question.id].waiting
    marked = {f.submission_id for f in found} - waiting
    from gradebook.models import Mark

    rows = Mark.objects.filter(assignment__name=spec.name, question_id=question.id).values_list(
        "student__student_id", "marked_at", "rubric", "adjustment", "score", "comment"
    )
    marks = {student: at for student, at, *_ in rows}
    given = {
        student: GivenMark(tuple(sorted(rubric or [])), adjustment, None if rubric else score, comment)
        for student, _, rubric, adjustment, score, comment in rows
    }
    empty = len(every) - len(found)
    page = Page(
        title=f"{question.title or question.id} ({plural(question.points, 'point')})",
        crumbs=[
            (reverse("assignment", args=[spec.name]), spec.title),
            (reverse("marking", args=[spec.name]), "Hand grading"),
        ],
        single=reverse("mark-start", args=[spec.name, question.id]),
        groups=group_answers(
            [f.answer for f in found],
            threshold,
            vocabulary=vocabulary_of(question),
            apart=_apart(request),
        ),
        texts={f.student_id: f.answer.text for f in found},
        labels={f.student_id: _label(place[f.student_id], f.student_id, names) for f in found},
        tokens={f.student_id: str(f.submission_id) for f in found},
        statuses={f.student_id: _status(f.submission_id in marked, f.student_id in marks) for f in found},
        seen={f.student_id: marks[f.student_id].isoformat() if f.student_id in marks else "" for f in found},
        rubric=question.rubric,
        points=question.points,
        left_out=(
            f"{plural(empty, 'empty answer')} left out: the hand-grading list gives them 0 at once." if empty else ""
        ),
        apart=len(_apart(request) & {f.student_id for f in found}),
        marks={student: mark for student, mark in given.items() if student in {f.student_id for f in found}},
    )
    return _render(request, page, threshold, number, names)


def _label(position: int, student_id: str, names: bool) -> str:
    return f"{student_id} (answer {position})" if names else f"answer {position}"


def _status(marked: bool, has_mark: bool) -> str:
    return "marked" if marked else "answer changed since marked" if has_mark else "to mark"


def _give_group_mark(
    request: HttpRequest, form: forms.GroupMark, question: Question, members: list, place: dict[str, int]
) -> int | None:
    """Each ticked member's own mark, through give_mark, with one group key; None when refused. A
    member another grader marked since the page was read is told, as on the single-answer page."""
    if not form.is_valid():
        messages.error(request, "the score and the adjustment are numbers")
        return None
    if not members:
        messages.error(request, "no answer of the group is ticked: nothing was marked")
        return None
    from gradebook.models import Mark, Submission
    from service.lti.scores import score_changed

    key = uuid.uuid4().hex
    submissions = Submission.objects.select_related("student", "assignment").in_bulk([m.submission_id for m in members])
    rubric = bool(question.rubric)

    def write() -> None:  # the whole group, or none of it
        for member in members:
            give_mark(
                book(),
                submissions[member.submission_id],
                question,
                0.0 if rubric else form.value("score", 0.0),
                form.cleaned_data["comment"],
                request.user.get_username(),
                rubric=form.cleaned_data["rubric"],
                adjustment=form.value("adjustment", 0.0) if rubric else 0.0,
                group=key,
            )

    seen = form.value("seen", {})
    before = {
        mark.student.student_id: mark
        for mark in Mark.objects.filter(
            assignment=submissions[members[0].submission_id].assignment,
            question_id=question.id,
            student__student_id__in=[m.student_id for m in members],
        ).select_related("student")
    }
    notices = [
        replaced_notice(
            mark.marked_at, seen.get(str(m.submission_id), ""), mark.marked_by, f"answer {place[m.student_id]}"
        )
        for m in members
        if (mark := before.get(m.student_id)) is not None
    ]
    try:
        book().run(write)
    except BadEdit as exc:  # the score out of the question's bounds: nothing of the group is written
        messages.error(request, str(exc))
        return None
    for notice in notices:
        if notice:
            messages.warning(request, notice)
    spec = assignment_or_404(submissions[members[0].submission_id].assignment.name)
    for member in members:
        for problem in score_changed(spec, submissions[member.submission_id].student):
            messages.warning(request, problem)
    return len(members)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def mark_exam_group(request: HttpRequest, name: str, question: str) -> HttpResponse:
    """An exam's open question by groups: the answers typed online are grouped; one on a paper sheet
    has no text here and is a group of its own; the empty ones are left out (the exams' list's
    button gives them 0)."""
    folder = exam_or_404(name)
    answers = exam_answers(name, folder, question)
    if not answers:
        raise Http404("no such open question")
    standing = exam_questions(name, answers)[question]
    found = {n: a for n, a in enumerate(answers, start=1) if a.student_id not in standing.empty}
    ids = {n: _exam_answer_id(name, a, standing.texts[a.student_id]) for n, a in found.items()}
    threshold, number, names = _query(request)
    if request.method == "POST" and forms.GroupSplit.asked(request.POST):
        keys = {ids[n]: a.student_id for n, a in found.items()}
        labels = {a.student_id: _label(n, a.student_id, names) for n, a in found.items()}
        _split(request, forms.GroupSplit(request.POST), keys, labels)
        return redirect(_here(request.path, threshold, number, names))
    if request.method == "POST":
        # Members are named by their answer's id (never a student id: the page is anonymous), never
        # by their place, which a student finishing meanwhile shifts.
        form = forms.GroupMark(request.POST, items=[], members=list(ids.values()))
        ticked = set(form.value("members", []))
        chosen = {n: a for n, a in found.items() if ids[n] in ticked}
        count = _give_exam_group_mark(request, form, folder, question, chosen, ids)
        if count is None:
            return redirect(_here(request.path, threshold, number, names))
        return _saved(request, threshold, number, names, count, form, gone="changed")
    texts = {a.student_id: standing.texts[a.student_id] for a in found.values()}
    empty = len(standing.empty)
    page = Page(
        title=f"{question_title(answers[0].text)} ({plural(OPEN_POINTS, 'point')})",
        crumbs=[(reverse("exams"), "Exams")],
        single=reverse("exam-start", args=[name, question]),
        groups=group_answers(
            [Answer(key, text) for key, text in texts.items()],
            threshold,
            vocabulary=[answers[0].text],
            apart=_apart(request),
        ),
        texts=texts,
        labels={a.student_id: _label(n, a.student_id, names) for n, a in found.items()},
        tokens={a.student_id: ids[n] for n, a in found.items()},
        statuses={a.student_id: "to mark" if a.score is None else "marked" for a in found.values()},
        seen={a.student_id: a.marked_at.isoformat() if a.marked_at else "" for a in found.values()},
        question_html=question_html(answers[0].text),
        left_out=f"{plural(empty, 'empty answer')} left out: the exams' list gives them 0 at once." if empty else "",
        apart=len(_apart(request) & set(texts)),
        marks={
            a.student_id: GivenMark(score=a.score, comment=a.comment) for a in found.values() if a.score is not None
        },
    )
    return _render(request, page, threshold, number, names)


def _exam_answer_id(exam: str, answer: OpenAnswer, text: str | None) -> str:
    """An exam's open answer as a group page names it: an id of that student's answer to that question
    as the page read it (its text typed online; None on a paper sheet), opaque (the page is anonymous)
    and stable while the answer is. A place in the list is not one: a student who finishes meanwhile
    shifts every place after theirs. An answer changed since the page was read has another id: it is
    left out of the save, and the grader told."""
    said = "\0".join((exam, answer.question, answer.student_id, "paper" if text is None else f"online\0{text}"))
    return salted_hmac("gradewright.exam-group-member", said).hexdigest()[:24]


def exam_groups(folder: Path, question: str, threshold: float = DEFAULT_THRESHOLD) -> list[AnswerGroup]:
    """The groups of an exam's open question (the exam in ``folder``, as course.toml lists it), each
    member a student's id, the empty answers left out: ``course exam marks groups``."""
    name = next((n for n, listed in course().exam_folders.items() if listed.resolve() == folder.resolve()), None)
    if name is None:
        raise BadEdit(f"{folder}: not an exam the course lists (exams in course.toml)")
    # Like the page: an exam taken online offers only the answers of those who took it.
    answers = [answer for answer in taken(name, open_answers(book(), folder)) if answer.question == question]
    if not answers:
        raise BadEdit(f"{folder}: no open question {question!r} (course exam marks export lists them)")
    standing = exam_questions(name, answers)[question]
    texts = {key: text for key, text in standing.texts.items() if key not in standing.empty}
    return group_answers([Answer(key, text) for key, text in texts.items()], threshold, vocabulary=[answers[0].text])


def _give_exam_group_mark(
    request: HttpRequest,
    form: forms.GroupMark,
    folder,
    question: str,
    members: dict[int, OpenAnswer],
    ids: dict[int, str],
) -> int | None:
    """Each ticked member's own mark (``members`` by their place now, ``ids`` their answers' ids), through
    record_exam_mark, with one group key; None when refused. A member another grader marked since the
    page was read is told."""
    score = form.value("score")
    if not form.is_valid() or score is None:
        messages.error(request, f"the score is a number between 0 and {OPEN_POINTS:g}")
        return None
    if not members:
        messages.error(request, "no answer of the group is ticked: nothing was marked")
        return None
    key, by, comment = uuid.uuid4().hex, request.user.get_username(), form.cleaned_data["comment"]
    seen = form.value("seen", {})
    notices = [replaced_notice(a.marked_at, seen.get(ids[n], ""), what=f"answer {n}") for n, a in members.items()]
    try:

        def write() -> None:  # the whole group, or none of it
            for member in members.values():
                record_exam_mark(book(), folder, member.student_id, question, score, comment, by, key)

        book().run(write)
    except BadEdit as exc:
        messages.error(request, str(exc))
        return None
    for notice in notices:
        if notice:
            messages.warning(request, notice)
    return len(members)
