"""Exams taken online: the rules of an attempt, on the server's clock (README "Exams").

An exam folder made by ``course exam build`` and listed in course.toml is taken online once the
instructor gives it a window and a time limit (``OnlineExam``). A student on the exam's roster
starts it inside the window and gets the variant the printed exam gives them (key.json's, from the
seed rule); every answer is saved as it is given; the attempt ends at submit, at the time limit or
at the close, whichever comes first, fixed on the server at the start (``ends_at``), and nothing is
saved after it. Grading goes through the paper path's own functions (course/exams/grade.py), so a
paper exam and an online one of the same folder grade identically. The staff's own accounts take
it as a trial, never counted."""

from __future__ import annotations

import io
import ipaddress
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from course.catalog import load_catalog
from course.errors import ExamError
from course.exams.definition import ExamDefinition
from course.exams.grade import (
    OpenMark,
    StudentResult,
    feedback_markdown,
    grade_sheet,
    load_key,
    shown_summary,
)
from course.exams.variants import ExamKey, Variant, VariantQuestion, make_variant
from course.exams.variants import Student as ExamStudent
from course.exams.zones import Pool, zoned_variant
from course.private_files import write_private
from course.wording import plural
from gradebook.exams import OpenAnswer, grade_exam_into_gradebook
from gradebook.models import STAFF_PREFIX, ExamExtension, ExamMark, ExamResult, Student
from service.core.access import book, course, state
from service.errors import ExamRefused, WrongCode
from untrusted import spreadsheet

from . import saves as exam_saves
from .models import ExamAnswer, ExamAttempt, ExamLogEntry, ExamQuestionResults, OnlineExam
from .scores import send_exam_score

logger = logging.getLogger(__name__)

MAX_TEXT = 20_000  # an open question's answer, in characters
# Wrong access codes: a student who gives CODE_TRIES wrong ones is refused (even the right one) until
# CODE_COOL_OFF after the last, so a code cannot be guessed; a typo or two costs nothing.
CODE_TRIES = 5
CODE_COOL_OFF = timedelta(minutes=5)


def folders() -> dict[str, Path]:
    """The course's exam folders by name (``exams`` in course.toml)."""
    return course().exam_folders


@lru_cache(maxsize=32)
def _key_at(path: Path, modified: int) -> ExamKey:
    return load_key(path)


def key_of(folder: Path) -> ExamKey:
    """The exam's key, read once per version of key.json (every save needs the variant)."""
    try:
        modified = (folder / "key.json").stat().st_mtime_ns
    except OSError:
        modified = 0  # load_key says what is wrong
    return _key_at(folder, modified)


def variant_for(key: ExamKey, student: Student) -> Variant | None:
    """The student's variant: the printed exam's for a student on its roster; for the staff's own
    account, one drawn by the same seed rule (a trial); None for anyone else."""
    sheet = sheet_for(key, student)
    return sheet[1] if sheet is not None else None


def sheet_for(key: ExamKey, student: Student) -> tuple[ExamKey, Variant] | None:
    """The student's variant and the key that reads it: the printed exam's for a student on its
    roster (their own draw from its zones, for an exam built from a definition); for the staff's own
    account, one drawn by the paper exam's own rule for their id and the exam's seed (a trial: from the
    definition's zones and the course's lessons, its generated questions drawn for them, the key given
    the questions so drawn); None for anyone else, and for a trial that cannot be drawn (logged)."""
    found = _variants_by_student(key).get(student.student_id)
    if found is not None:
        return key, found
    if not student.student_id.startswith(STAFF_PREFIX):
        return None
    exam_student = ExamStudent(student_id=student.student_id, name=student.name or student.student_id, email="")
    if key.definition is None and key.zones:
        logger.warning("the staff's trial of %r: its key.json keeps no definition; build it again", key.title)
        return None
    if key.definition is None:
        first = key.variants[0].questions
        choice = sum(q.kind == "choice" for q in first)
        bank = list(key.questions.values())
        return key, make_variant(exam_student, bank, key.seed, choice, key.shuffled, len(first) - choice)
    try:
        pool = _pool(tuple(course().lesson_folders), key.definition.model_dump_json())
        variant = zoned_variant(exam_student, key.definition, pool, key.seed, key.shuffled)
    except ExamError:
        logger.exception("the staff's trial of %r cannot be drawn from its definition", key.title)
        return None
    drawn = {**pool.fixed, **pool.drawn}
    questions = {q.question: drawn[q.question] for q in variant.questions if q.question not in key.questions}
    return key.model_copy(update={"questions": {**key.questions, **questions}}), variant


