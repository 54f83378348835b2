"""What a student may see of a graded submission, and when: the one rule every face asks.

Each check (a hidden test) has a visibility, the most specific setting winning: its own
(``checks = { test_name = "after_due" }`` in its question of ``assignment.toml``), its question's
(``visibility`` in ``[[questions]]``), the assignment's (``visibility`` at the top), or, for a course
written before visibility existed, the assignment's ``feedback`` (``immediate`` is ``visible``,
``after_due`` and ``hidden`` the same words).

- ``visible``: shown as soon as it is graded;
- ``after_due``: shown once the student's own due time (their extension's) has passed;
- ``after_published``: shown once the staff publish the assignment's grades;
- ``hidden``: never shown to the student: its points reach the course platform when published.

A check shown is shown whole: its pass or fail, its sentence, its points. A check not shown is
shown as nothing but its points, counted in one honest sentence ("visible checks: 6 of 6 pass;
4 more points are decided by checks you will see after the due time"); a question's named mistake
(a known mistake, a mutant) rests on all its checks, so it is shown only when all of them are.
A question graded by hand shows its mark once published (the assignment, or that question alone).
A check marked ``practice`` is no check of the grade: the student runs it (``practice.py``).

``student_view`` is the function; ``StudentView.as_report()`` is the view in the report's own
shape (what the site, the API, ``submit()``, JupyterLab's panel and ``autograder submit`` read).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from course.wording import plural, shown_score

from .explain import checks_feedback
from .reports.model import (
    FROM_FEEDBACK,
    GRADESCOPE,
    VISIBILITIES,
    CheckSetting,
    HandMark,
    Publish,
    QuestionResult,
    Report,
    TestOutcome,
    Visibility,
    VisibilityRules,
)

# Why a check is not shown yet, as the student reads it after "checks you will ...".
UNSEEN: dict[Visibility, str] = {
    "after_due": "see after the due time",
    "after_published": "see when your grades are published",
    "hidden": "not see",
}


class Published(BaseModel):
    """What the staff have published of an assignment (gradebook.publishing keeps it)."""

    assignment: bool = False
    questions: list[str] = []  # hand-graded questions published on their own

    def of(self, question: str) -> bool:
        return self.assignment or question in self.questions


def shown_now(visibility: Visibility, due: datetime | None, now: datetime, published: bool) -> bool:
    """Whether a check of this visibility is shown now (``due``: the student's own, extension included)."""
    if visibility == "visible":
        return True
    if visibility == "after_due":
        return due is None or now >= due
    if visibility == "after_published":
        return published
    return False


def scores_shown(rules: VisibilityRules, due: datetime | None, now: datetime, published: Published) -> bool:
    """Whether every check's and every hand mark's score is shown to the student now, whatever they
    hand in: what a warning before a hand-in may name a grade's number by."""
    if rules.publish == "automatic":
        published = Published(assignment=True)
    settings = {rules.default, *rules.questions.values(), *(v for own in rules.checks.values() for v in own.values())}
    hand = all(published.of(question) for question in rules.manual)
    return hand and all(shown_now(visibility, due, now, published.assignment) for visibility in settings)


class CheckView(BaseModel):
    """A check as its student may see it: the whole of it, or only when it will be shown."""

    question: str
    shown: bool
    when: Visibility
    points: float
    # Shown checks only (None otherwise): its name, sentence, outcome and message.
    name: str | None = None
    description: str | None = None
    status: Literal["passed", "failed", "error", "timeout"] | None = None
    message: str | None = None


class QuestionView(BaseModel):
    id: str
    title: str = ""
    max_score: float
    # all: the question as graded; part: its shown checks only; none: nothing of it yet.
    shown: Literal["all", "part", "none"]
    status: str  # the report's status (all), of the shown checks (part), or "hidden"
    score: float | None  # the question's score (all), the shown checks' points (part), or None
    shown_max: float  # the points of what is shown
    feedback: str
    checks: list[CheckView]
    answers: dict[str, str] = {}
    mark: HandMark | None = None
    # Why some or all of the points are not shown: by visibility; "hand": a hand mark not published;
    # "manual": published, but not marked yet (the score holds nothing for it, as it is).
    unseen: dict[str, float] = {}


class StudentView(BaseModel):
    """What a student may see of one graded submission, now."""

    assignment: str
    student: str
    questions: list[QuestionView]
    complete: bool  # everything that counts is shown: the score is the whole score
    score: float | None  # the whole score when complete, else None
    max_score: float
    shown_score: float  # the points earned on what is shown
    shown_max: float  # the points of what is shown
    unseen: dict[str, float]  # points not shown, by why
    summary: str  # the honest sentence every face shows

    def as_report(self, report: Report) -> dict[str, Any]:
        """The report as the student may read it, in the report's own JSON shape (what the API
        gives), with ``visible_summary`` and each question's ``checks_shown``: nothing unseen is in it
        (no unseen check's name, sentence, outcome or message; no score it would reveal)."""
        data = report.model_dump(
            mode="json", exclude={"submission", "reference", "sandbox", "test_faults", "visibility"}
        )
        by_id = {q.id: q for q in self.questions}
        for question in data["questions"]:
            view = by_id[question["id"]]
            question.update(
                score=view.score,
                status=view.status,
                feedback=view.feedback,
                checks_shown=view.shown,
                shown_max=view.shown_max,
                tests=[
                    {
                        "question": c.question,
                        "name": c.name,
                        "description": c.description,
                        "status": c.status,
                        "message": c.message or "",
                    }
                    for c in view.checks
                    if c.shown
                ],
                mark=view.mark.model_dump(mode="json") if view.mark else None,
            )
        data.update(visible_summary=self.summary, shown_score=self.shown_score, shown_max=self.shown_max)
        seen = any(check.shown for question in self.questions for check in question.checks)
        seen = seen or any(q.shown != "none" for q in self.questions if not q.checks)
        data["hidden_results"] = "shown" if self.complete else "in part" if seen else "not shown"
        if not self.complete:
            data.update(score=None, final_score=None, late=None)
        return data


def _points_each(question: QuestionResult) -> float:
    return question.max_score / len(question.tests) if question.tests else 0.0


def _counted_passed(test: TestOutcome, faults: set[tuple[str, str]]) -> bool:
    """A check that earns its points: passed, or failed by the hidden test's own fault."""
    return test.status == "passed" or (test.question, test.name) in faults


def _question_view(
    result: QuestionResult,
    rules: VisibilityRules,
    due: datetime | None,
    now: datetime,
    published: Published,
    faults: set[tuple[str, str]],
) -> QuestionView:
    base: dict[str, Any] = {"id": result.id, "title": result.title, "max_score": result.max_score}
    is_published = published.of(result.id)
    if result.id in rules.manual or (result.mark is not None and result.mark.override):
        # A hand mark: the student's own answers always, the mark once published.
        if not is_published:
            return QuestionView(
                **base,
                shown="none",
                status="manual" if result.id in rules.manual else "hidden",
                score=None,
                shown_max=0.0,
                feedback="graded by hand; shown when your grades are published",
                checks=[],
                answers=result.answers,
                unseen={"hand": result.max_score},
            )
        marked = result.mark is not None
        return QuestionView(
            **base,
            shown="all" if marked else "none",
            status=result.status,
            score=result.score if marked else None,
            shown_max=result.max_score if marked else 0.0,
            feedback=result.feedback,
            checks=[],
            answers=result.answers,
            mark=result.mark,
            unseen={} if marked else {"manual": result.max_score},
        )
    each = _points_each(result)
    checks: list[CheckView] = []
    unseen: dict[str, float] = {}
    for test in result.tests:
        when = rules.of_check(result.id, test.name)
        if shown_now(when, due, now, is_published):
            checks.append(
                CheckView(
                    question=result.id,
                    shown=True,
                    when=when,
                    points=each,
                    name=test.name,
                    description=test.description,
                    status=test.status,
                    message=test.message,
                )
            )
        else:
            checks.append(CheckView(question=result.id, shown=False, when=when, points=each))
            unseen[when] = unseen.get(when, 0.0) + each
    if not result.tests:  # nothing ran (the code could not run, or no test): the question's own visibility
        when = rules.of_question(result.id)
        if shown_now(when, due, now, is_published):
            return _whole(result, [])
        return _nothing(result, [], {when: result.max_score})
    if not unseen:
        return _whole(result, checks)
    shown_tests = [test for test, check in zip(result.tests, checks, strict=True) if check.shown]
    if not shown_tests:
        return _nothing(result, checks, unseen)
    passed = [test for test in shown_tests if _counted_passed(test, faults)]
    earned = 0.0 if result.score == 0 else min(result.score, each * len(passed))
    if len(passed) == len(shown_tests):
        status = "passed"
        told = f"{len(passed)} of {plural(len(shown_tests), 'visible check')} passed."
    else:
        status = "partial" if passed else "failed"
        told = checks_feedback(shown_tests).replace(" check", " visible check", 1)
    return QuestionView(
        **base,
        shown="part",
        status=status,
        score=earned,
        shown_max=each * len(shown_tests),
        feedback=f"{told}\n{_unseen_words(unseen)}",
        checks=checks,
        unseen=unseen,
    )


def _whole(result: QuestionResult, checks: list[CheckView]) -> QuestionView:
    """A question shown as graded."""
    return QuestionView(
        id=result.id,
        title=result.title,
        max_score=result.max_score,
        shown="all",
        status=result.status,
        score=result.score,
        shown_max=result.max_score,
        feedback=result.feedback,
        checks=checks,
    )


def _nothing(result: QuestionResult, checks: list[CheckView], unseen: dict[str, float]) -> QuestionView:
    """A question none of whose checks is shown yet: what decides its points, and nothing else."""
    return QuestionView(
        id=result.id,
        title=result.title,
        max_score=result.max_score,
        shown="none",
        status="hidden",
        score=None,
        shown_max=0.0,
        feedback=_unseen_words(unseen),
        checks=checks,
        unseen=unseen,
    )


def _unseen_words(unseen: dict[str, float]) -> str:
    """``4 more points are decided by checks you will see after the due time; ...``."""
    parts = []
    for why, points in sorted(unseen.items(), key=lambda item: _ORDER.index(item[0])):
        verb = "is" if shown_score(points) == "1" else "are"
        if why == "manual":
            parts.append(f"{plural(points, 'more point')} {verb} graded by hand, not marked yet")
        elif why == "hand":
            parts.append(f"{plural(points, 'more point')} {verb} graded by hand, shown when your grades are published")
        else:
            parts.append(f"{plural(points, 'more point')} {verb} decided by checks you will {UNSEEN[why]}")  # type: ignore[index]
    return "; ".join(parts) + "." if parts else ""


_ORDER = ["after_due", "after_published", "hidden", "hand", "manual"]


def student_view(
    report: Report,
    rules: VisibilityRules,
    due: datetime | None,
    now: datetime,
    published: Published,
) -> StudentView:
    """What the student may see of ``report`` at ``now``: ``due`` is their own due time (their
    extension's when they have one), ``published`` what the staff have published (under
    ``publish = "automatic"``, everything: ``gradebook.publishing`` says which)."""
    if rules.publish == "automatic":
        published = Published(assignment=True)
    faults = {(fault.question, fault.test) for fault in report.test_faults}
    questions = [_question_view(q, rules, due, now, published, faults) for q in report.questions]
    unseen: dict[str, float] = {}
    for question in questions:
        for why, points in question.unseen.items():
            unseen[why] = unseen.get(why, 0.0) + points
    shown_score_ = sum(q.score or 0.0 for q in questions)
    shown_max = sum(q.shown_max for q in questions)
    hidden_unseen = {why: points for why, points in unseen.items() if why != "manual"}
    complete = not hidden_unseen
    return StudentView(
        assignment=report.assignment,
        student=report.student,
        questions=questions,
        complete=complete,
        score=report.score if complete else None,
        max_score=report.max_score,
        shown_score=shown_score_,
        shown_max=shown_max,
        unseen=unseen,
        summary=_summary(questions, unseen, complete, report),
    )


def _summary(questions: Iterable[QuestionView], unseen: dict[str, float], complete: bool, report: Report) -> str:
    """The honest totals: what is shown, as such, and what decides the rest."""
    checks = [check for question in questions for check in question.checks]
    shown = [check for check in checks if check.shown]
    passing = sum(check.status == "passed" for check in shown)
    if complete and not unseen:
        return f"Checks: {passing} of {plural(len(shown), 'check')} pass." if checks else "Every question is shown."
    if shown:
        words = f"Visible checks: {passing} of {plural(len(shown), 'visible check')} pass"
    elif checks:
        words = f"Your submission was graded; none of its {plural(len(checks), 'check')} is shown yet"
    else:
        words = "Your submission was graded"
    rest = _unseen_words(unseen)
    return f"{words}; {rest}" if rest else f"{words}."


__all__ = [
    "FROM_FEEDBACK",
    "GRADESCOPE",
    "VISIBILITIES",
    "CheckSetting",
    "Publish",
    "Published",
    "StudentView",
    "Visibility",
    "VisibilityRules",
    "scores_shown",
    "shown_now",
    "student_view",
]
