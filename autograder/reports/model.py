"""What grading one submission produces: the report every writer and the gradebook read."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field, computed_field

# What a student sees of a check, and when (autograder.visibility holds the rule that reads these).
Visibility = Literal["visible", "after_due", "after_published", "hidden"]
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
# A check's own setting: a visibility, or ``practice`` (run by the student, never graded).
CheckSetting = Literal["visible", "after_due", "after_published", "hidden", "practice"]
# The assignment's older switch, ``feedback``, read as the assignment's visibility.
FROM_FEEDBACK: dict[str, Visibility] = {"immediate": "visible", "after_due": "after_due", "hidden": "hidden"}
Publish = Literal["automatic", "by_staff"]
# Gradescope's words for each (its results.json's ``visibility``).
GRADESCOPE: dict[Visibility, str] = {
    "visible": "visible",
    "after_due": "after_due_date",
    "after_published": "after_published",
    "hidden": "hidden",
}


def check_name(test: str) -> str:
    """The name a check's settings know a hidden test by: its function's, without pytest's
    parameters (``test_matrix_axes[-1]`` is ``test_matrix_axes``): one setting for every copy."""
    return test.split("[", 1)[0]


class VisibilityRules(BaseModel):
    """One assignment's visibility settings, as its manifest has them (``Assignment.visibility_rules``):
    what ``autograder.visibility.student_view`` reads, and what a report carries for its writers."""

    default: Visibility = "visible"
    questions: dict[str, Visibility] = {}  # a question's own, by id
    checks: dict[str, dict[str, Visibility]] = {}  # a check's own, by question id then the test's name
    practice: dict[str, list[str]] = {}  # the practice checks, by question id
    manual: list[str] = []  # the questions graded by hand
    # ``automatic``: every grade is published as it is made; ``by_staff``: when the staff publish.
    publish: Publish = "automatic"

    def of_question(self, question: str) -> Visibility:
        return self.questions.get(question, self.default)

    def of_check(self, question: str, test: str) -> Visibility:
        return self.checks.get(question, {}).get(check_name(test), self.of_question(question))

    def practice_checks(self) -> set[tuple[str, str]]:
        return {(question, test) for question, tests in self.practice.items() for test in tests}


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


class OwnValues(BaseModel):
    """A notebook of one's own (autograder.own_values), as a grading found it: the values drawn for
    the student (from their id: what the hidden tests and the reference used) beside those the
    handed-in notebook's parameters cell holds. ``matches`` is false when any differs or is missing
    there: the notebook is not the one made for this student (another student's, the template, or
    edited)."""

    # The values drawn for the student, by name.
    student: dict[str, int | float | str | list[int | float | str]]
    # The values the notebook holds, by name (a name it does not assign a plain value is absent).
    notebook: dict[str, int | float | str | list[int | float | str]]
    matches: bool
    # The names whose value in the notebook is not the student's (or is missing there), in order.
    differing: list[str] = []


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
    # What the student sees of each question and check, and when: the manifest's, as graded (none
    # in a report written before visibility: ``feedback`` then says it for every check).
    visibility: VisibilityRules | None = None
    seconds: float | None = None  # how long grading took
    # A regrade of one question: only its result is in ``questions``; the others stand as recorded.
    only_question: str | None = None
    # For the staff alone: the hidden tests that failed by their own code (the assignment's fault).
    # Their questions are not_graded, each such check counted as passed; fix the test, then grade
    # the question again (``autograder grade --question``).
    test_faults: list[TestFault] = []
    # An assignment with values drawn per student: the student's beside the notebook's (none for
    # an assignment without parameters, or a submission that could not be read).
    own_values: OwnValues | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def final_score(self) -> float:
        """The earned score less the late penalty: what goes to the course platform."""
        return max(0.0, self.score - (self.late.points if self.late else 0.0))
