"""Item analysis: how hard each question was and how well it separated strong from weak students."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean, pstdev


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
