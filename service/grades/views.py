"""The staff's pages (instructors and teaching assistants): an assignment's gradebook, filtered and
sorted, a student's history, and the assignment's statistics with its chart. What they show comes
from the gradebook's own functions, as the commands' files do."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from course.wording import plural
from gradebook.errors import NotFound
from gradebook.grades import COUNTS_HELP, CurrentGrade, current_grades
from gradebook.history import history
from gradebook.stats import statistics
from service.core.access import assignment_or_404, assignments, book, staff_required, state
from service.handin.models import Job
from service.handin.queue import regrade_progress
from service.handin.uploads import stored_upload

from . import forms

FILTERS: dict[str, tuple[str, Callable[[CurrentGrade], bool]]] = {
    "missing": ("nothing handed in", lambda g: g.report is None),
    "late": ("late", lambda g: bool(g.report and g.report.late and g.report.late.percent)),
    "hand": (
        "awaiting hand grading",
        lambda g: bool(
            g.report
            and any(q.status == "manual" and (q.mark is None or q.mark.answer_changed) for q in g.report.questions)
        ),
    ),
}
SORTS = {"student": lambda g: g.student_id, "score": lambda g: (g.final_score is None, -(g.final_score or 0))}
CHART_KEPT = 7 * 24 * 3600  # seconds a drawn chart stays in the cache unasked (a changed one is a new key)
PER_PAGE = 100  # the gradebook's rows on one page: filtered and sorted over the whole course first


@login_required
@require_safe
@staff_required
def gradebook_index(request: HttpRequest) -> HttpResponse:
    """The gradebook of the course's first assignment (the page links to the others)."""
    first = next(iter(assignments()), None)
    if first is None:
        raise Http404("the course has no assignment")
    return redirect("gradebook", name=first)


@login_required
@require_safe
@staff_required
def gradebook_page(request: HttpRequest, name: str) -> HttpResponse:
    spec = assignment_or_404(name)
    # The whole course's grades in a fixed number of queries, without what only a report's own page
    # shows (the checks, the feedback texts); filtered and sorted, then one page of them is shown.
    grades = current_grades(book(), spec, everyone=True, detail=False)
    # The query is the page's own form: a filter, threshold or order it does not offer is left out,
    # as if it had not been asked for (a bookmark of an older page still opens).
    form = forms.GradebookQuery(request.GET, filters=FILTERS, sorts=SORTS)
    shown = form.value("show", "")
    if shown:
        grades = [g for g in grades if FILTERS[shown][1](g)]
    threshold: float | None = form.value("below")
    below = form.data.get("below", "") if threshold is not None else ""  # shown again as it was typed
    if threshold is not None:
        grades = [g for g in grades if g.final_score is not None and g.final_score < threshold]
    order = form.value("sort", "student")
    grades.sort(key=SORTS[order])
    page = Paginator(grades, PER_PAGE).get_page(form.value("page"))  # a page past the end: the last
    rows = [
        {
            "grade": g,
            "scores": [
                next((q for q in g.report.questions if q.id == question.id), None) if g.report else None
                for question in spec.questions
            ],
        }
        for g in page
    ]
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "spec": spec,
        "rows": rows,
        "filters": {key: label for key, (label, _) in FILTERS.items()},
        "shown": shown,
        "below": below,
        "order": order,
        "assignments": assignments().values(),
        "page": page,
        "counts": COUNTS_HELP[spec.counts],
        "query": query.urlencode(),
        "regrading": regrade_progress(spec.name),
        "publishing": _publishing(spec),
    }
    response = render(request, "service/grades/gradebook.html", context)
    if context["regrading"] is not None and context["regrading"].finished_at is None:
        response["Refresh"] = "3"  # reloaded until the regrade is done, as the similarity page (no script)
    return response


def _publishing(spec) -> dict | None:
    """What the gradebook's page says of publishing (None: the assignment's grades publish themselves)."""
    from gradebook.publishing import publications, published_state

    if spec.visibility_rules.publish == "automatic":
        return None
    gradebook = book()
    return {
        "state": published_state(gradebook, spec),
        "history": publications(gradebook, spec),
        "manual": [q.id for q in spec.questions if q.manual],
    }