_INDEXES: dict[int, tuple[ExamKey, dict[str, Variant]]] = {}


def _variants_by_student(key: ExamKey) -> dict[str, Variant]:
    """The key's variants by student id, indexed once per key read (key_of keeps one object per
    version of key.json): every request of an attempt looks its variant up, among 2,000 at an exam."""
    held = _INDEXES.get(id(key))
    if held is None or held[0] is not key:
        if len(_INDEXES) >= 8:  # keys read again after a rebuild: the old ones go
            _INDEXES.clear()
        held = _INDEXES[id(key)] = (key, {v.student.student_id: v for v in key.variants})
    return held[1]


@lru_cache(maxsize=8)
def _pool(lesson_folders: tuple[Path, ...], definition: str) -> Pool:
    """The pools of an exam's definition over the course's lessons, read once (a trial's draws)."""
    catalog = load_catalog(list(lesson_folders))
    if catalog.errors:
        raise ExamError(f"the course's lessons cannot be read: {catalog.errors[0]}")
    return Pool(catalog.lessons, ExamDefinition.model_validate_json(definition))


@dataclass
class Terms:
    """A student's own terms on an exam: the exam's, with their extension from the gradebook."""

    closes_at: datetime
    minutes: float
    attempts: int


def terms_of(exam: OnlineExam, student: Student) -> Terms:
    given = ExamExtension.objects.filter(exam=exam.name, student=student).first()
    if given is None:
        return Terms(exam.closes_at, exam.minutes, 1)
    closes = max(exam.closes_at, given.until) if given.until else exam.closes_at
    return Terms(closes, exam.minutes + given.extra_minutes, given.attempts)


def is_trial(student: Student) -> bool:
    return student.student_id.startswith(STAFF_PREFIX)


def latest_attempt(name: str, student: Student) -> ExamAttempt | None:
    """The student's latest attempt (attempts are numbered 1, 2, ... as they start), its student the
    one given: not read again by the rules that ask for it."""
    attempt = ExamAttempt.objects.filter(exam=name, student=student).order_by("-number").first()
    if attempt is not None:
        attempt.student = student
    return attempt


def open_to(exam: OnlineExam, student: Student, now: datetime | None = None, terms: Terms | None = None) -> bool:
    """Whether the exam is in its window for this student (for the staff: also when on trial);
    ``terms``: theirs, when the caller read them already."""
    now = now or timezone.now()
    if is_trial(student) and exam.trial:
        return True
    return exam.opens_at <= now < (terms or terms_of(exam, student)).closes_at


def log(attempt: ExamAttempt, action: str, address: str, detail: str = "") -> None:
    ExamLogEntry.objects.create(attempt=attempt, at=timezone.now(), action=action, address=address, detail=detail)


def check_network(exam: OnlineExam, address: str) -> None:
    """A proctored room's exam is taken from its networks only (an empty list: from anywhere)."""
    ranges = [line.strip() for line in exam.networks.splitlines() if line.strip()]
    if not ranges:
        return
    try:
        here = ipaddress.ip_address(address)
    except ValueError:
        raise ExamRefused("this exam is taken from the exam room's network only") from None
    if not any(here in ipaddress.ip_network(text, strict=False) for text in ranges):
        raise ExamRefused("this exam is taken from the exam room's network only")


