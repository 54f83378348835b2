"""A student's grade, derived each time it is asked for, never stored: the automatic results of the
submission that counts (``which_counts``: the assignment's rule, or the staff's choice), the marks
given by hand, and the late penalty (after any extension)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from autograder.lateness import extended_due
from autograder.reports.model import HandMark, OwnValues, QuestionResult, Report, TestOutcome

if TYPE_CHECKING:
    from . import models
    from .book import Gradebook


class CurrentGrade(BaseModel):
    """What one student has now on one assignment (``report`` is None: nothing handed in)."""

    student_id: str
    name: str = ""
    email: str = ""
    canvas_id: str = ""
    moodle_id: str = ""
    sis_id: str = ""
    submissions: int = 0  # hand-ins (a regrade is none)
    report: Report | None = None  # the report of the submission that counts
    dropped: bool = False  # the course's platform says the student left: kept, out of the grade files

    @property
    def final_score(self) -> float | None:
        return None if self.report is None else self.report.final_score


class HandIn(NamedTuple):
    """One submission as the rule of what counts reads it."""

    id: int
    at: datetime  # handed in
    final_score: float = 0.0  # its final score (late penalty taken off): read by the rule "best" alone


COUNTS_HELP = {
    "last": "the last submission counts",
    "best": "the best submission counts (the highest final score; of equal ones, the later)",
    "last_before_due": "the last submission by the due time counts (the last of all when none was on time)",
}


def which_counts(
    rule: str, hand_ins: Sequence[HandIn], due: datetime | None, chosen: int | None = None
) -> HandIn | None:
    """The rule of the submission that counts, in one place: of a student's ``hand_ins`` (earliest
    first), the one the staff ``chosen`` (a submission's id) while it is there; else by the
    assignment's ``rule`` (``counts`` in assignment.toml): "last", the last handed in; "best", the
    highest final score, the later of equal ones; "last_before_due", the last handed in by ``due``
    (the student's own, their extension's included), or the last of all when none was on time.
    None: nothing handed in."""
    if not hand_ins:
        return None
    if chosen is not None:
        for hand_in in hand_ins:
            if hand_in.id == chosen:
                return hand_in
    if rule == "best":
        return max(enumerate(hand_ins), key=lambda pair: (pair[1].final_score, pair[0]))[1]
    if rule == "last_before_due" and due is not None:
        on_time = [hand_in for hand_in in hand_ins if hand_in.at <= due]
        if on_time:
            return on_time[-1]
    return hand_ins[-1]


def student_due(spec: AssignmentSpec, extended_until: datetime | None) -> datetime | None:
    """A student's due time on the assignment, their extension's end included (None: no due time)."""
    return None if spec.due is None else extended_due(spec.due, extended_until)


def chosen_submissions(book: Gradebook, assignment: str, students: set[int] | None = None) -> dict[int, int | None]:
    """The staff's standing choice of the submission that counts, by student pk: the latest choice's
    submission id, or None where the latest undid the one before (the rule decides). Students with
    no choice are left out."""
    from .models import CountedChoice

    choices = book.objects(CountedChoice).filter(assignment__name=assignment)
    if students is not None:
        choices = choices.filter(student_id__in=students)
    latest: dict[int, int | None] = {}
    for student_pk, submission_id in choices.order_by("id").values_list("student_id", "submission_id"):
        latest[student_pk] = submission_id
    return latest


def counting_submission(book: Gradebook, spec: AssignmentSpec, student: models.Student) -> models.Submission | None:
    """The student's submission that counts for their grade on the assignment (None: nothing handed
    in): what every page, file, the API, the statistics and the course platforms' scores read. Call
    it inside ``book.run`` or the site's own database work."""
    from .marking.rubrics import current_rubrics

    submissions = list(submissions_in_order(book, spec.name, student))
    if not submissions:
        return None
    spec = current_rubrics(book, spec)
    reading = _Reading(book, spec, submissions, student=student, detail=False)
    return _counted(spec, reading, submissions, chosen_submissions(book, spec.name, {student.pk}).get(student.pk))[0]