@login_required
@require_safe
@staff_required
def student_page(request: HttpRequest, student_id: str) -> HttpResponse:
    from gradebook.history import choices
    from gradebook.models import Student

    specs = list(assignments().values())
    try:
        entries = history(book(), student_id, specs)
    except NotFound:
        raise Http404("no such student") from None
    # Each submission's hand-in page (its job: a regrade's is not a hand-in).
    jobs = dict(
        Job.objects.filter(student__student_id=student_id, regrade=False, submission__isnull=False).values_list(
            "submission_id", "id"
        )
    )
    # Each submission beside the one before it, in the same assignment: the pair to compare.
    before: dict[str, int] = {}
    rows = []
    titles = {name: spec.title for name, spec in assignments().items()}
    for entry in entries:
        rows.append(
            {
                "entry": entry,
                "id": entry.id,
                "job": jobs.get(entry.id),
                "previous": before.get(entry.assignment),
                "title": titles.get(entry.assignment, entry.assignment),  # by its title, where still listed
            }
        )
        before[entry.assignment] = entry.id
    chosen = [
        (choice, titles.get(choice.assignment, choice.assignment)) for choice in choices(book(), student_id, specs)
    ]
    standing = {choice.assignment: choice.submission for choice, _ in chosen}  # the latest of each assignment
    name = Student.objects.filter(student_id=student_id).values_list("name", flat=True).first() or ""
    context = {
        "student_id": student_id,
        "student_name": name,
        "rows": rows,
        "choices": chosen,
        "undo": [spec for spec in specs if standing.get(spec.name) is not None],
        "rules": {spec.name: COUNTS_HELP[spec.counts] for spec in specs},
        "assignments": assignments().values(),
    }
    return render(request, "service/grades/student.html", context)


@login_required
@require_safe
@staff_required
def statistics_page(request: HttpRequest, name: str) -> HttpResponse:
    spec = assignment_or_404(name)
    stats = statistics(book(), spec, arrivals=False)  # the page shows no arrival times (the chart does)
    return render(request, "service/grades/statistics.html", {"spec": spec, "stats": stats})


@login_required
@require_safe
@staff_required
def statistics_chart(request: HttpRequest, name: str, chart_name: str) -> HttpResponse:
    """questions.png or overview.png, drawn on the server (as `autograder stats` draws them)."""
    from gradebook.stats import chart, overview_chart

    draw = {"questions": chart, "overview": overview_chart}.get(chart_name)
    if draw is None:
        raise Http404("no such chart")
    spec = assignment_or_404(name)
    stats = statistics(book(), spec)
    # Drawn once per change of what it shows (matplotlib takes longer than reading the grades): kept
    # in the site's cache (the database's, shared by every process) under a digest of its data.
    key = "chart:" + hashlib.sha256(f"{chart_name}\0{stats.model_dump_json()}".encode()).hexdigest()
    png = cache.get(key)
    if png is None:
        image = io.BytesIO()
        draw(image, stats)
        png = image.getvalue()
        cache.set(key, png, timeout=CHART_KEPT)
    return HttpResponse(png, content_type="image/png")


@login_required
@require_http_methods(["POST"])
@staff_required
def override(request: HttpRequest, job_id: int) -> HttpResponse:
    """Set (or, with an empty score, remove) a question's score on a graded submission, with a reason."""
    from django.contrib import messages

    from gradebook.errors import BadEdit
    from gradebook.marking.marks import give_mark, remove_mark
    from service.core.access import job_for

    job = job_for(request.user, job_id)
    spec = assignment_or_404(job.assignment)
    form = forms.Override(request.POST, questions=[q.id for q in spec.questions])
    question = next((q for q in spec.questions if q.id == form.value("question")), None)
    if job.submission is None or question is None:
        raise Http404("no such graded question")
    if form.removes:
        remove_mark(book(), job.submission, question.id)
        _send_score(request, spec, job)
        return redirect("submission", job_id=job.id)
    refused = f"give a score between 0 and {question.points:g}, and the reason the student will read"
    score = form.value("score", -1.0)  # not a number: refused below, with the form's own message
    reason = form.value("reason", "")
    if score < 0 or not reason:
        messages.error(request, refused)
        return redirect("submission", job_id=job.id)
    try:
        give_mark(book(), job.submission, question, score, reason, request.user.get_username())
    except BadEdit as exc:  # out of the question's bounds: the gradebook's words, and what to give
        messages.error(request, f"{exc}: {refused}")
        return redirect("submission", job_id=job.id)
    _send_score(request, spec, job)
    return redirect("submission", job_id=job.id)


def _send_score(request: HttpRequest, spec, job) -> None:
    """The changed score to the course platforms; what they refuse is said on the page."""
    from django.contrib import messages

    from service.lti.scores import score_changed

    for problem in score_changed(spec, job.student):
        messages.warning(request, problem)


