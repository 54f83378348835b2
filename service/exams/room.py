"""The proctors' view of an online exam while it runs (issue #53): how many of its roster have started,
are saving, have gone quiet (no save for ``QUIET``: a dropped connection, or a long think), have
finished, and each attempt's time left, on the server's clock. The page asks for its live part again
every few seconds (htmx, as a submission's page does); it reads, never writes: an attempt past its
time shows as finished here and is ended by the next request that touches it (exam_sessions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.decorators import login_required
from django.db.models import Max, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from course.errors import ExamError
from service.core.access import staff_required

from . import sessions
from .models import ExamAttempt, OnlineExam

QUIET = timedelta(seconds=120)  # no save (nor start, nor resume) for this long: shown as gone quiet
# The live part's next request, as htmx's ``every`` takes it: less often in a large room, whose part
# is large (2,000 attempts: about 0.5 MB, 0.1 to 0.3 s of the site's time on the 2-core machine).
POLL, POLL_LARGE, LARGE = "5s", "15s", 300
CONTACT = ("start", "resume", "save")  # what an attempt's log holds of a student's page reaching the server

# The states an attempt is shown in, in the order the table lists them (who may need a proctor first).
QUIET_STATE, SAVING, FINISHED = "quiet", "saving", "finished"
ORDER = {QUIET_STATE: 0, SAVING: 1, FINISHED: 2}


@dataclass
class Seat:
    student_id: str
    number: int
    state: str
    last_contact: datetime | None
    seconds_since: float | None
    seconds_left: float
    ends_at: datetime
    ended_reason: str
    attempt_id: int


@dataclass
class Room:
    roster: int
    started: int = 0
    saving: int = 0
    quiet: int = 0
    finished: int = 0
    trials: int = 0
    seats: list[Seat] = field(default_factory=list)

    @property
    def waiting(self) -> int:
        return max(0, self.roster - self.started)


def room_of(name: str, roster: int, now: datetime | None = None) -> Room:
    """Each student's latest attempt, as the server has it now (the staff's trials counted apart)."""
    now = now or timezone.now()
    latest: dict[int, ExamAttempt] = {}
    attempts = (
        ExamAttempt.objects.filter(exam=name)
        .select_related("student")
        .annotate(last_contact=Max("log__at", filter=Q(log__action__in=CONTACT)))
    )
    room = Room(roster=roster)
    for attempt in attempts:
        if attempt.trial:
            room.trials += 1
        elif attempt.student_id not in latest or attempt.number > latest[attempt.student_id].number:
            latest[attempt.student_id] = attempt
    for attempt in latest.values():
        last = getattr(attempt, "last_contact", None)
        ended = attempt.ended_at is not None or now >= attempt.ends_at
        if ended:
            state = FINISHED
        elif last is not None and now - last < QUIET:
            state = SAVING
        else:
            state = QUIET_STATE
        room.started += 1
        setattr(room, state, getattr(room, state) + 1)  # the count of its state, named as the state
        room.seats.append(
            Seat(
                student_id=attempt.student.student_id,
                number=attempt.number,
                state=state,
                last_contact=last,
                seconds_since=(now - last).total_seconds() if last else None,
                seconds_left=0.0 if ended else (attempt.ends_at - now).total_seconds(),
                ends_at=attempt.ended_at or attempt.ends_at,
                ended_reason=attempt.ended_reason or (attempt.deadline_reason if ended else ""),
                attempt_id=attempt.pk,
            )
        )
    room.seats.sort(key=lambda seat: (ORDER[seat.state], seat.seconds_left, seat.student_id))
    return room


@login_required
@require_safe
@staff_required
def exam_room(request: HttpRequest, name: str) -> HttpResponse:
    """The room, live; with ``?part=live``, its live part alone, which the page asks for again."""
    folder = sessions.folders().get(name)
    exam = OnlineExam.objects.filter(name=name).first()
    if folder is None or exam is None:
        raise Http404("no such exam")
    try:
        key = sessions.key_of(folder)
    except ExamError:
        title, roster = name, 0
    else:
        title, roster = key.title, len(key.variants)
    room = room_of(name, roster)
    context = {
        "name": name,
        "title": title,
        "exam": exam,
        "room": room,
        "now": timezone.now(),
        "poll": POLL_LARGE if len(room.seats) > LARGE else POLL,
        "quiet": QUIET.total_seconds(),
    }
    live = request.GET.get("part") == "live"
    return render(request, "service/exams/exam_room_live.html" if live else "service/exams/exam_room.html", context)