def _counted(
    spec: AssignmentSpec, reading: _Reading, submissions: list[models.Submission], chosen: int | None
) -> tuple[models.Submission, Report | None]:
    """Of one student's submissions (earliest first, not empty), the one that counts, and its report
    where the rule read it already."""
    reports: dict[int, Report] = {}
    if spec.counts == "best":
        reports = {submission.id: reading.report(submission) for submission in submissions}
    hand_ins = [
        HandIn(s.id, s.submitted_at or s.graded_at, reports[s.id].final_score if reports else 0.0) for s in submissions
    ]
    extension = reading.extensions.get(submissions[0].student_id)
    picked = which_counts(spec.counts, hand_ins, student_due(spec, extension.until if extension else None), chosen)
    assert picked is not None
    counted = next(s for s in submissions if s.id == picked.id)
    return counted, reports.get(counted.id)


def counted_rows(book: Gradebook, spec: AssignmentSpec):
    """The query of each student's submission that counts (never the staff's tries), in the order
    they were handed in: what the marking pages mark."""
    choices = chosen_submissions(book, spec.name)
    if spec.counts == "last" and not any(choice is not None for choice in choices.values()):
        return latest_rows(book, spec.name)
    return submissions_in_order(book, spec.name).filter(id__in=_counted_ids(book, spec, choices))


def _counted_ids(book: Gradebook, spec: AssignmentSpec, choices: dict[int, int | None]) -> list[int]:
    from .marking.rubrics import current_rubrics

    spec = current_rubrics(book, spec)
    query = submissions_in_order(book, spec.name).defer("output", "errors")
    reading = _Reading(book, spec, query, detail=False)  # a subquery, whatever the course's size
    rows = list(query)
    by_student: dict[int, list[models.Submission]] = {}
    for row in rows:
        by_student.setdefault(row.student_id, []).append(row)
    return [_counted(spec, reading, mine, choices.get(pk))[0].id for pk, mine in by_student.items()]


def submissions_in_order(book: Gradebook, assignment: str, student: models.Student | None = None):
    """A student's (or every student's but the staff's own tries) submissions of an assignment,
    earliest first: by submission time, then by the order they were recorded."""
    from .models import STAFF_PREFIX, Submission

    rows = book.objects(Submission).filter(assignment__name=assignment).select_related("student", "assignment")
    if student is not None:
        rows = rows.filter(student=student)
    else:
        rows = rows.exclude(student__student_id__startswith=STAFF_PREFIX)
    return rows.order_by("submitted_at", "id")


def report_of(book: Gradebook, spec: AssignmentSpec, submission: models.Submission) -> Report:
    """A submission's report as it stands: its automatic results, the student's marks on this
    assignment (flagged when the answer changed since), and the late penalty."""
    return reports_of(book, spec, [submission], submission.student)[0]


def reports_of(
    book: Gradebook, spec: AssignmentSpec, submissions: list[models.Submission], student: models.Student
) -> list[Report]:
    """``report_of`` for each of a student's submissions, read at once (a student's history)."""
    from .marking.rubrics import current_rubrics

    spec = current_rubrics(book, spec)  # marks follow the items' current points
    reading = _Reading(book, spec, submissions, student=student)
    return [reading.report(submission) for submission in submissions]


