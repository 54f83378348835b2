"""Sending the outbox of scores (``ScoreToSend``) to the platforms, outside the grading loop: by a
thread of each long-running ``autograder worker`` (``ScoreSender``), and by ``autograder lti
send-scores`` at once.

Each pass claims the rows that are due by the one lease rule (``gradebook.leases``), which moves
their next attempt past the claim so that no other sender takes them meanwhile (renewed as each is
posted: a slow platform's batch never outlives its claim), and posts each outside any transaction
with a timeout. A score the platform refuses or never answers is tried again later, the wait
doubling up to ``MAX_WAIT``; after ``MAX_ATTEMPTS`` it is failed (listed; the command tries it
again). A column the platform no longer has (404) is looked for again among the course's line
items: the assignment placed again has a new one. A row is marked sent only if no newer score replaced it while it was posted; that newer one
is sent next, and its later timestamp wins at the platform whatever the order. A score posted and
never answered may be at the platform already: before posting it again, the platform's result for
the student is read, and a score it has is not posted twice."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connection
from django.utils import timezone

from autograder.assignment import course_assignment
from gradebook.leases import LeaseRule
from service.core.logs import LTI
from untrusted.text import one_line

from .models import ScoreToSend
from .placements import bind_line_item
from .scores import scopes, service

if TYPE_CHECKING:
    from course.folder import CourseFolder

logger = logging.getLogger(LTI)  # every delivery, sent or not (service/core/logs.py)
# Seconds the sender waits for a platform: to connect (a platform down costs this, once a pass), and
# for the answer to a call it made. A slow platform may take long to answer a score it has stored:
# a wait shorter than the platform made the sender post it again (one score stored three times).
CONNECT_TIMEOUT = 10.0
SEND_TIMEOUT = 60.0
FIRST_WAIT = timedelta(seconds=15)
MAX_WAIT = timedelta(minutes=30)
# A score whose grading progress says it is not the grade yet (the staff have not published it):
# sent without scoreGiven and scoreMaximum, so the platform records the hand-in and no number.
UNSCORED = frozenset({"Pending"})
MAX_ATTEMPTS = 20  # about seven hours of a platform down before a score is failed
CLAIM = timedelta(minutes=5)  # a claimed row is no other sender's for this long (or until it is done)
BATCH = 50
POLL = 2.0  # seconds between looks at an outbox with nothing due
OUTBOX = LeaseRule(ScoreToSend, CLAIM, expires="next_attempt_at", what="score to send")
NO_COLUMN = "the platform has no column for this assignment; launch it again from the platform"


@dataclass
class Outcome:
    """What a pass did: how many scores were sent, and a line for each that was not."""

    sent: int = 0
    waiting: list[str] = field(default_factory=list)  # tried again later
    failed: list[str] = field(default_factory=list)  # given up: listed, and tried again by the command

    @property
    def tried(self) -> int:
        return self.sent + len(self.waiting) + len(self.failed)

    @property
    def not_sent(self) -> list[str]:
        """Every score that did not reach its platform in this pass, given up or to be tried again."""
        return self.failed + self.waiting


class _Refused(Exception):
    """A score the platform did not take; ``final``: trying again would not help."""

    def __init__(
        self, reason: str, final: bool = False, unreachable: bool = False, status: int = 0, unanswered: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason, self.final, self.unreachable, self.status = reason, final, unreachable, status
        self.unanswered = unanswered  # sent, never answered: the platform may have taken it


def wait_after(attempts: int) -> timedelta:
    """The wait before the next attempt, after ``attempts`` failed ones: doubling, capped."""
    return min(MAX_WAIT, FIRST_WAIT * 2 ** max(0, min(attempts - 1, 20)))


def send_due(
    now: datetime | None = None, timeout: float = SEND_TIMEOUT, everything: bool = False, assignment: str | None = None
) -> Outcome:
    """One pass over the outbox: every row due (with ``everything``, every row not sent, failed ones
    too, whatever their wait), claimed in batches. Never raises for a platform's answer."""
    outcome, tried, connectors = Outcome(), set[int](), dict[int, Any]()
    unreachable: dict[int, str] = {}  # registration -> why: a platform that did not answer is not asked again this pass
    while True:
        rows = _claim(now or timezone.now(), everything, assignment, tried)
        if not rows:
            return outcome
        for row in rows:
            tried.add(row.pk)
            _send_one(row, now or timezone.now(), timeout, connectors, unreachable, outcome)