@login_required
@require_http_methods(["POST"])
@staff_required
def regrade(request: HttpRequest, name: str) -> HttpResponse:
    """Queue a regrade: of one submission (``job``), of one student's latest and the one that counts
    (``student``), or of every student's latest submission of the assignment and the one that counts; of every question, or of one (``question``: its
    hidden tests alone, the other results kept). Each is a job like any other."""
    from django.contrib import messages

    from service.core.access import job_for
    from service.handin import queue

    spec = assignment_or_404(name)
    form = forms.Regrade(request.POST, questions=[q.id for q in spec.questions])
    if "question" in form.errors:
        raise Http404("no such question")
    if "job" in form.errors:
        raise BadRequest("the submission to regrade is named by its id, a whole number")
    question, job_id = form.value("question", ""), form.value("job")
    if job_id is not None:
        originals = [job_for(request.user, job_id)]
    else:
        from gradebook.grades import counted_rows

        gradebook = book()
        counted = gradebook.run(lambda: set(counted_rows(gradebook, spec).values_list("id", flat=True)))
        originals = queue.latest_graded(spec.name, form.value("student"), counted)
    queue.regrade(originals, question)
    what = f"question {question} of " if question else ""
    messages.info(request, f"{what}{plural(len(originals), 'submission')} queued to be graded again")
    back = form.value("back")
    if back:  # a page of this site, never another's
        return redirect(back)
    return redirect("gradebook", name=spec.name)


@login_required
@require_http_methods(["POST"])
@staff_required
def publish_grades(request: HttpRequest, name: str) -> HttpResponse:
    """Publish the assignment's grades (or one hand-graded question's marks), or undo it
    (gradebook.publishing.publish): recorded with who and why; every student's score then goes to
    the course platforms as the rule now says (FullyGraded once published, Pending before)."""
    from django.contrib import messages

    from autograder.errors import AssignmentError
    from gradebook.errors import BadEdit
    from gradebook.models import Student
    from gradebook.publishing import publish
    from service.lti.scores import score_changed

    spec = assignment_or_404(name)
    form = forms.Publish(request.POST, questions=[q.id for q in spec.questions if q.manual])
    if not form.is_valid():
        raise BadRequest("publish or unpublish, for every question or one graded by hand")
    published, question = form.value("action") == "publish", form.value("question") or None
    try:
        publish(book(), spec, question, published, form.value("reason", ""), request.user.get_username())
    except (BadEdit, AssignmentError) as refused:
        messages.error(request, str(refused))
        return redirect("gradebook", name=spec.name)
    for student in Student.objects.filter(member__isnull=False, submissions__assignment__name=spec.name).distinct():
        for problem in score_changed(spec, student):
            messages.warning(request, problem)
    what = f"question {question}'s marks" if question else "grades"
    messages.info(request, f"{spec.name}: {what} {'published' if published else 'unpublished'}")
    return redirect("gradebook", name=spec.name)


@login_required
@require_http_methods(["POST"])
@staff_required
def choose_counted(request: HttpRequest, name: str) -> HttpResponse:
    """Make one of a student's submissions the one that counts, or (no submission) undo the choice,
    with why (gradebook.counting.choose): recorded with who, shown in their history, and their
    score sent to the course platforms."""
    from django.contrib import messages

    from gradebook.counting import choose
    from gradebook.errors import BadEdit
    from gradebook.models import Student

    spec = assignment_or_404(name)
    form = forms.CountedChoice(request.POST)
    student_id = form.value("student", "")
    student = Student.objects.filter(student_id=student_id).first()
    if student is None:
        raise Http404("no such student")
    back = form.value("back") or reverse("student", args=[student_id])
    if "submission" in form.errors:
        raise BadRequest("the submission is named by its id, a whole number")
    if not form.value("reason"):
        messages.error(request, "say why: the reason is kept with the choice, in the student's history")
        return redirect(back)
    submission = form.value("submission")
    try:
        choose(book(), spec, student_id, submission, form.value("reason"), request.user.get_username())
    except NotFound:
        raise Http404("no such submission of this student") from None
    except BadEdit as refused:
        messages.error(request, str(refused))
        return redirect(back)
    from service.lti.scores import score_changed

    for problem in score_changed(spec, student):
        messages.warning(request, problem)
    if submission is None:
        messages.info(request, f"{spec.name}: the choice is undone; {COUNTS_HELP[spec.counts]}")
    else:
        messages.info(request, f"{spec.name}: submission {submission} is the one that counts now")
    return redirect(back)


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def similarity_page(request: HttpRequest, name: str) -> HttpResponse:
    """The assignment's last similarity report, read from the gradebook with its time, and the button
    that queues a new one. Never computed here: a worker computes what is queued (gradebook.similarity.report)
    while the page, reloading itself, shows how far it has got."""
    from django.contrib import messages

    from gradebook.similarity.fragments import colour, sides
    from gradebook.similarity.report import DEFAULT_THRESHOLD, queue_run, report_of_run, runs_of, values_lines

    spec = assignment_or_404(name)
    if request.method == "POST":
        form = forms.Threshold(request.POST)
        if form.is_valid():
            queue_run(book(), spec.name, form.cleaned_data["threshold"], request.user.get_username())
        else:
            messages.error(request, "threshold: give a share between 0 and 1, such as 0.5")
        return redirect("similarity", name=spec.name)
    last, pending = runs_of(book(), spec.name)
    report = report_of_run(last) if last is not None else None
    threshold = pending.threshold if pending else report.threshold if report else DEFAULT_THRESHOLD
    # Each pair's two codes cut into blocks (gradebook.similarity.fragments): its fragments' regions, numbered
    # alike on both sides, with a little code around them; the rest folded. Escaped by the template.
    pairs = [
        (
            pair,
            [(n, colour(n), f) for n, f in enumerate(pair.fragments, 1)],
            *sides(pair.first_code, pair.second_code, pair.fragments),
        )
        for pair in (report.pairs if report else [])
    ]
    response = render(
        request,
        "service/grades/similarity.html",
        {
            "spec": spec,
            "last": last,
            "report": report,
            "pairs": pairs,
            "pending": pending,
            "threshold": threshold,
            # Each notebook of one's own that holds values not its student's, and whose (escaped by the template).
            "values": list(zip((found.student for found in report.values), values_lines(report), strict=True))
            if report
            else [],
        },
    )
    if pending is not None:
        response["Refresh"] = "3"  # reloaded until the report is done (no script: nothing for the CSP to allow)
    return response