class _Reading:
    """What the reports of many submissions of one assignment need, read with one query per table
    (results, marks, extensions, the marked answers), never one per submission: the staff's pages
    read a whole course's grades at once. ``student``: only that student's marks and extension;
    ``only``: those of these students (pks: a kept table's update); otherwise every student's on the
    assignment. ``submissions`` is a list, or a query of the rows whose results to read (a subquery
    then, not a list of ids that grows with the course). Without
    ``detail``, the reports leave out what only a report's own page shows: the checks' outcomes, the
    feedback texts, the grading's output and errors (the gradebook's table reads a whole course)."""

    def __init__(
        self,
        book: Gradebook,
        spec: AssignmentSpec,
        submissions,
        student: models.Student | None = None,
        detail: bool = True,
        only: set[int] | None = None,
    ):
        from django.db.models import F

        from .models import Extension, Mark, Result

        self.book, self.spec, self.detail = book, spec, detail
        results = book.objects(Result)
        if isinstance(submissions, list):
            results = results.filter(submission_id__in=[row.id for row in submissions])
        else:
            results = results.filter(submission__in=submissions.values("id"))
        # Plain rows, not model instances: building 10,000 of those is most of a large course's cost;
        # and the written answers only of the questions graded by hand (no other has any).
        manual = [q.id for q in spec.questions if q.manual]
        fields = ["submission_id", "question_id", "score", "status"] + (
            ["feedback", "tests", "answers"] if detail else []
        )
        self.results: dict[int, dict[str, dict]] = {}
        for row in results.values(*fields):
            self.results.setdefault(row["submission_id"], {})[row["question_id"]] = row
        if manual and not detail:
            for submission_id, question_id, answers in results.filter(question_id__in=manual).values_list(
                "submission_id", "question_id", "answers"
            ):
                self.results[submission_id][question_id]["answers"] = answers
        marks = book.objects(Mark).filter(assignment__name=spec.name)
        extensions = book.objects(Extension).filter(assignment__name=spec.name)
        if student is not None:
            marks, extensions = marks.filter(student=student), extensions.filter(student=student)
        elif only is not None:
            marks, extensions = marks.filter(student_id__in=only), extensions.filter(student_id__in=only)
        self.marks: dict[int, dict[str, models.Mark]] = {}
        for mark in marks:
            self.marks.setdefault(mark.student_id, {})[mark.question_id] = mark
        self.extensions = {row.student_id: row for row in extensions} if spec.late_policy is not None else {}
        # The answers each hand mark was given for (a later submission's that differ are flagged).
        self.marked: dict[tuple[int, str], dict] = {}
        latest_ids = {row.id for row in submissions} if isinstance(submissions, list) else None
        if manual and any(
            m.submission_id is not None and (latest_ids is None or m.submission_id not in latest_ids)
            for byq in self.marks.values()
            for m in byq.values()
        ):
            marked = book.objects(Result).filter(
                question_id__in=manual,
                submission__marks__assignment__name=spec.name,
                submission__marks__question_id=F("question_id"),
            )
            if student is not None:
                marked = marked.filter(submission__student=student)
            elif only is not None:
                marked = marked.filter(submission__student_id__in=only)
            for row in marked.only("submission_id", "question_id", "answers"):
                self.marked[(row.submission_id, row.question_id)] = row.answers

    def report(self, submission: models.Submission) -> Report:
        spec = self.spec
        results = self.results.get(submission.id, {})
        marks = self.marks.get(submission.student_id, {})
        questions = []
        for question in spec.questions:
            row = results.get(question.id)
            if row is None:  # a question added to the manifest after this submission was graded
                result = QuestionResult(
                    id=question.id,
                    title=question.title,
                    score=0.0,
                    max_score=question.points,
                    status="not_graded",
                    feedback="not graded yet: regrade this submission",
                )
            elif not self.detail:
                # A whole course's table: the database's own values, built without validating each
                # (12,000 of them at 2,000 students: a third of the table's cost).
                result = QuestionResult.model_construct(
                    id=question.id,
                    title=question.title,
                    score=row["score"],
                    max_score=question.points,
                    status=row["status"],
                    feedback="",
                    answers=row.get("answers") or {},
                    tests=[],
                    mark=None,
                )
            else:
                result = QuestionResult(
                    id=question.id,
                    title=question.title,
                    score=row["score"],
                    max_score=question.points,
                    status=row["status"],
                    feedback=row.get("feedback", ""),
                    answers=row.get("answers", {}),
                    tests=[TestOutcome.model_validate(t) for t in row["tests"]],
                )
            mark = marks.get(question.id)
            # A hand-graded question's mark; or an automatic score the staff overrode, with a reason, for
            # that very submission (a new submission is graded afresh).
            if mark is not None and (question.manual or mark.submission_id == submission.id):
                hand = self._hand_mark(mark, question, submission, result.answers)
                result = result.model_copy(update={"score": hand.score, "mark": hand})
            questions.append(result)
        score = sum(q.score for q in questions)
        submitted_at = submission.submitted_at or submission.graded_at
        late = None
        policy = spec.late_policy
        if policy is not None:
            extension = self.extensions.get(submission.student_id)
            late = policy.penalty(submitted_at, score, extension.until if extension else None)
        return Report(
            student=submission.student.student_id,
            assignment=spec.name,
            score=score,
            max_score=spec.max_score,
            questions=questions,
            errors=list(submission.errors) if self.detail else [],
            output=submission.output if self.detail else "",
            submission=submission.file,
            sha256=submission.sha256,
            reference=submission.reference,
            sandbox=submission.sandbox,
            graded_at=_iso(submission.graded_at),
            grader_version=submission.grader_version,
            ran=submission.ran,
            submitted_at=_iso(submitted_at),
            late=late,
            feedback=spec.feedback,
            visibility=spec.visibility_rules,
            seconds=submission.seconds,
            own_values=OwnValues.model_validate(submission.own_values) if submission.own_values else None,
            test_faults=[test.fault for question in questions for test in question.tests if test.fault is not None],
        )

    def _hand_mark(
        self, mark: models.Mark, question: Question, submission: models.Submission, answers: dict
    ) -> HandMark:
        changed = False
        if mark.submission_id != submission.id:
            marked = self.marked.get((mark.submission_id, mark.question_id))
            if marked is None and mark.submission_id in self.results:  # one of the submissions read
                row = self.results[mark.submission_id].get(mark.question_id)
                marked = row.get("answers", {}) if row is not None else None
            changed = marked is None or _text(marked) != _text(answers)
        return HandMark(
            score=mark_score(mark, question),
            comment=mark.comment,
            rubric=rubric_lines(mark, question),
            marked_at=_iso(mark.marked_at),
            marked_by=mark.marked_by,
            answer_changed=changed and question.manual,
            override=not question.manual,
        )