def check_code(exam: OnlineExam, student: Student, code: str) -> None:
    """The exam's access code, when it has one, compared in constant time; refused after CODE_TRIES
    wrong ones until CODE_COOL_OFF after the last (counted in the site's cache, which every process
    of the site shares: the database's)."""
    if not exam.access_code:
        return
    tries = f"exam-code-tries:{exam.name}:{student.pk}"
    wrong = cache.get(tries, 0)
    if wrong >= CODE_TRIES:
        minutes = plural(int(CODE_COOL_OFF.total_seconds() // 60), "minute")
        raise WrongCode(f"too many wrong access codes; try again in {minutes}, or ask the exam room's proctor")
    if secrets.compare_digest(code.strip().encode(), exam.access_code.encode()):
        cache.delete(tries)
        return
    cache.set(tries, wrong + 1, CODE_COOL_OFF.total_seconds())
    raise WrongCode("wrong access code; the exam room's proctor gives it")


def seconds_until_open(exam: OnlineExam, student: Student, now: datetime | None = None) -> float | None:
    """Seconds until the exam opens for this student, on the server's clock (what a waiting room
    counts down); None when it is not ahead: open, closed, or open to them now as a trial."""
    now = now or timezone.now()
    if now >= exam.opens_at or (is_trial(student) and exam.trial):
        return None
    return (exam.opens_at - now).total_seconds()


def start(
    exam: OnlineExam, key: ExamKey, student: Student, address: str, code: str = "", terms: Terms | None = None
) -> ExamAttempt:
    """The student's attempt: the one in progress (resumed), or a new one if the rules allow
    (``terms``: the student's, when the caller read them already)."""
    now = timezone.now()
    current = latest_attempt(exam.name, student)
    if current is not None:
        finish_if_due(current, key, now)
        if current.ended_at is None:
            check_network(exam, address)
            log(current, "resume", address)
            return current
    check_network(exam, address)
    trial = is_trial(student)
    terms = terms or terms_of(exam, student)
    if not open_to(exam, student, now, terms):
        if now < exam.opens_at:
            raise ExamRefused(f"the exam opens at {exam.opens_at:%Y-%m-%d %H:%M %Z}")
        raise ExamRefused(f"the exam closed at {terms.closes_at:%Y-%m-%d %H:%M %Z}")
    if variant_for(key, student) is None:
        raise ExamRefused("you have no variant of this exam (you were not on its roster); ask the staff")
    taken = current.number if current is not None else 0  # numbered in order: the latest's is the count
    if not trial and taken >= terms.attempts:
        raise ExamRefused("you have taken this exam already; another attempt is the staff's to grant")
    check_code(exam, student, code)
    limit = now + timedelta(minutes=terms.minutes)
    if trial or limit <= terms.closes_at:
        ends_at, reason = limit, ExamAttempt.TIME_LIMIT
    else:
        ends_at, reason = terms.closes_at, ExamAttempt.CLOSED
    try:
        with transaction.atomic():
            attempt = ExamAttempt.objects.create(
                exam=exam.name,
                student=student,
                number=taken + 1,
                trial=trial,
                started_at=now,
                ends_at=ends_at,
                deadline_reason=reason,
            )
            log(attempt, "start", address, f"attempt {attempt.number}, ends {attempt.ends_at.isoformat()}")
        attempt.fresh = True
    except IntegrityError:  # the same student started on a second device at the same moment: that one
        attempt = ExamAttempt.objects.get(exam=exam.name, student=student, number=taken + 1)
        log(attempt, "resume", address)
    return attempt


def finish_if_due(attempt: ExamAttempt, key: ExamKey, now: datetime | None = None) -> None:
    """An attempt past its deadline ends then, whoever notices it first."""
    now = now or timezone.now()
    if attempt.ended_at is None and now >= attempt.ends_at:
        finish(attempt, key, attempt.deadline_reason, attempt.ends_at, "")


def finish(attempt: ExamAttempt, key: ExamKey, reason: str, at: datetime, address: str) -> None:
    """End the attempt (once, even when two requests end it together) and grade its check questions;
    a counted attempt's result goes to the gradebook."""
    with transaction.atomic():
        ended = ExamAttempt.objects.filter(pk=attempt.pk, ended_at__isnull=True).update(
            ended_at=at, ended_reason=reason
        )
    attempt.refresh_from_db()
    if not ended:
        return
    log(attempt, "end", address, reason)
    result = result_of(attempt, key)
    if result is None:
        return
    ExamAttempt.objects.filter(pk=attempt.pk).update(correct=result.correct, automatic=result.automatic)
    attempt.refresh_from_db()
    if not attempt.trial:
        record_result(key, attempt.student, result)
        exam = OnlineExam.objects.filter(name=attempt.exam).first()
        shown = exam is not None and ResultsRule.of(exam).all_visible(attempt, key)
        send_exam_score(attempt.exam, attempt.student, result, shown)  # to the course platform, if it placed it


def record_result(key: ExamKey, student: Student, result: StudentResult) -> None:
    """The gradebook's record, as ``course exam grade --gradebook`` writes it (by the exam's title)."""
    ExamResult.objects.update_or_create(
        exam=key.title,
        student=student,
        defaults={"score": result.score, "max_score": result.max_score, "graded_at": timezone.now()},
    )


def answers_of(attempt: ExamAttempt) -> dict[int, str]:
    return dict(attempt.answers.values_list("position", "value"))


def saved_of(attempt: ExamAttempt) -> tuple[dict[int, str], dict[int, str]]:
    """answers_of and versions_of in one query (the taking page shows both); none for the attempt
    just started."""
    if attempt.fresh:
        return {}, {}
    rows = list(attempt.answers.values_list("position", "value", "saved_at"))
    return {p: value for p, value, _ in rows}, {p: exam_saves.version_of(at) for p, _, at in rows}


def versions_of(attempt: ExamAttempt) -> dict[int, str]:
    """Each saved answer's version (exam_saves.version_of), by its position: what a page sends back."""
    return {position: exam_saves.version_of(at) for position, at in attempt.answers.values_list("position", "saved_at")}


def save_answer(
    exam: OnlineExam,
    key: ExamKey,
    attempt: ExamAttempt,
    position: int,
    value: str,
    address: str,
    version: str | None = None,
) -> str:
    """Save one answer; refused, and logged, after the attempt's end, or (StaleAnswer) when
    ``version`` (the answer's as the page read it: exam_saves.version_of) is not the answer's now:
    another tab saved it meanwhile. None: not compared, the last save wins. The answer's new version."""
    now = timezone.now()
    finish_if_due(attempt, key, now)
    variant = variant_for(key, attempt.student)
    question = next((q for q in variant.questions if q.position == position), None) if variant else None
    try:
        if attempt.ended_at is not None:
            raise ExamRefused(
                f"the exam ended at {attempt.ended_at:%H:%M:%S %Z} ({attempt.ended_reason}); this answer was not saved"
            )
        check_network(exam, address)
        if question is None:
            raise ExamRefused(f"there is no question {position} on your exam")
        if question.kind == "choice":
            value = value.strip().upper()
            if value and value not in question.letters:
                raise ExamRefused(
                    f"{value!r} is not an answer to question {position} (one of {''.join(question.letters)})"
                )
        elif len(value) > MAX_TEXT:
            raise ExamRefused(f"an answer holds at most {plural(MAX_TEXT, 'character')}")
    except ExamRefused as refused:
        log(attempt, "refused", address, f"q{position}: {refused}")
        raise
    shown = value if question.kind == "choice" else f"{plural(len(value), 'character')}"
    # Written with the other saves arriving now, in one commit; answered once on disk (exam_saves.py).
    attempt.answered_now = exam_saves.save(  # answered() reads it: counted in the commit
        exam_saves.Save(
            attempt=attempt, position=position, value=value, at=now, address=address, shown=shown, version=version
        )
    )
    return exam_saves.version_of(now) if value.strip() else ""


def answered(attempt: ExamAttempt) -> int:
    """How many of the attempt's questions have an answer saved (after this request's save, as its
    commit counted them: no query of its own)."""
    return attempt.answered_now if attempt.answered_now is not None else attempt.answers.count()


def submit(exam: OnlineExam, key: ExamKey, attempt: ExamAttempt, address: str) -> None:
    finish_if_due(attempt, key)
    if attempt.ended_at is not None:
        log(attempt, "refused", address, "submit after the end")
        raise ExamRefused(f"the exam ended already at {attempt.ended_at:%H:%M:%S %Z} ({attempt.ended_reason})")
    try:
        check_network(exam, address)
    except ExamRefused as refused:
        log(attempt, "refused", address, f"submit: {refused}")
        raise
    finish(attempt, key, ExamAttempt.SUBMITTED, timezone.now(), address)


def marks_of(key: ExamKey, student: Student) -> dict[tuple[str, str], OpenMark]:
    marks = ExamMark.objects.filter(exam=key.title, student=student)
    return {(student.student_id, m.question): OpenMark(score=m.score, comment=m.comment) for m in marks}


def result_of(attempt: ExamAttempt, key: ExamKey) -> StudentResult | None:
    """The attempt graded by the paper path's function, with the open questions' marks so far."""
    sheet = sheet_for(key, attempt.student)
    if sheet is None:
        return None
    key, variant = sheet
    given = answers_of(attempt)
    # A letter, or a written answer (a number or a short answer, checked by its tolerance); open ones by hand.
    letters = {q.position: given[q.position] for q in variant.questions if q.kind != "open" and q.position in given}
    result = grade_sheet(key, variant, letters, Path(f"online attempt {attempt.pk}"))
    marks = marks_of(key, attempt.student)
    result.marks = {
        q.position: marks[(attempt.student.student_id, q.question)]
        for q in variant.questions
        if q.kind == "open" and (attempt.student.student_id, q.question) in marks
    }
    return result


def scores_of(attempts: list[ExamAttempt], key: ExamKey) -> dict[int, str]:
    """Each ended attempt's score as the student's page and scores.csv give it (``3 of 5``, the open
    questions' marks so far counted: course.exams.grade.score_of), by the attempt's id."""
    from course.exams.grade import score_of

    scores = {}
    for attempt in attempts:
        if attempt.ended_at is None:
            continue
        result = result_of(attempt, key)
        if result is not None:
            scores[attempt.pk] = score_of(result)
    return scores


# When a question's results are not shown yet, as the student reads it after "its results are".
LATER = {
    OnlineExam.DURING: "shown as you save your answer",
    OnlineExam.AT_SUBMIT: "shown when your attempt ends",
    OnlineExam.AFTER_CLOSE: "shown after the exam closes",
    OnlineExam.PUBLISHED: "shown when the staff publish them",
    OnlineExam.NEVER: "not shown here: the staff tell you",
}


def question_name(key: ExamKey, question: VariantQuestion) -> str:
    """The name a question's own results setting is kept by: the key's, a generated question's drawn
    variant by the question it is drawn from (one setting for every student's variant of it)."""
    bank = key.questions.get(question.question)
    return (bank.source if bank is not None else None) or question.question


@dataclass
class ResultsRule:
    """When a student sees their results on an online exam, question by question (issue #51): a
    question's own setting (ExamQuestionResults, on the exam's staff page), else the exam's; read
    once for a page or a pass over the class. ``visible`` is the one rule every face asks: the taking
    page, the exam's page after, the platforms' scores (all_visible) and the staff's publishing."""

    exam: OnlineExam
    own: dict[str, ExamQuestionResults]
    closed: bool | None = None  # whether the last student's window has closed, found once when asked

    @classmethod
    def of(cls, exam: OnlineExam) -> ResultsRule:
        return cls(exam, {row.question: row for row in exam.question_results.all()})

    def setting(self, question: str | None) -> str:
        row = self.own.get(question) if question else None
        return row.results if row is not None and row.results else self.exam.results

    def published(self, question: str | None) -> bool:
        """Published with the exam's results, or (a question's own) alone."""
        row = self.own.get(question) if question else None
        return self.exam.published_at is not None or (row is not None and row.published_at is not None)

    def visible(self, attempt: ExamAttempt, question: str | None = None, now: datetime | None = None) -> bool:
        """Whether the student may read ``question``'s results (its right or wrong, its points, its mark,
        the key's answer and why an option tempts): while the attempt runs, a question shown "during"
        only; once it ended, by its setting. None: by the exam's own setting. A staff's trial: always."""
        if attempt.trial:
            return True  # the staff's trial run shows what a student would read
        setting = self.setting(question)
        if attempt.ended_at is None:
            return setting == OnlineExam.DURING
        if setting in (OnlineExam.DURING, OnlineExam.AT_SUBMIT):
            return True
        if setting == OnlineExam.AFTER_CLOSE:
            if self.closed is None:
                self.closed = (now or timezone.now()) >= last_close(self.exam)
            return self.closed
        if setting == OnlineExam.PUBLISHED:
            return self.published(question)
        return False

    def withheld(
        self, attempt: ExamAttempt, key: ExamKey, variant: Variant, now: datetime | None = None
    ) -> dict[int, str]:
        """The positions of the student's questions whose results are not shown now, with when they are."""
        withheld = {}
        for question in variant.questions:
            name = question_name(key, question)
            if not self.visible(attempt, name, now):
                withheld[question.position] = LATER[self.setting(name)]
        return withheld

    def all_visible(self, attempt: ExamAttempt, key: ExamKey) -> bool:
        """Whether every question of the student's exam is shown: only then does the platform get the
        score as final (a score with a question's result in it is not shown before the student's)."""
        sheet = sheet_for(key, attempt.student)
        if sheet is None:
            return self.visible(attempt)
        return not self.withheld(attempt, *sheet)


@dataclass
class ShownResults:
    """What the student reads of their ended attempt now: the honest summary and the feedback (of the
    questions shown; "" when none is), or when their results are shown (``later``)."""

    summary: str = ""
    feedback: str = ""
    later: str = ""


# When none of an attempt's results is shown, what the exam's page says, by the one setting they wait for.
LATER_PAGE = {
    OnlineExam.AFTER_CLOSE: "Your results are shown here after the exam closes.",
    OnlineExam.PUBLISHED: "Your results are shown here when the staff publish them.",
    OnlineExam.NEVER: "Your results are not shown here: the staff tell you them.",
}


def shown_results(exam: OnlineExam, attempt: ExamAttempt, key: ExamKey, now: datetime | None = None) -> ShownResults:
    """The ended attempt's results as the student may read them now (ResultsRule, question by
    question): all of them, some (their score said to be of those: shown_summary), or none yet."""
    sheet = sheet_for(key, attempt.student)
    result = result_of(attempt, key)
    if sheet is None or result is None:
        return ShownResults(later=LATER_PAGE.get(exam.results, "Your results are shown here when your attempt ends."))
    rule = ResultsRule.of(exam)
    withheld = rule.withheld(attempt, *sheet, now)
    if len(withheld) == len(sheet[1].questions):
        waiting = {rule.setting(question_name(sheet[0], q)) for q in sheet[1].questions}
        if len(waiting) == 1:
            return ShownResults(later=LATER_PAGE.get(waiting.pop(), ""))
        return ShownResults(
            later=f"Your results are shown here question by question: {shown_summary(*sheet, result, withheld)}"
        )
    return ShownResults(
        summary=shown_summary(*sheet, result, withheld),
        feedback=feedback_markdown(*sheet, result, heading=False, withheld=withheld),
    )


def question_settings(key: ExamKey) -> list[tuple[str, str]]:
    """The exam's questions as their own results settings name them (question_name), each with what
    the staff read of it: the definition's order for an exam built from one (every question a draw
    may give), else the order they first appear in on the students' exams."""
    banks = {question_name(key, q): key.questions[q.question] for v in key.variants for q in v.questions}
    first: dict[str, int] = {}
    for variant in key.variants:
        for question in variant.questions:
            name = question_name(key, question)
            first[name] = min(first.get(name, question.position), question.position)
    names = key.definition.names() if key.definition is not None else sorted(first, key=lambda n: (first[n], n))
    listed = []
    for name in names:
        bank = banks.get(name) or key.questions.get(name)
        what = (
            ""
            if bank is None
            else f" ({'open, marked by hand' if bank.kind == 'open' else 'check'}): {_short(bank.stem)}"
        )
        listed.append((name, name + what))
    return listed


def _short(text: str, most: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def set_question_results(exam: OnlineExam, chosen: dict[str, str]) -> bool:
    """The questions' own results settings ("": the exam's), kept where a question was published on its
    own; the platforms' scores follow when any changed. Whether any did."""
    own = {row.question: row for row in exam.question_results.all()}
    changed = False
    for question, results in chosen.items():
        row = own.get(question)
        if (row.results if row else "") == results:
            continue
        changed = True
        if results or (row is not None and row.published_at is not None):  # two saves at once: one row
            ExamQuestionResults.objects.update_or_create(exam=exam, question=question, defaults={"results": results})
        else:
            ExamQuestionResults.objects.filter(exam=exam, question=question, published_at__isnull=True).delete()
    if changed:
        send_scores(exam)
    return changed


def results_while_taking(exam: OnlineExam, attempt: ExamAttempt) -> bool:
    """Whether the taking page shows some saved check answer's result and the score so far: some
    question's results show "during" (the others' stay unseen: ResultsRule.withheld)."""
    if attempt.ended_at is not None:
        return False
    if attempt.trial or exam.results == OnlineExam.DURING:
        return True
    known = getattr(exam, "some_during", None)  # read with the exam by with_some_during, when it was
    return known if known is not None else exam.question_results.filter(results=OnlineExam.DURING).exists()


def with_some_during(exams: QuerySet[OnlineExam]) -> QuerySet[OnlineExam]:
    """The exams, each read with whether some question of it has its own "during" results setting
    (results_while_taking's question, in the same query: the taking page asks it at every read)."""
    during = ExamQuestionResults.objects.filter(exam=OuterRef("pk"), results=OnlineExam.DURING)
    return exams.annotate(some_during=Exists(during))


def publish_results(exam: OnlineExam, by: str, published: bool = True, question: str | None = None) -> int:
    """The staff publish (or withdraw) an exam's results, or with ``question`` (question_name) that
    question's alone (an open question once marked), with who and when: students then read them on
    their exam page, and each counted attempt's score goes to the platforms, FullyGraded once every
    question of it is shown (else Pending again). Returns how many students' scores were queued."""
    now = timezone.now() if published else None
    if question is None:
        exam.published_at, exam.published_by = now, by
        exam.save(update_fields=["published_at", "published_by", "updated_at"])
    else:
        ExamQuestionResults.objects.update_or_create(
            exam=exam, question=question, defaults={"published_at": now, "published_by": by}
        )
    return send_scores(exam)


def send_scores(exam: OnlineExam) -> int:
    """Each counted attempt's score to the platforms, as the results rule now lets the student see it."""
    folder = folders().get(exam.name)
    if folder is None:
        return 0
    key = key_of(folder)
    rule = ResultsRule.of(exam)
    sent = 0
    for attempt in counted_attempts(exam.name):
        result = result_of(attempt, key)
        if result is not None:
            send_exam_score(exam.name, attempt.student, result, shown=rule.all_visible(attempt, key))
            sent += 1
    return sent


def last_close(exam: OnlineExam) -> datetime:
    """When the last student's window closes (a later close given to one student included): the
    key is shown to no one before, since it would reach that student from a classmate."""
    later = ExamExtension.objects.filter(exam=exam.name, until__isnull=False).values_list("until", flat=True)
    return max([exam.closes_at, *later])


def counted_attempts(name: str) -> list[ExamAttempt]:
    """Each student's counted attempt: their latest that ended, never the staff's."""
    latest: dict[int, ExamAttempt] = {}
    for attempt in ExamAttempt.objects.filter(exam=name, trial=False, ended_at__isnull=False).select_related("student"):
        if attempt.student_id not in latest or attempt.number > latest[attempt.student_id].number:
            latest[attempt.student_id] = attempt
    return sorted(latest.values(), key=lambda a: a.student.student_id)


def grade_online(name: str, folder: Path):
    """The whole exam graded by ``course exam grade --gradebook``'s own function: the counted
    attempts written as the paper path's responses.csv, then scores.csv, the feedback files, the
    item analysis and the gradebook's results, under the state folder's exams/<name>/."""
    key = key_of(folder)
    for attempt in ExamAttempt.objects.filter(exam=name, ended_at__isnull=True):
        finish_if_due(attempt, key)
    out = state() / "exams" / name
    out.mkdir(parents=True, exist_ok=True)
    responses = out / "responses.csv"
    counted = counted_attempts(name)
    write_private(responses, responses_csv(key, counted))
    graded = grade_exam_into_gradebook(book(), folder, responses, out / "results")
    attempts = {attempt.student.student_id: attempt for attempt in counted}
    exam = OnlineExam.objects.filter(name=name).first()
    rule = ResultsRule.of(exam) if exam is not None else None
    for result in graded.results:  # the open questions' marks counted now: the platforms' scores again
        attempt = attempts[result.student_id]
        shown = rule is not None and rule.all_visible(attempt, key)
        send_exam_score(name, attempt.student, result, shown)
    return graded


def responses_csv(key: ExamKey, attempts: list[ExamAttempt]) -> str:
    positions = len(key.variants[0].questions)
    buffer = io.StringIO()
    writer = spreadsheet.writer(buffer, lineterminator="\n")
    writer.writerow(["student_id", *(f"q{n}" for n in range(1, positions + 1))])
    for attempt in attempts:
        variant = variant_for(key, attempt.student)
        if variant is None:
            continue
        kinds = {q.position: q.kind for q in variant.questions}
        given = answers_of(attempt)
        writer.writerow(
            [
                attempt.student.student_id,
                *(given.get(n, "") if kinds.get(n) not in (None, "open") else "" for n in range(1, positions + 1)),
            ]
        )
    return buffer.getvalue()


def online_texts(name: str, answers: Iterable[OpenAnswer]) -> dict[tuple[str, str], str | None]:
    """The texts students typed for open questions in their counted attempts (the marking pages'),
    by (student id, question) of ``answers``, in two queries: "" where none was saved, None where
    not taken online (on a paper sheet)."""
    attempts = {attempt.student.student_id: attempt for attempt in counted_attempts(name)}
    typed = dict(
        ((attempt, position), value)
        for attempt, position, value in ExamAnswer.objects.filter(attempt__in=attempts.values()).values_list(
            "attempt_id", "position", "value"
        )
    )
    return {
        (a.student_id, a.question): None
        if a.student_id not in attempts
        else typed.get((attempts[a.student_id].pk, a.position), "")
        for a in answers
    }