def _claim(now: datetime, everything: bool, assignment: str | None, tried: set[int]) -> list[ScoreToSend]:
    rows = ScoreToSend.objects.exclude(pk__in=tried)
    if everything:
        rows = rows.filter(state__in=[ScoreToSend.PENDING, ScoreToSend.FAILED])
    else:
        rows = rows.filter(state=ScoreToSend.PENDING, next_attempt_at__lte=now)
    if assignment:
        rows = rows.filter(assignment=assignment)
    rows = rows.order_by("next_attempt_at", "id").select_related(
        "student", "lti_user", "line_item__context__deployment__registration", "line_item__resource_link"
    )
    # The claim moves each row's next attempt past it (``CLAIM``): no other sender takes it meanwhile.
    return OUTBOX.claim(rows, limit=BATCH)


def _send_one(
    row: ScoreToSend, now: datetime, timeout: float, connectors: dict, unreachable: dict, outcome: Outcome
) -> None:
    registration = row.line_item.context.deployment.registration
    if not OUTBOX.renew(row):  # a slow batch outlived this row's claim, and another sender took it: theirs
        return
    try:
        if registration.pk in unreachable:
            raise _Refused(unreachable[registration.pk], unreachable=True)
        using = connectors.get(registration.pk)
        if using is None:
            from .connection import connector

            waits = (min(CONNECT_TIMEOUT, timeout), timeout)
            using = connectors[registration.pk] = _call(lambda: connector(registration, waits))  # a token a pass
        _post(row, using)
    except _Refused as refused:
        if refused.unreachable:
            unreachable[registration.pk] = refused.reason
        _record_failure(row, now, refused, outcome)
        return
    OUTBOX.finish(
        row,
        also={"revision": row.revision},
        state=ScoreToSend.SENT,
        sent_at=timezone.now(),
        attempts=row.attempts + 1,
        last_error="",
        unconfirmed=False,
    )  # a newer score that came meanwhile stays pending, and is sent next
    outcome.sent += 1
    logger.info("score sent: %s", describe(row, "sent"), extra=_fields(row, "sent"))


def _post(row: ScoreToSend, using) -> None:
    """The score to its line item; on a 404, the line item looked for again and the score posted
    there. A score posted before with no answer is posted again only if the platform's result for
    the student is not this score already: a slow platform stores it once."""
    if row.unconfirmed and _platform_has(row, using):
        return
    try:
        _put(row, using)
        return
    except _Refused as refused:
        if refused.status != 404:
            raise
    url = _find_column(row, using)
    if url is None:
        raise _Refused(NO_COLUMN, final=True)
    row.line_item = bind_line_item(
        row.line_item.context, row.assignment, url, resource_link=row.line_item.resource_link
    )
    _put(row, using)


def _put(row: ScoreToSend, using) -> None:
    from pylti1p3.grade import Grade
    from pylti1p3.lineitem import LineItem

    grade = (
        Grade()
        .set_user_id(row.lti_user.sub)
        .set_activity_progress(row.activity_progress)
        .set_grading_progress(row.grading_progress)
        .set_timestamp(_iso(row.graded_at))
    )
    if row.grading_progress not in UNSCORED:  # a grade not published yet: no score reaches the platform
        grade.set_score_given(row.score_given).set_score_maximum(row.score_maximum)
    item = row.line_item
    _call(lambda: service(item.context, item.url, using).put_grade(grade, LineItem({"id": item.url})))


