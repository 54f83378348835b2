"""Late work: an assignment's due time and late policy, and what a submission time costs.

In ``assignment.toml`` (or, for the policy, ``[defaults]`` in ``course.toml``)::

    due = 2026-12-01T23:59:00+01:00      # ISO 8601, with its time zone
    late_penalty = "10% per day"          # of the earned score, per day or part of a day late
    late_until = 2026-12-04T23:59:00+01:00  # after this, a submission earns nothing

An extension moves the due time (and ``late_until``, when it is earlier) to the extension's end.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from .reports.model import LatePenalty

_PENALTY = re.compile(r"^\s*(?P<percent>\d+(?:\.\d+)?)\s*%\s*per\s*(?P<unit>day|hour)\s*$", re.IGNORECASE)
UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}


def parse_penalty(text: str) -> tuple[float, str]:
    """``"10% per day"`` -> (10.0, "day"); raises ValueError with the accepted form."""
    match = _PENALTY.match(text)
    if not match or not 0 <= float(match["percent"]) <= 100:
        raise ValueError(f'{text!r} is not a late penalty; write it as "10% per day" or "2% per hour"')
    return float(match["percent"]), match["unit"].lower()


def aware(value: datetime | None, field: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{field} needs a time zone, as in 2026-12-01T23:59:00+01:00")
    return value


def extended_due(due: datetime, extended_until: datetime | None) -> datetime:
    """A student's due time: the assignment's, or their extension's end when it is later (an
    extension never brings a due time forward). The one statement of the rule: the late penalty,
    the gradebook's reports and the service's pages all ask it."""
    return extended_until if extended_until is not None and extended_until > due else due


class LatePolicy(BaseModel):
    due: datetime
    late_penalty: str = Field(default="100% per day")  # without a policy, late work earns nothing
    late_until: datetime | None = None

    def penalty(self, submitted_at: datetime, earned: float, extended_until: datetime | None = None) -> LatePenalty:
        """What a submission at ``submitted_at`` loses of ``earned``; an extension moves the due time."""
        due, until = extended_due(self.due, extended_until), self.late_until
        if until is not None and due > self.due:  # an extension past late_until moves it too
            until = max(until, due)
        percent_per, unit = parse_penalty(self.late_penalty)
        late_by = submitted_at - due
        if late_by <= timedelta(0):
            units = 0
        else:
            units = math.ceil(late_by / UNITS[unit])
        refused = until is not None and submitted_at > until
        percent = 100.0 if refused else min(100.0, units * percent_per)
        return LatePenalty(
            due=due.isoformat(timespec="seconds"),
            submitted_at=submitted_at.isoformat(timespec="seconds"),
            late=units > 0,
            units_late=units,
            unit=unit,
            percent=percent,
            points=earned * percent / 100,
            after_late_until=refused,
        )
