"""What grading one submission produces: the report every writer and the gradebook read."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, computed_field

# not_graded: the question depends on a function that fails its own question, and the assignment
# does not charge dependents (``charge_dependents = false``); it scores nothing until that passes.
Status = Literal["passed", "partial", "failed", "error", "timeout", "manual", "not_graded"]


class TestOutcome(BaseModel):
    """One hidden test's result, in words safe to show the student."""

    question: str
    name: str
    description: str
    status: Literal["passed", "failed", "error", "timeout"]
    message: str = ""


class HandMark(BaseModel):
    """A score given by hand (a manual question's, or an override), with the grader's comment."""

    score: float
    comment: str = ""
    rubric: list[str] = []  # the rubric items applied, as the student reads them ("+1 Proposes ...")
    marked_at: str
    marked_by: str = ""
    # The student handed in a new submission whose answer differs from the one this mark was given for.
    answer_changed: bool = False
    # An automatic question's score replaced by the staff, the comment saying why.
    override: bool = False


class LatePenalty(BaseModel):
    """What lateness cost, shown apart from the earned score (see autograder.lateness)."""

    due: str
    submitted_at: str
    late: bool
    units_late: int
    unit: str
    percent: float
    points: float
    after_late_until: bool = False


class QuestionResult(BaseModel):
    id: str
    title: str = ""  # the question's title in the manifest
    score: float
    max_score: float
    status: Status
    feedback: str
    tests: list[TestOutcome] = []
    answers: dict[str, str] = {}  # written answers of a question graded by hand, by cell grade_id
    mark: HandMark | None = None  # the hand-given score, which is then this question's score


class Report(BaseModel):
    student: str
    assignment: str
    score: float
    max_score: float
    questions: list[QuestionResult]
    errors: list[str] = []
    output: str = ""
    submission: str
    sha256: str
    reference: str
    sandbox: str
    graded_at: str
    grader_version: str
    # False when the submission could not be read, or its code could not be run at all.
    ran: bool = True
    submitted_at: str | None = None
    late: LatePenalty | None = None
    # When the student may see the hidden tests' results (the assignment's ``feedback``).
    feedback: Literal["immediate", "after_due", "hidden"] = "immediate"
    seconds: float | None = None  # how long grading took
    # A regrade of one question: only its result is in ``questions``; the others stand as recorded.
    only_question: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def final_score(self) -> float:
        """The earned score less the late penalty: what goes to the course platform."""
        return max(0.0, self.score - (self.late.points if self.late else 0.0))