def _platform_has(row: ScoreToSend, using) -> bool:
    """Whether the platform's result for the row's student on its column is the row's score
    (Assignment and Grade Services' results, where the platform grants reading them); False when
    it cannot be told."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    context = row.line_item.context
    if not context.can_access_results:
        return False
    parts = urlsplit(row.line_item.url)
    query = "&".join(part for part in (parts.query, urlencode({"user_id": row.lti_user.sub})) if part)
    url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/results", query=query))
    accept = "application/vnd.ims.lis.v2.resultcontainer+json"
    try:
        answer = _call(lambda: using.make_service_request(scopes(context), url, accept=accept))
    except _Refused:
        return False
    results = answer.get("body") or []
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict) or str(result.get("userId")) != row.lti_user.sub:
            continue
        given, most = result.get("resultScore"), result.get("resultMaximum") or row.score_maximum
        if isinstance(given, int | float) and isinstance(most, int | float) and most and row.score_maximum:
            return abs(given / most - row.score_given / row.score_maximum) < 1e-9
    return False


def _iso(moment: datetime) -> str:
    from datetime import UTC

    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _find_column(row: ScoreToSend, using) -> str | None:
    """The course's line item for this assignment now: the one with its resource id (deep linking
    and the tool set it), else the one bound to the same resource link."""
    from lti_tool.models import LtiLineItem

    context = row.line_item.context
    if not context.lineitems_url or not (context.can_query_lineitems or context.can_manage_lineitems):
        return None
    items = _call(lambda: service(context, using=using).get_lineitems())
    link = row.line_item.resource_link.id_on_platform if row.line_item.resource_link else None
    # Another placement's column (the assignment placed twice) is that placement's, not this one's.
    others = set(
        LtiLineItem.objects.filter(context=context, resource_id=row.assignment)
        .exclude(pk=row.line_item.pk)
        .values_list("url", flat=True)
    )
    for wanted in (("resourceLinkId", link), ("resourceId", row.assignment)):
        for item in items:
            if wanted[1] and item.get(wanted[0]) == wanted[1] and item.get("id") and str(item["id"]) not in others:
                return str(item["id"])
    return None


def _call(request):
    from pylti1p3.exception import LtiException, LtiServiceException
    from requests import ConnectionError, ReadTimeout, RequestException, Timeout

    try:
        return request()
    except LtiServiceException as exc:
        status = exc.response.status_code
        body = _outside(exc.response.text, 120)
        raise _Refused(f"the platform answered {status}" + (f": {body}" if body else ""), status=status) from None
    except ReadTimeout:  # asked, and no answer: the platform may have done it
        raise _Refused("the platform did not answer in time", unreachable=True, unanswered=True) from None
    except Timeout:
        raise _Refused("the platform did not answer in time", unreachable=True) from None
    except ConnectionError:
        raise _Refused("the platform could not be reached", unreachable=True) from None
    except (LtiException, RequestException, ValueError) as exc:
        raise _Refused(_outside(str(exc), 200) or type(exc).__name__) from None
    except Exception as exc:  # whatever a platform's odd answer makes of pylti1p3: this score's problem alone
        raise _Refused(f"the platform's answer could not be read ({type(exc).__name__})") from None


def _outside(text: str, limit: int) -> str:
    """A platform's text (its error body, pylti1p3's message of it) as one printable line of at most
    about ``limit`` characters: whitespace folded, then controls (ESC, BEL) escaped by the one rule
    for text from outside, so that neither the log nor the staff's page and terminal act on it."""
    return one_line(" ".join(text.split())[:limit])


