"""Item analysis: how hard each question was and how well it separated strong from weak students; and
the same over a generated question's variants and over an exam zone's alternatives."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean, pstdev
from typing import Any

from pydantic import BaseModel

from untrusted import spreadsheet


def difficulty(correct: list[int]) -> float | None:
    """The share of students who answered correctly (unanswered counts as wrong)."""
    return fmean(correct) if correct else None


def point_biserial(correct: list[int], totals: Sequence[float]) -> float | None:
    """Point-biserial correlation between answering this item correctly and the total score:
    (M1 - M0) / s * sqrt(p q), with s the population standard deviation of the totals. None when
    it is undefined (everyone right, everyone wrong, or all totals equal)."""
    if len(correct) != len(totals) or len(correct) < 2:
        return None
    p = fmean(correct)
    spread = pstdev(totals)
    if p in (0.0, 1.0) or spread == 0:
        return None
    right = fmean(total for hit, total in zip(correct, totals, strict=True) if hit)
    wrong = fmean(total for hit, total in zip(correct, totals, strict=True) if not hit)
    return (right - wrong) / spread * math.sqrt(p * (1 - p))


class GroupStatistics(BaseModel):
    """A question's statistics over the questions that stand for it on different students' exams: a
    generated question over its drawn variants, or a zone's entry over its alternatives."""

    level: str  # "question": a generated question's variants; "alternatives": an entry's alternatives
    name: str
    members: int  # how many variants or alternatives students got
    students: int
    correct: int
    difficulty: float | None
    discrimination: float | None
    spread: float | None  # the difficulty of its easiest member less its hardest: a bad variant shows here


def group_analysis(items: Sequence[Any], totals: dict[str, float]) -> list[GroupStatistics]:
    """Each generated question over its variants, and each entry of alternatives over them, from
    the items' per-student hits (``course.exams.grade.ItemStatistics``); ``totals`` each student's
    total, against which discrimination is measured."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for item in items:
        if item.source:
            groups.setdefault(("question", item.source), []).append(item)
        if item.alternatives:
            groups.setdefault(("alternatives", item.alternatives), []).append(item)
    found = []
    for (level, name), members in groups.items():
        hits = {student: hit for item in members for student, hit in item.hits.items()}
        shares = [item.difficulty for item in members if item.difficulty is not None]
        found.append(
            GroupStatistics(
                level=level,
                name=name,
                members=len(members),
                students=len(hits),
                correct=sum(hits.values()),
                difficulty=difficulty(list(hits.values())),
                discrimination=point_biserial(list(hits.values()), [totals[student] for student in hits]),
                spread=max(shares) - min(shares) if len(shares) > 1 else None,
            )
        )
    return found


def write_groups(path: Path, groups: list[GroupStatistics]) -> None:
    """groups.csv: one row per generated question and per entry of alternatives."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle, lineterminator="\n")
        writer.writerow(["level", "name", "members", "students", "correct", "difficulty", "discrimination", "spread"])
        for group in groups:
            shown = [
                "" if value is None else f"{value:.3f}"
                for value in (group.difficulty, group.discrimination, group.spread)
            ]
            writer.writerow([group.level, group.name, group.members, group.students, group.correct, *shown])
