"""A submission's score as every face says it to its student: the site's submission page, the
JupyterLab panel and ``gradewright.submit()`` in a notebook all show these words, from this one
function, read from the report as the service's API gives it (a JSON object).

    Score: 5 / 10 so far; 3 points await hand grading
    Score of what is shown: 6 / 6
    Visible checks: 6 of 6 visible checks pass; 4 more points are decided by checks you will see after the due time.
    Late by 2 days: penalty 1 (20%); final score 4 / 10 (handed in 1 day 2 hours after the due time;
    each day begun is charged as a whole day)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from course.wording import plural, shown_score


def awaiting_points(report: Mapping[str, Any]) -> float:
    """The points of the report's questions that still wait for hand grading (0 for none)."""
    return sum(
        float(q.get("max_score") or 0)
        for q in report.get("questions", [])
        if isinstance(q, Mapping) and q.get("status") == "manual" and not q.get("mark")
    )


def _elapsed(submitted_at: str, due: str) -> str:
    """How long after the due time, in the two largest units: ``1 day 2 hours``, ``3 hours 5 minutes``."""
    try:
        seconds = int((datetime.fromisoformat(submitted_at) - datetime.fromisoformat(due)).total_seconds())
    except (TypeError, ValueError):
        return ""
    days, rest = divmod(max(seconds, 0), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    shown = [plural(n, unit) for n, unit in parts if n][:2]
    return " ".join(shown) or "less than a minute"


@dataclass(frozen=True)
class ScoreSummary:
    score: str  # "Score: 5 / 10"
    awaiting: str  # "so far; 3 points await hand grading", or ""
    late: str  # "Late by 2 days: penalty 1 (20%); final score 4 / 10 (...)", or ""
    # What is shown of a submission shown in part (autograder.visibility): the sentence, or "".
    shown: str = ""

    def lines(self) -> list[str]:
        head = [f"{self.score} {self.awaiting}".rstrip()] if self.score else []
        return head + ([self.shown] if self.shown else []) + ([self.late] if self.late else [])


def question_score(question: Mapping[str, Any]) -> str:
    """A question's score as every face shows it (``0.38 / 0.5``), of its shown checks alone when
    only some are shown (``1 / 1 on the visible checks``), or ``hidden``."""
    if question.get("score") is None:
        return "hidden"
    if question.get("checks_shown") == "part":
        return f"{_number(question['score'])} / {_number(question.get('shown_max'))} on the visible checks"
    return f"{_number(question['score'])} / {_number(question.get('max_score'))}"


def _number(value: Any) -> str:
    return shown_score(value) if isinstance(value, int | float) else "?"


def score_summary(report: Mapping[str, Any]) -> ScoreSummary | None:
    """What the student is told of their score: the whole score, or what is shown of it and what
    decides the rest (autograder.visibility's sentence); None from a server that says neither."""
    if report.get("score") is None:
        told = report.get("visible_summary")
        if not told:
            return None
        part = report.get("shown_max")
        score = (
            f"Score of what is shown: {shown_score(report.get('shown_score'))} / {shown_score(part)}" if part else ""
        )
        return ScoreSummary(score=score, awaiting="", late="", shown=str(told))
    out_of = shown_score(report.get("max_score"))
    waiting = awaiting_points(report)
    awaiting = ""
    if waiting:
        awaiting = f"so far; {plural(waiting, 'point')} await{'s' if waiting == 1 else ''} hand grading"
    late = report.get("late")
    late_text = ""
    if isinstance(late, Mapping) and late.get("percent"):
        final = f"penalty {shown_score(late.get('points'))} ({shown_score(late.get('percent'))}%); final score "
        final += f"{shown_score(report.get('final_score'))} / {out_of}"
        if late.get("after_late_until"):
            late_text = f"Handed in after the last day late work is accepted: {final}"
        else:
            unit = str(late.get("unit") or "day")
            elapsed = _elapsed(str(late.get("submitted_at")), str(late.get("due")))
            how = f"handed in {elapsed} after the due time; " if elapsed else ""
            late_text = (
                f"Late by {plural(int(late.get('units_late') or 0), unit)}: {final} "
                f"({how}each {unit} begun is charged as a whole {unit})"
            )
    return ScoreSummary(
        score=f"Score: {shown_score(report.get('score'))} / {out_of}", awaiting=awaiting, late=late_text
    )