def _record_failure(row: ScoreToSend, now: datetime, refused: _Refused, outcome: Outcome) -> None:
    attempts = row.attempts + 1
    final = refused.final or attempts >= MAX_ATTEMPTS
    OUTBOX.finish(
        row,
        also={"revision": row.revision},
        state=ScoreToSend.FAILED if final else ScoreToSend.PENDING,
        attempts=attempts,
        next_attempt_at=now + wait_after(attempts),
        last_error=refused.reason,
        unconfirmed=row.unconfirmed or refused.unanswered,
    )
    (outcome.failed if final else outcome.waiting).append(describe(row, refused.reason))
    state = "failed" if final else "retried"
    logger.warning("score %s: %s", state, describe(row, refused.reason), extra=_fields(row, state))


def _fields(row: ScoreToSend, outcome: str) -> dict[str, object]:
    """The structured log's fields of one delivery."""
    return {"score_id": row.pk, "student": row.student.student_id, "assignment": row.assignment, "outcome": outcome}


def describe(row: ScoreToSend, reason: str | None = None) -> str:
    """One line for the command and the log."""
    column = row.line_item.label or row.assignment
    platform = row.line_item.context.deployment.registration.name
    return (
        f"{row.student.student_id}: {row.assignment} ({row.score_given:g} / {row.score_maximum:g}) to "
        f"{column} on {platform}: {reason or row.last_error}"
    )


def unsent():
    """The outbox's rows not sent yet, failed ones first, for the instructor's page."""
    return (
        ScoreToSend.objects.exclude(state=ScoreToSend.SENT)
        .select_related("student", "line_item__context__deployment__registration")
        .order_by("state", "assignment", "student__student_id")
    )


def retry_failed() -> int:
    """The failed rows back to pending, due now (the instructor's page); how many."""
    return ScoreToSend.objects.filter(state=ScoreToSend.FAILED).update(
        state=ScoreToSend.PENDING, attempts=0, next_attempt_at=timezone.now()
    )


class ScoreSender:
    """A thread that sends the outbox as scores come due, beside a worker's grading loop: the
    grading never waits for a platform."""

    def __init__(self, timeout: float = SEND_TIMEOUT, poll: float = POLL) -> None:
        self.timeout, self.poll = timeout, poll
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="lti-scores", daemon=True)

    def start(self) -> ScoreSender:
        self.thread.start()
        return self

    def stop(self, wait: float = 1.0) -> None:
        """Stop after the call in progress; a platform that hangs is not waited for past ``wait``
        (the thread is a daemon; what it claimed is tried again once its claim expires)."""
        self.stopped.set()
        self.thread.join(wait)

    def _run(self) -> None:
        try:
            while not self.stopped.is_set():
                try:
                    outcome = send_due(timeout=self.timeout)
                except DatabaseError as exc:  # the database busy or away for a moment: the next pass
                    logger.warning("the scores for the course platforms could not be read: %s", exc)
                    outcome = Outcome()
                except Exception:  # a bug of ours: logged, and the sender goes on (the worker with it)
                    logger.exception("sending the scores to the course platforms failed")
                    outcome = Outcome()
                if not outcome.tried:
                    self.stopped.wait(self.poll)
        finally:
            connection.close()  # this thread's own connection


def send_course_scores(course: CourseFolder, assignment: str | None = None) -> Outcome:
    """``autograder lti send-scores [ASSIGNMENT]``: ``send_now`` with the course's assignment of
    that name (or folder), or with none."""
    return send_now(course_assignment(course, assignment) if assignment else None)


def send_now(spec=None) -> Outcome:
    """With an assignment, every student's current score on it into the outbox first (even one the
    platform has already: a column made again has none); then the outbox sent at once, failed
    scores too, whatever their wait."""
    if spec is not None:
        from gradebook.models import Student
        from service.core.access import book

        from .scores import queue_scores

        gradebook = book()
        for student in Student.objects.filter(member__isnull=False):
            gradebook.run(partial(queue_scores, gradebook, spec, student, again=True))
    return send_due(everything=True, assignment=spec.name if spec is not None else None)