LABELS = {
    "canvas": "Canvas",
    "moodle": "Moodle",
    "csv": "plain CSV",
}  # the grade files' formats, as the page names them


@login_required
@require_http_methods(["GET", "POST"])
@staff_required
def exports_page(request: HttpRequest) -> HttpResponse:
    """The grade files of `autograder grades export`, from the page: Canvas, Moodle or plain CSV."""
    import tempfile
    from pathlib import Path

    from gradebook.exports import FORMATS, WARNINGS, export_grades, grades_table

    if request.method == "GET":
        # What `autograder grades export` warns of for each platform's file of the whole course (the
        # page's default choice), said before the download, which can carry no message of its own.
        table = grades_table(book(), list(assignments().values()))
        warnings = [(LABELS.get(kind, kind), said) for kind, warn in WARNINGS.items() if (said := warn(table))]
        return render(
            request,
            "service/grades/exports.html",
            {"assignments": assignments().values(), "formats": FORMATS, "warnings": warnings},
        )
    form = forms.Export(request.POST, assignments=assignments(), formats=FORMATS)
    if not form.is_valid():
        raise BadRequest(f"choose a format and at least one assignment ({form.first_error()})")
    chosen = [spec for name, spec in assignments().items() if name in form.cleaned_data["assignment"]]
    kind, missing = form.cleaned_data["format"], form.cleaned_data["missing"]
    with tempfile.TemporaryDirectory() as folder:
        path, _ = export_grades(book(), chosen, kind, Path(folder) / "grades.csv", missing)
        response = HttpResponse(path.read_bytes(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="grades-{kind}.csv"'
    return response


@login_required
@require_safe
@staff_required
def diff_page(request: HttpRequest, student_id: str, first: int, second: int) -> HttpResponse:
    """The code of two of a student's submissions, side by side, the changes marked (difflib, which
    escapes what it shows)."""
    import difflib
    from pathlib import Path

    from autograder.submissions import Unreadable, extract
    from gradebook.models import Submission

    rows = {s.id: s for s in Submission.objects.filter(student__student_id=student_id, id__in=[first, second])}
    if set(rows) != {first, second}:
        raise Http404("no such submissions of this student")

    def code(submission: Submission) -> list[str]:
        # A hand-in's file as its job keeps it (relative to the state folder: found after a restore
        # at another path), else the path a command graded it from.
        job = submission.jobs.order_by("-id").first()
        path = stored_upload(state(), job.file) if job is not None else Path(submission.file)
        try:
            return "\n\n".join(cell.source for cell in extract(path).cells).splitlines()
        except Unreadable as unreadable:
            return [f"(cannot be read: {unreadable})"]

    table = difflib.HtmlDiff(wrapcolumn=80).make_table(
        code(rows[first]),
        code(rows[second]),
        f"{rows[first].sha256[:12]}",
        f"{rows[second].sha256[:12]}",
        context=True,
        numlines=3,
    )
    return render(request, "service/grades/diff.html", {"student_id": student_id, "table": table})