def mark_score(mark: models.Mark, question: Question) -> float:
    """A mark's score: the points given, or with rubric items applied, their current points plus the
    adjustment, within 0..the question's points."""
    if not mark.rubric:
        return mark.score
    points = {item.id: item.points for item in question.rubric}
    return min(max(sum(points.get(item, 0.0) for item in mark.rubric) + mark.adjustment, 0.0), question.points)


def rubric_lines(mark: models.Mark, question: Question) -> list[str]:
    """The applied rubric items as the student reads them: "+1 Proposes ..."."""
    items = {item.id: item for item in question.rubric}
    lines = [f"{items[i].points:+g} {items[i].text}" for i in mark.rubric if i in items]
    if mark.rubric and mark.adjustment:
        lines.append(f"{mark.adjustment:+g} adjustment")
    return lines


def _text(answers: dict) -> str:
    return "\n\n".join(str(answers[key]).strip() for key in sorted(answers))


def latest_submissions(book: Gradebook, assignment: str) -> dict[str, models.Submission]:
    """Each student's latest submission of an assignment, by student id (never the staff's tries)."""
    latest: dict[str, models.Submission] = {}
    for submission in submissions_in_order(book, assignment):
        latest[submission.student.student_id] = submission
    return latest


def latest_rows(book: Gradebook, assignment: str):
    """The query of each student's latest submission of an assignment (never the staff's tries), in
    the order they were handed in: the database picks them, whatever the course's size."""
    from django.db.models import OuterRef, Subquery

    from .models import Submission

    last = (
        book.objects(Submission)
        .filter(assignment=OuterRef("assignment"), student=OuterRef("student"))
        .order_by("-submitted_at", "-id")
        .values("id")[:1]  # the last of submissions_in_order's order
    )
    return submissions_in_order(book, assignment).filter(id=Subquery(last))


def current_grades(
    book: Gradebook, spec: AssignmentSpec, everyone: bool = False, detail: bool = True
) -> list[CurrentGrade]:
    """Every student's current grade on the assignment, by student id: those who handed something
    in, and with ``everyone`` also the roster's students who did not. A fixed number of queries,
    whatever the number of students. Without ``detail``, the reports' scores, statuses, marks and
    late penalties only (``_Reading``): what a table of the whole course shows, kept per version of
    the grades (``gradebook.versions``: the next request with nothing written since reads it; the
    first after a write updates it for only the students written since, in the same fixed number of
    queries, or computes it anew after a change to everyone, such as a rubric edit). By student id
    in code point order without ``detail``, in the database's order with it. The list is the
    caller's; its grades are shared: read only."""
    if detail:
        return [grade for _, grade in _current_grades(book, spec, everyone, detail)]
    from .versions import updated

    # One kept table per assignment: those who handed something in are the roster's table less
    # those without a report (the staff's own tries are in neither).
    key = ("grades", spec.name, spec.model_dump_json())
    table = updated(
        book,
        key,
        lambda: _table(_current_grades(book, spec, True, detail)),
        lambda kept, students: _table_updated(kept, students, _current_grades(book, spec, True, detail, students)),
    )
    grades = table.grades
    return list(grades) if everyone else [grade for grade in grades if grade.report is not None]


