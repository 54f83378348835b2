"""What grading one submission produces: the report every writer and the gradebook read."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

# not_graded: the question depends on a function that fails its own question, and the assignment
# does not charge dependents (``charge_dependents = false``); it scores nothing until that passes.
# Or the assignment's own tests failed (``Report.test_faults``): a check that failed by the hidden
# test's own code counts as passed until the staff fix it and grade the question again.
Status = Literal["passed", "partial", "failed", "error", "timeout", "manual", "not_graded"]


class TestFault(BaseModel):
    """A hidden test that failed by its own code, not by the student's (a NameError in the test, a
    broken fixture): the assignment's fault, told to the staff alone, never to the student (its
    traceback shows the hidden test's code)."""

    question: str
    test: str  # the test's name
    error: str  # what it raised: "NameError: name 'np' is not defined"
    where: str  # where: the master notebook's cell and line when assign wrote the test, else its file and line
    traceback: str  # the test's own frames, innermost last: each place and its line of code, then the error


class TestOutcome(BaseModel):
    """One hidden test's result, in words safe to show the student."""

    question: str
    name: str
    description: str
    status: Literal["passed", "failed", "error", "timeout"]
    message: str = ""
    # Set while grading (never stored with the outcome) when the test failed by its own code: the
    # report's ``test_faults`` keep it for the staff.
    fault: TestFault | None = Field(default=None, exclude=True)


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
    # The question's id in the manifest.
    id: str
    title: str = ""  # the question's title in the manifest
    score: float
    max_score: float
    # passed, partial, failed, error, timeout, manual (awaiting or given a hand mark) or not_graded.
    status: Status
    # What the student reads about this question.
    feedback: str
    # Each hidden test's outcome, in words safe to show the student.
    tests: list[TestOutcome] = []
    answers: dict[str, str] = {}  # written answers of a question graded by hand, by cell grade_id
    mark: HandMark | None = None  # the hand-given score, which is then this question's score


class Report(BaseModel):
    # The student's name as the submission gave it (their folder, a platform's download, the file's stem).
    student: str
    # The assignment's name.
    assignment: str
    # The earned score: the questions' scores, hand marks included, before any late penalty.
    score: float
    max_score: float
    questions: list[QuestionResult]
    # What went wrong running the submission (at most 50, each at most 500 characters).
    errors: list[str] = []
    # What the notebook printed while loading, at most 64 KiB.
    output: str = ""
    # The submission's file, as handed in.
    submission: str
    # The SHA-256 of the submission's bytes.
    sha256: str
    # The reference the hidden tests compared against, and the sandbox that ran the code.
    reference: str
    sandbox: str
    # When it was graded (ISO 8601, UTC), and by which version of the grader.
    graded_at: str
    grader_version: str
    # False when the submission could not be read, or its code could not be run at all.
    ran: bool = True
    # When it was handed in, and what lateness cost (none when the assignment has no due time).
    submitted_at: str | None = None
    late: LatePenalty | None = None
    # When the student may see the hidden tests' results (the assignment's ``feedback``).
    feedback: Literal["immediate", "after_due", "hidden"] = "immediate"
    seconds: float | None = None  # how long grading took
    # A regrade of one question: only its result is in ``questions``; the others stand as recorded.
    only_question: str | None = None
    # For the staff alone: the hidden tests that failed by their own code (the assignment's fault).
    # Their questions are not_graded, each such check counted as passed; fix the test, then grade
    # the question again (``autograder grade --question``).
    test_faults: list[TestFault] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def final_score(self) -> float:
        """The earned score less the late penalty: what goes to the course platform."""
        return max(0.0, self.score - (self.late.points if self.late else 0.0))
