"""What grading one submission produces: the report every writer and the gradebook read."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

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


class QuestionResult(BaseModel):
    id: str
    score: float
    max_score: float
    status: Status
    feedback: str
    tests: list[TestOutcome] = []
    answers: dict[str, str] = {}  # written answers of a question graded by hand, by cell grade_id


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