class _GradeTable:
    """A course's kept grade table: its grades by student id (in code point order, whatever the
    database's collation, so an updated table's order is a computed one's), each one's Student pk."""

    __slots__ = ("grades", "pks")

    def __init__(self, pks: tuple[int, ...], grades: tuple[CurrentGrade, ...]):
        self.pks, self.grades = pks, grades


def _table(rows: list[tuple[int, CurrentGrade]]) -> _GradeTable:
    rows.sort(key=lambda row: row[1].student_id)
    return _GradeTable(tuple(pk for pk, _ in rows), tuple(grade for _, grade in rows))


def _table_updated(kept: _GradeTable, changed: set[int], rows: list[tuple[int, CurrentGrade]]) -> _GradeTable:
    """``kept`` with the rows of the ``changed`` students (pks) replaced by ``rows``, read for them
    now (a student renamed, added, taken off the roster or deleted since: in its place, in, or
    out). A new table: the kept one may be in use."""
    kept_rows = [(pk, grade) for pk, grade in zip(kept.pks, kept.grades, strict=True) if pk not in changed]
    return _table(kept_rows + rows)


def _current_grades(
    book: Gradebook, spec: AssignmentSpec, everyone: bool, detail: bool, only: set[int] | None = None
) -> list[tuple[int, CurrentGrade]]:
    """Each student's (pk, grade), in the database's order of student ids; with ``only``, those of
    these students (pks) alone, with the same queries."""
    from django.db.models import Count, Exists, OuterRef, Q

    from .marking.rubrics import current_rubrics
    from .models import STAFF_PREFIX, Student, Submission

    spec = current_rubrics(book, spec)
    choices = chosen_submissions(book, spec.name, only)
    # The rule "last" with no choice of the staff's standing: the database picks each student's
    # latest (a subquery, whatever the course's size); else every submission is read, and the rule
    # picks (``which_counts``).
    plain = spec.counts == "last" and not any(choice is not None for choice in choices.values())
    rows = (latest_rows(book, spec.name) if plain else submissions_in_order(book, spec.name)).select_related(None)
    submissions = book.objects(Submission).filter(assignment__name=spec.name)
    students = book.objects(Student)
    if only is not None:
        rows, submissions, students = (
            rows.filter(student_id__in=only),
            submissions.filter(student_id__in=only),
            students.filter(pk__in=only),
        )
    if not detail:
        rows = rows.defer("output", "errors")
    mine: dict[int, list[models.Submission]] = {}
    if plain:
        reading = _Reading(book, spec, rows, detail=detail, only=only)
        for row in rows:
            mine[row.student_id] = [row]
    else:  # the rows' results read by a subquery, not a list of ids that grows with the course
        reading = _Reading(book, spec, rows, detail=detail, only=only)
        for row in rows:
            mine.setdefault(row.student_id, []).append(row)
    counts = dict(submissions.values_list("student_id").annotate(n=Count("id")).values_list("student_id", "n"))
    handed_in = Exists(book.objects(Submission).filter(student=OuterRef("pk"), assignment__name=spec.name)) & ~Q(
        student_id__startswith=STAFF_PREFIX
    )
    students = students.filter(handed_in | Q(on_roster=True) if everyone else handed_in)
    grades = []
    for student in students.order_by("student_id"):
        report = None
        if student.id in mine:
            for row in mine[student.id]:
                row.student = student
            counted, report = _counted(spec, reading, mine[student.id], choices.get(student.id))
            report = report or reading.report(counted)
        grades.append(
            (
                student.id,
                CurrentGrade(
                    student_id=student.student_id,
                    name=student.name,
                    email=student.email,
                    canvas_id=student.canvas_id,
                    moodle_id=student.moodle_id,
                    sis_id=student.sis_id,
                    dropped=student.dropped_at is not None,
                    submissions=counts.get(student.id, 0),
                    report=report,
                ),
            )
        )
    return grades


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
