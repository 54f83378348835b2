"""Exams built from the lessons' check questions: per-student variants, grading with feedback,
and item analysis. ``build_exam`` and ``grade_exam`` are what ``course exam build`` and
``course exam grade`` call."""

from .build import build_exam
from .grade import grade_exam

__all__ = ["build_exam", "grade_exam"]
