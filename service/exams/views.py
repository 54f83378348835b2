"""The pages of exams taken online (README "Exams"): the student's exam page (start, answer,
submit, then the results when the exam allows), the small JSON save and state endpoints the
page's script uses (each answer is also a form that works without a script), and the staff's page
of an exam's settings, accommodations, attempts and their log. The rules are exam_sessions.py's;
a student only ever reaches their own attempt (no attempt id is in their addresses)."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from pathlib import Path
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from course.errors import ExamError
from course.exams.grade import is_right, shown_summary
from course.exams.pages import zone_heading
from course.exams.variants import ExamKey, Variant
from course.wording import plural, shown_score
from gradebook.errors import GradebookError
from gradebook.extensions import extend_exam
from gradebook.models import ExamExtension, Student
from service.core.access import book, instructor_only, member_of, staff_required, student_of
from service.errors import ExamRefused, StaleAnswer, WrongCode
from untrusted.mathml import feedback_markdown

from . import sessions
from .forms import ExamPublish, QuestionResults, ReturnTo, StaffAction
from .grading import latest_grading, queue_grading
from .models import ExamAttempt, OnlineExam
from .text import choices_html, question_html

_MARKDOWN = feedback_markdown()  # the feedback: Markdown with math (as MathML), never raw HTML


def _address(request: HttpRequest) -> str:
    # waitress puts the client's address here (from X-Forwarded-For only behind the trusted proxy).
    return request.META.get("REMOTE_ADDR", "") or ""


def _exam(name: str) -> tuple[OnlineExam, Path, ExamKey]:
    """The online exam of this name, its folder and its key; a 404 for anything else."""
    folder = sessions.folders().get(name)
    exam = sessions.with_some_during(OnlineExam.objects.filter(name=name)).first()
    if folder is None or exam is None:
        raise Http404("no such exam")
    try:
        return exam, folder, sessions.key_of(folder)
    except ExamError:
        raise Http404("this exam cannot be taken now; the staff are told on their exam page") from None


def exams_open_for(student: Student) -> list[dict[str, Any]]:
    """The online exams a student sees in their list: those open to them now, and those they took."""
    rows = []
    now = timezone.now()
    folders = sessions.folders()
    for exam in OnlineExam.objects.filter(name__in=list(folders)).order_by("opens_at"):
        attempt = sessions.latest_attempt(exam.name, student)
        if attempt is None and not sessions.open_to(exam, student, now):
            continue
        if attempt is None:
            where = "not started"
        elif attempt.ended_at is None and now < attempt.ends_at:
            where = "in progress"
        else:
            where = "ended"
        try:
            title = sessions.key_of(folders[exam.name]).title  # its title, not its folder's name
        except ExamError:
            title = exam.name
        terms = sessions.terms_of(exam, student)
        rows.append({"name": exam.name, "title": title, "closes_at": terms.closes_at, "state": where})
    return rows


class AnswerForm(forms.Form):
    position = forms.IntegerField(min_value=1, max_value=10_000)
    value = forms.CharField(required=False, strip=False, max_length=sessions.MAX_TEXT + 1)
    # The answer's version as the page read it, "v:" before it ("v:" alone: no answer yet); absent: a
    # save not compared (the last wins).
    version = forms.CharField(required=False, max_length=60)

    def read_version(self) -> str | None:
        given = self.cleaned_data.get("version") or ""
        return given.removeprefix("v:") if given.startswith("v:") else None


def _questions(key: ExamKey, variant: Variant, attempt: ExamAttempt) -> list[dict[str, Any]]:
    """The variant's questions as the page shows them: stems and options with math as MathML,
    the letters of this variant, the answers saved, a zone's title and points before its first
    question (the printed exam's words); never which option is right or why one tempts."""
    given, versions = sessions.saved_of(attempt)
    shown = []
    for question in variant.questions:
        bank = key.questions[question.question]
        texts = {choice.option: choice.text for choice in bank.options}
        shown.append(
            {
                "position": question.position,
                "part": zone_heading(key, variant, question.position),
                "kind": question.kind,
                "stem": question_html(bank.stem),
                "choices": choices_html(
                    ((letter, question_html(texts[option])) for letter, option in question.letters.items()),
                    given.get(question.position, ""),
                ),
                # A written answer's precision and units, as the paper sheet prints them beside its box.
                "expected": bank.written.expected() if bank.written is not None else "",
                "value": given.get(question.position, ""),
                "version": versions.get(question.position, ""),
            }
        )
    return shown


def _with_verdicts(questions: list[dict[str, Any]], key: ExamKey, variant: Variant, withheld: dict[int, str]) -> None:
    """Each answered question graded automatically (a letter, or a written answer by its tolerance:
    the one rule) its result, right or wrong, where it shows during the exam; never the answer itself."""
    placed = {q.position: q for q in variant.questions if q.kind != "open" and q.position not in withheld}
    for question in questions:
        if question["position"] in placed and question["value"]:
            right = is_right(key, placed[question["position"]], question["value"])
            question["verdict"] = "right" if right else "wrong"


# The waiting room's page starts the attempt by itself when the exam opens, each a moment after the
# server's figure, spread over this many seconds: a class's starts arrive over a second or two, not
# in one instant.
START_SPREAD = 2.0


class StartForm(forms.Form):
    """Start (or resume) the exam; the access code where it has one (given in the waiting room
    before the start, it is remembered for this session)."""

    code = forms.CharField(required=False, max_length=200, label="Access code")


def _remembered(name: str) -> str:
    return f"exam-code:{name}"


def _start(
    request: HttpRequest, exam: OnlineExam, key: ExamKey, student: Student, terms: sessions.Terms
) -> ExamAttempt | None:
    """The student's attempt, started or resumed; None when it was refused (said in a message), or when
    the waiting room only took the access code."""
    form = StartForm(request.POST)
    code = (form.cleaned_data["code"] if form.is_valid() else "").strip()
    code = code or request.session.get(_remembered(exam.name), "")
    try:
        if code and exam.access_code and sessions.seconds_until_open(exam, student) is not None:
            sessions.check_code(exam, student, code)  # in the waiting room: checked now, kept for the start
            request.session[_remembered(exam.name)] = code
            messages.info(request, "access code accepted: your exam starts by itself when it opens")
            return None
        return sessions.start(exam, key, student, _address(request), code, terms)
    except WrongCode as refused:
        request.session.pop(_remembered(exam.name), None)
        messages.error(request, str(refused))
    except ExamRefused as refused:
        messages.error(request, str(refused))
    return None


@login_required
@require_http_methods(["GET", "POST"])
def exam_page(request: HttpRequest, name: str) -> HttpResponse:
    exam, _, key = _exam(name)
    student = student_of(request.user)
    terms = sessions.terms_of(exam, student)  # read once: the start and the page use it
    if request.method == "POST":
        started = _start(request, exam, key, student, terms)
        if started is None:  # refused, or the code taken: the page says so, read again (a reload resends nothing)
            return redirect("exam-take", name=name)
        # Started (or resumed): the answer is the exam's page itself, so that a class's start at the
        # proctor's "begin" is one request each, not a post and a page. Starting is idempotent (a resend
        # resumes), and exam.js makes a reload of this page a plain read.
        return _page(request, exam, key, student, started, terms, timezone.now())
    attempt = sessions.latest_attempt(name, student)
    now = timezone.now()
    if attempt is not None:
        sessions.finish_if_due(attempt, key, now)
    return _page(request, exam, key, student, attempt, terms, now)


def _page(
    request: HttpRequest,
    exam: OnlineExam,
    key: ExamKey,
    student: Student,
    attempt: ExamAttempt | None,
    terms: sessions.Terms,
    now: datetime,
) -> HttpResponse:
    """The exam's page for this student now (``terms``: theirs): its start (or waiting room), the
    attempt being taken, or the attempt's end with the results it may show."""
    name = exam.name
    context: dict[str, Any] = {
        "name": name,
        "title": key.title,
        "exam": exam,
        "attempt": attempt,
        "open": sessions.open_to(exam, student, now, terms),
        "terms": terms,
        # Said before Start, rather than refused after it (sessions.start refuses it as well).
        "no_variant": sessions.variant_for(key, student) is None,
        "code_given": bool(exam.access_code and request.session.get(_remembered(name))),
    }
    until = sessions.seconds_until_open(exam, student, now) if attempt is None else None
    if until is not None:  # the waiting room: its page counts down the server's figure
        context["waiting_ms"] = int(until * 1000)
        context["spread_ms"] = int(START_SPREAD * 1000)
    if attempt is None or attempt.ended_at is not None:
        if attempt is not None:  # all, some (their score said to be of those) or none of the results yet
            context |= _shown(exam, attempt, key, now)
            context["answered"] = len(sessions.answers_of(attempt))
            context["again"] = context["open"] and (
                attempt.trial
                or sessions.ExamAttempt.objects.filter(exam=name, student=student).count() < terms.attempts
            )
        return render(request, "service/exams/exam_start.html", context)
    sheet = sessions.sheet_for(key, student)
    if sheet is None:  # the exam was rebuilt without this student since they started
        raise Http404("your variant is no longer in this exam's key; the staff rebuilt it; ask them")
    questions = _questions(*sheet, attempt)
    if sessions.results_while_taking(exam, attempt):  # results "during": each saved check answer's
        withheld = sessions.ResultsRule.of(exam).withheld(attempt, *sheet, now)  # the questions not "during"
        _with_verdicts(questions, *sheet, withheld)
        result = sessions.result_of(attempt, key)
        context["summary"] = shown_summary(*sheet, result, withheld) if result is not None else ""
    context["count"] = len(questions)
    context["answered"] = sum(bool(q["value"]) for q in questions)
    context["seconds_left"] = max(0, int((attempt.ends_at - now).total_seconds()))
    if exam.one_at_a_time:
        try:
            current = min(max(int(request.GET.get("q", "1")), 1), len(questions))
        except ValueError:
            current = 1
        context["numbers"] = [(q["position"], bool(q["value"])) for q in questions]
        context["current"] = current
        context["previous"] = current - 1 if current > 1 else None
        context["following"] = current + 1 if current < len(questions) else None
        questions = [questions[current - 1]]
    context["questions"] = questions
    return render(request, "service/exams/exam_take.html", context)


def _shown(exam: OnlineExam, attempt: ExamAttempt, key: ExamKey, now: datetime) -> dict[str, str]:
    """An ended attempt's results as its student reads them now (sessions.shown_results), as
    exam_results_shown.html lays them out: the student's page and the staff's look at it."""
    shown = sessions.shown_results(exam, attempt, key, now)
    feedback = _MARKDOWN.render(shown.feedback) if shown.summary else ""
    return {"summary": shown.summary, "results_later": shown.later, "feedback_html": feedback}


def _refusal(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


@login_required
@require_POST
def save(request: HttpRequest, name: str) -> HttpResponse:
    """Save one answer of the student's own attempt: JSON ``{"saved": ...}`` or ``{"error": ...}``."""
    exam, _, key = _exam(name)
    student = student_of(request.user)
    attempt = sessions.latest_attempt(name, student)
    form = AnswerForm(request.POST)
    returning = ReturnTo(request.POST)  # a form posted without the page's script: the page again
    wants_page = returning.value("page") is not None
    at = returning.value("q")
    back = reverse("exam-take", args=[name]) + (f"?q={at}" if at else "")
    if attempt is None:
        message, status = "you have not started this exam", 409
    elif not form.is_valid():
        message, status = "an answer names its question's position and its value", 400
    else:
        position, value = form.cleaned_data["position"], form.cleaned_data["value"]
        try:
            version = sessions.save_answer(exam, key, attempt, position, value, _address(request), form.read_version())
        except StaleAnswer as stale:  # another tab saved it: this page shows the newer, keeps its own text
            if wants_page:
                kept = f" What you sent, not saved: {value}" if value.strip() else ""
                messages.error(request, f"{stale}: this page now shows the answer saved there.{kept}")
                return redirect(back)
            return JsonResponse(
                {"error": str(stale), "stale": True, "value": stale.value, "version": stale.version}, status=409
            )
        except ExamRefused as refused:
            message, status = str(refused), 409
        else:
            if wants_page:
                messages.info(request, f"question {position}: saved")
                return redirect(back)
            return JsonResponse(
                {
                    "saved": position,
                    "version": version,
                    "answered": sessions.answered(attempt),
                    "seconds_left": max(0, int((attempt.ends_at - timezone.now()).total_seconds())),
                }
            )
    if wants_page:
        messages.error(request, message)
        return redirect(back)
    return _refusal(status, message)


@login_required
@require_POST
def submit(request: HttpRequest, name: str) -> HttpResponse:
    exam, _, key = _exam(name)
    attempt = sessions.latest_attempt(name, student_of(request.user))
    if attempt is None:
        messages.error(request, "you have not started this exam")
    else:
        try:
            sessions.submit(exam, key, attempt, _address(request))
        except ExamRefused as refused:
            messages.error(request, str(refused))
    return redirect("exam-take", name=name)


@login_required
@require_safe
def attempt_state(request: HttpRequest, name: str) -> HttpResponse:
    """The student's own attempt as the server has it: its clock and the answers saved (never the key)."""
    exam, _, key = _exam(name)
    attempt = sessions.latest_attempt(name, student_of(request.user))
    if attempt is None:
        return _refusal(404, "you have not started this exam")
    now = timezone.now()
    sessions.finish_if_due(attempt, key, now)
    return JsonResponse(
        {
            "exam": name,
            "ends_at": attempt.ends_at.isoformat(),
            "ended": attempt.ended_at is not None,
            "ended_reason": attempt.ended_reason,
            "seconds_left": max(0, int((attempt.ends_at - now).total_seconds())) if attempt.ended_at is None else 0,
            "answers": {str(p): v for p, v in sessions.answers_of(attempt).items()},
            "versions": {str(p): v for p, v in sessions.versions_of(attempt).items()},
        }
    )


# The staff's page.


LOCAL_INPUT = "%Y-%m-%dT%H:%M"  # what a datetime-local input shows and sends (UTC, as the page says)


class MinutesInput(forms.NumberInput):
    """Minutes as a person writes them: ``45``, never ``45.0`` (half a minute stays possible, for a trial)."""

    def __init__(self) -> None:
        super().__init__(attrs={"step": "any", "min": 0})

    def format_value(self, value: Any) -> str | None:
        return shown_score(value) if isinstance(value, int | float) else super().format_value(value)


class SettingsForm(forms.ModelForm):
    class Meta:
        model = OnlineExam
        fields = ["opens_at", "closes_at", "minutes", "one_at_a_time", "results", "access_code", "networks", "trial"]
        labels = {
            "minutes": "Time limit (minutes)",
            "one_at_a_time": "One question at a time",
            "results": "Students see their results",
            "networks": "Allowed networks (one CIDR range a line; empty: anywhere)",
            "trial": "Open now to the staff's own accounts (a trial run, never counted)",
            "access_code": "Access code (empty: none)",
        }
        widgets = {
            "networks": forms.Textarea(attrs={"rows": 3, "cols": 40}),
            "opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL_INPUT),
            "closes_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL_INPUT),
        }

    minutes = forms.FloatField(label="Time limit (minutes)", widget=MinutesInput())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _styled(self)

    def clean_minutes(self) -> float:
        minutes = self.cleaned_data["minutes"]
        if not 0 < minutes <= 60 * 24 * 7:
            raise forms.ValidationError("a time limit is more than 0 minutes and at most a week")
        return minutes

    def clean_networks(self) -> str:
        text = self.cleaned_data["networks"]
        for line in text.splitlines():
            if line.strip():
                try:
                    ipaddress.ip_network(line.strip(), strict=False)
                except ValueError:
                    raise forms.ValidationError(f"{line.strip()!r} is not a network range (as 10.0.0.0/24)") from None
        return text

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        opens, closes = data.get("opens_at"), data.get("closes_at")
        if isinstance(opens, datetime) and isinstance(closes, datetime) and closes <= opens:
            self.add_error("closes_at", "the exam closes after it opens")
        return data


class AccommodationForm(forms.Form):
    student_id = forms.CharField(max_length=400, label="Student id")
    extra_minutes = forms.FloatField(
        min_value=0, max_value=60 * 24 * 7, required=False, label="Extra minutes", widget=MinutesInput()
    )
    closes_at = forms.DateTimeField(
        required=False,
        label="Closes for them at",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL_INPUT),
    )
    attempts = forms.IntegerField(min_value=1, max_value=100, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Ids of its own: the settings form has a closes_at too, and each label names its own field.
        super().__init__(*args, auto_id="terms_%s", **kwargs)
        _styled(self)


def _styled(form: forms.BaseForm) -> None:
    """Bootstrap's classes on a form's controls (service/templates/service/fields.html lays them out)."""
    for field in form.fields.values():
        if isinstance(field.widget, forms.CheckboxInput):
            kind = "form-check-input"
        elif isinstance(field.widget, forms.Select):  # a menu looks like one, never like a text box
            kind = "form-select"
        else:
            kind = "form-control"
        field.widget.attrs.setdefault("class", kind)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def staff_page(request: HttpRequest, name: str) -> HttpResponse:
    """An exam's online settings (the instructor's), accommodations, attempts, and its grading."""
    folder = sessions.folders().get(name)
    if folder is None:
        raise Http404("no such exam")
    exam = OnlineExam.objects.filter(name=name).first()
    form = SettingsForm(instance=exam)
    accommodation = AccommodationForm()
    if request.method == "POST":
        instructor_only(request)
        action = StaffAction(request.POST).value("action")
        if action == "settings":
            form = SettingsForm(request.POST, instance=exam or OnlineExam(name=name))
            if form.is_valid():
                saved = form.save()
                messages.info(request, "saved: the exam's online settings")
                if exam is not None and "results" in form.changed_data:  # the platforms follow what students see
                    try:
                        sessions.send_scores(saved)
                    except ExamError as exc:
                        messages.error(request, f"no scores sent to the platforms: {exc}")
                return redirect("exam-online", name=name)
        elif action == "accommodation":
            accommodation = AccommodationForm(request.POST)
            if accommodation.is_valid() and _accommodate(request, name, accommodation.cleaned_data):
                return redirect("exam-online", name=name)
        elif action == "question_results" and exam is not None:  # each question's own results setting
            if _question_results(request, exam, folder):
                return redirect("exam-online", name=name)
        elif action == "grade" and exam is not None:
            # A job for a worker, not this request's work (service/exams/grading.py): the page says when it is done.
            queue_grading(name, request.user.get_username())
            messages.info(request, "queued: a worker grades the attempts; this page says when it is done")
            return redirect("exam-online", name=name)
    attempts = list(
        ExamAttempt.objects.filter(exam=name).select_related("student").order_by("student__student_id", "number")
    )
    try:
        key = sessions.key_of(folder)
    except ExamError as exc:
        title, problem, scores, zones, questions = name, str(exc), {}, [], None
    else:
        title, problem, scores = key.title, "", sessions.scores_of(attempts, key)
        zones = _zones(key)
        questions = _questions_results(exam, key)
        if key.zones and key.definition is None:
            problem = (
                f"{folder / 'key.json'}: built before the key kept its definition, so no trial run can be "
                "drawn from its zones; build it again with `course exam build --definition ... --force` "
                "(the same seed and roster give every student the same exam)"
            )
    for attempt in attempts:
        attempt.shown_score = scores.get(attempt.pk, "")  # the column the table shows
    context = {
        "name": name,
        "title": title,
        "problem": problem,
        "exam": exam,
        "form": form,
        "accommodation": accommodation,
        "attempts": attempts,
        "accommodations": ExamExtension.objects.filter(exam=name).select_related("student"),
        "instructor": member_of(request.user).is_instructor,
        "grading": latest_grading(name),
        "results": _results(name),
        "zones": zones,
        "publishing": exam is not None and exam.results == OnlineExam.PUBLISHED,
        "questions": questions,  # each question's own results setting, and its own publishing
    }
    return render(request, "service/exams/exam_online.html", context)


@login_required
@require_POST
@staff_required
def publish(request: HttpRequest, name: str) -> HttpResponse:
    """Publish the exam's results to its students, or withdraw them (sessions.publish_results):
    kept with who and when; each counted attempt's score then goes to the platforms as they may see it."""
    exam = OnlineExam.objects.filter(name=name).first()
    if exam is None or name not in sessions.folders():
        raise Http404("no such exam")
    form = ExamPublish(request.POST)
    if not form.is_valid():
        raise BadRequest("publish or unpublish the exam's results")
    published, question = form.value("action") == "publish", form.value("question")
    if question is not None and question not in dict(sessions.question_settings(_exam(name)[2])):
        raise Http404("no such question on this exam")
    what = f"question {question}'s results" if question else "the exam's results"
    try:
        sent = sessions.publish_results(exam, request.user.get_username(), published, question)
    except ExamError as exc:  # the key cannot be read: published all the same, no score sent
        messages.error(request, f"no scores sent to the platforms: {exc}")
    else:
        messages.info(
            request,
            f"{'published' if published else 'withdrawn'}: {what} "
            f"(the scores of {plural(sent, 'student')} go to the platforms as they may now see them)",
        )
    return redirect("exam-online", name=name)


def _questions_results(exam: OnlineExam | None, key: ExamKey) -> dict[str, Any] | None:
    """The staff page's per-question results: the form of each question's own setting, and the
    questions whose results wait for publishing, each with its own publishing."""
    if exam is None:
        return None
    listed = sessions.question_settings(key)
    rule = sessions.ResultsRule.of(exam)
    own = {name: row.results for name, row in rule.own.items()}
    waiting = [
        {"name": name, "label": label, "row": rule.own.get(name)}
        for name, label in listed
        if rule.setting(name) == OnlineExam.PUBLISHED
    ]
    return {"form": QuestionResults(None, listed, own, exam.results), "publishing": waiting}


def _question_results(request: HttpRequest, exam: OnlineExam, folder: Path) -> bool:
    """Each question's own results setting saved (sessions.set_question_results)."""
    try:
        key = sessions.key_of(folder)
    except ExamError as exc:
        messages.error(request, str(exc))
        return False
    own = {row.question: row.results for row in exam.question_results.all()}
    form = QuestionResults(request.POST, sessions.question_settings(key), own, exam.results)
    if not form.is_valid():
        messages.error(request, form.first_error())
        return False
    changed = sessions.set_question_results(exam, form.chosen())
    messages.info(request, "saved: each question's results setting" if changed else "nothing changed")
    return True


def _zones(key: ExamKey) -> list[str]:
    """An exam built from a definition: what each zone draws for each student, as the staff read it."""
    if key.definition is None:
        return []
    return [
        f"Part {number}: {zone.title}: {zone.choose} of {plural(len(zone.questions), 'question')}, "
        f"{plural(zone.points, 'point')} each"
        for number, zone in enumerate(key.definition.zones, start=1)
    ]


def _accommodate(request: HttpRequest, name: str, data: dict[str, Any]) -> bool:
    """The student's extension on the exam, written to the gradebook as ``autograder extend`` writes it."""
    try:
        given = extend_exam(
            book(),
            data["student_id"],
            name,
            extra_minutes=data.get("extra_minutes"),
            until=data.get("closes_at"),
            attempts=data.get("attempts"),
            by=request.user.get_username(),
        )
    except GradebookError as refused:
        messages.error(request, str(refused))
        return False
    messages.info(
        request,
        f"{given.student.student_id}: {plural(given.extra_minutes, 'more minute', 'more minutes')}, "
        f"{plural(given.attempts, 'attempt')}"
        + (f", closes at {given.until:%Y-%m-%d %H:%M %Z}" if given.until else ""),
    )
    return True


@login_required
@require_safe
@staff_required
def attempt_log(request: HttpRequest, name: str, attempt_id: int) -> HttpResponse:
    """One attempt's log: every start, save, refusal and end, with the address it came from."""
    attempt = ExamAttempt.objects.filter(pk=attempt_id, exam=name).select_related("student").first()
    if attempt is None:
        raise Http404("no such attempt")
    return render(request, "service/exams/exam_log.html", {"name": name, "attempt": attempt, "log": attempt.log.all()})


# groups.csv: an exam with generated questions or alternatives, a row per question over its variants.
RESULT_FILES = {"scores.csv": "text/csv", "items.csv": "text/csv", "groups.csv": "text/csv", "items.png": "image/png"}


def _results_folder(name: str) -> Path:
    return sessions.state() / "exams" / name / "results"


def _results(name: str) -> dict[str, Any] | None:
    """The last grading's files, for the staff's page: scores, item analysis, each student's feedback."""
    folder = _results_folder(name)
    if not (folder / "scores.csv").is_file():
        return None
    feedback = sorted(path.stem for path in (folder / "feedback").glob("*.md"))
    return {"files": [file for file in RESULT_FILES if (folder / file).is_file()], "feedback": feedback}


@login_required
@require_safe
@staff_required
def result_file(request: HttpRequest, name: str, file: str) -> HttpResponse:
    """One file of the exam's last grading (``course exam grade``'s): scores.csv, items.csv, groups.csv, items.png,
    or a student's feedback: ``feedback/<student>`` the page the student reads, ``feedback/<student>.md``
    its Markdown file; nothing else of the state folder."""
    folder = _results_folder(name)
    if file in RESULT_FILES:
        path, kind = folder / file, RESULT_FILES[file]
    elif file.startswith("feedback/") and file.removesuffix(".md").removeprefix("feedback/") in (
        _results(name) or {}
    ).get("feedback", []):
        student = file.removesuffix(".md").removeprefix("feedback/")
        path, kind = folder / "feedback" / f"{student}.md", "text/markdown; charset=utf-8"
        if not file.endswith(".md") and path.is_file():  # what the student reads now, its math as MathML
            return _as_read(request, name, student)
    else:
        raise Http404("no such result")
    if not path.is_file():
        raise Http404("no such result")
    return HttpResponse(path.read_bytes(), content_type=kind)


def _as_read(request: HttpRequest, name: str, student_id: str) -> HttpResponse:
    """A student's feedback as they read it now on their exam page (the grading's file holds every
    question's results; the student reads those their results settings show: ResultsRule), with the
    questions whose results they do not see yet, when they will, and by which setting."""
    exam, _, key = _exam(name)
    student = Student.objects.filter(student_id=student_id).first()
    attempt = sessions.latest_attempt(name, student) if student is not None else None
    if student is None or attempt is None:
        raise Http404("no such result")
    now = timezone.now()
    sessions.finish_if_due(attempt, key, now)  # as their own page does before it shows them anything
    context: dict[str, Any] = {
        "name": name,
        "title": key.title,
        "student": student_id,
        "markdown": f"feedback/{student_id}.md",
        "attempt": attempt,
        "withheld": [],
    }
    sheet = sessions.sheet_for(key, student) if attempt.ended_at is not None else None
    if attempt.ended_at is not None:
        context |= _shown(exam, attempt, key, now)
    if sheet is not None:
        rule = sessions.ResultsRule.of(exam)
        placed = {question.position: question for question in sheet[1].questions}
        for position, when in sorted(rule.withheld(attempt, *sheet, now).items()):
            question = sessions.question_name(key, placed[position])
            own = rule.own.get(question)
            why = "its own results setting" if own is not None and own.results else "the exam's results setting"
            context["withheld"].append((position, question, when, why))
    return render(request, "service/exams/exam_result_feedback.html", context)
