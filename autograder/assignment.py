"""An assignment as the grader sees it: ``assignments/<name>/assignment.toml`` and what it names.

name = "sequences-and-attention"
title = "..."
notebook = "source/sequences-and-attention.ipynb"   # the nbgrader-style source notebook
hidden_tests = "hidden"                             # the hidden pytest suite
[limits]                                            # optional; see sandbox.limits.Limits
call_timeout = 10
[[questions]]
id = "softmax"
points = 2
functions = ["softmax"]          # what the question grades (manual questions grade cells)
manual = false
uses = []                        # graded functions of other questions that these functions call
charge_dependents = true         # (top level) charge a question that fails because of a function it uses
due = 2026-12-01T23:59:00+01:00  # optional, with late_penalty and late_until: see autograder.lateness
visibility = "visible"           # what a student sees of the checks: "visible", "after_due", "after_published",
                                 # "hidden" (autograder.visibility; a question's own, and a check's, under it)
publish = "automatic"            # optional: "by_staff" when the staff publish grades (the default once any
                                 # setting says "after_published")
feedback = "immediate"           # the older switch, read as visibility: "immediate", "after_due", "hidden"
max_submissions = 10             # optional limits on submissions through the service: in all,
submissions_per_hour = 3         # and per rolling hour
practice_per_hour = 10           # runs of the practice checks a student may ask for per rolling hour
counts = "last"                  # the submission whose grade counts: "last", "best", "last_before_due"
[parameters.seq_len]             # optional: values drawn for each student (autograder.own_values)
range = [6, 12]
"""

from __future__ import annotations

import json
import keyword
import tomllib
from collections.abc import Iterable
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from course.folder import SANDBOX_PACKAGES
from course.models import Parameter

from .errors import AssignmentError
from .lateness import LatePolicy, aware, parse_penalty
from .reports.model import FROM_FEEDBACK, CheckSetting, Publish, Visibility, VisibilityRules
from .sandbox.limits import Limits

if TYPE_CHECKING:  # the course folder's model; the engine needs only its fields
    from course.folder import CourseFolder

MANIFEST = "assignment.toml"
# What the release leaves in a written answer's cell (nbgrader's ClearSolutions text stub): not an answer.
ANSWER_STUB = "YOUR ANSWER HERE"


def question_of_cell(grade_id: str, question_ids: Iterable[str]) -> str | None:
    """The one rule from a notebook cell's nbgrader ``grade_id`` to its question: the question whose
    id is the grade_id, or whose id followed by ``_`` begins it, the longest such id winning
    (``softmax_tests`` and ``softmax`` are softmax's; ``self_attention_tests`` is not attention's)."""
    for question_id in sorted(question_ids, key=len, reverse=True):
        if grade_id == question_id or grade_id.startswith(question_id + "_"):
            return question_id
    return None


DEFAULT_ROOT = Path("assignments")


class RubricItem(BaseModel):
    """One item of a hand-graded question's rubric: points given (or taken, when negative) when it applies."""

    # The item's id, kept with every mark that applied it.
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    # What the grader and the student read.
    text: str = Field(min_length=1)
    # Points given when it applies; negative to take points off.
    points: float


class MutantSettings(BaseModel):
    """A question's mutants (autograder/mutants.py): ``mutants = { off = [...], accepted = {...} }``."""

    model_config = {"extra": "forbid"}
    # Operators of the catalogue (mutants.OPERATORS) that make no mutant of this question.
    off: list[str] = []
    # Mutants its hidden tests pass on purpose, by id ("softmax:3:constant"), each with the reason
    # that `autograder verify` shows beside it.
    accepted: dict[str, str] = {}
    # Failing checks a mutant's name in the feedback rests on at least (fewer: nothing is named).
    min_checks: int = Field(default=2, ge=1)


class Question(BaseModel):
    # The question's id, as the hidden suites mark it (`pytest.mark.question("softmax")`).
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    # The question's title, shown beside its id on the pages and in reports.
    title: str = ""
    # The question's points; its score is its points times the share of its hidden tests passed.
    points: float = Field(gt=0)
    # The notebook's functions this question grades.
    functions: list[str] = []
    # Graded functions of other questions that this question's functions call: when one of those
    # fails its own question, this question's feedback says so first.
    uses: list[str] = []
    # Graded by hand (its answers are the notebook's solution cells with this grade_id).
    manual: bool = False
    # For a question graded by hand: the rubric's items ([[questions.rubric]]); a mark is then the sum
    # of the items applied plus an adjustment, within 0..points, computed from the items' current points.
    rubric: list[RubricItem] = []
    # Its mutants: operators switched off, survivors accepted with a reason, the checks a name needs.
    mutants: MutantSettings = MutantSettings()
    # What a student sees of its checks, and when (autograder.visibility): the assignment's when unset.
    visibility: Visibility | None = None
    # A check's own, by the hidden test's name: a visibility, or "practice" (a check the student runs
    # and reads the sentence and outcome of, never its code; it counts in no score).
    checks: dict[str, CheckSetting] = {}


class Assignment(BaseModel):
    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    # The assignment's title, as students and course platforms read it.
    title: str
    # The source notebook, relative to the assignment's folder (what `autograder release` makes the
    # student's notebook from).
    notebook: str
    # The folder of the hidden pytest suites (`test_*.py`), relative to the assignment's folder.
    hidden_tests: str = "hidden"
    # The references the hidden tests compare against, by name: {name = "path/to/module.py"}, any
    # names. (A folder, the older form, means its numpy_reference.py and torch_reference.py.)
    references: dict[str, str] | str = "../references"
    questions: list[Question] = Field(min_length=1)
    # Whether a question that fails because a function it uses fails is charged as measured (true),
    # or marked not graded until that function passes (false).
    charge_dependents: bool = True
    # What one submission may use in the sandbox (see [limits]); the course's [defaults.limits] below these.
    limits: Limits = Limits()
    # What a submission may import in the sandbox (numpy always): set from the course's course.toml.
    sandbox_packages: list[str] = list(SANDBOX_PACKAGES)
    folder: Path = Path(".")
    # What a student sees of the checks (autograder.visibility): "visible", "after_due" (their own
    # due time, their extension's included), "after_published" or "hidden"; a question's and a
    # check's own under it. Unset: the older ``feedback`` says it.
    visibility: Visibility | None = None
    # When grades are published: "automatic" (as they are made) or "by_staff" (`autograder grades
    # publish`, or the staff's page). Unset: "by_staff" if any visibility is "after_published".
    publish: Publish | None = None
    # The older switch for the same (immediate: visible; after_due; hidden), kept for courses
    # written before visibility: read only when ``visibility`` is unset.
    feedback: Literal["immediate", "after_due", "hidden"] = "immediate"
    # Submissions a student may make through the service: in all, and per rolling hour.
    max_submissions: int | None = Field(default=None, ge=1)
    # Hand-ins a student may make through the service in any rolling hour.
    submissions_per_hour: int | None = Field(default=None, ge=1)
    # Runs of the practice checks (``checks = { name = "practice" }``) a student may ask the service
    # for on this assignment in any rolling hour: each runs in the sandbox on the server, and counts in
    # neither the score nor the submissions above.
    practice_per_hour: int = Field(default=10, ge=1)
    # Which of a student's submissions their grade is: "last" (the last handed in), "best" (the
    # highest final score, late penalty taken off; of equal ones, the later), or "last_before_due"
    # (the last handed in by their due time, their extension's included; the last of all when none
    # was on time). The staff may make any submission the one that counts instead (`autograder
    # grades count`, or the student's page), until they undo it.
    counts: Literal["last", "best", "last_before_due"] = "last"
    # Late work (see autograder.lateness): no due time, no penalty.
    # The due time, ISO 8601 with its time zone (2026-12-01T23:59:00+01:00).
    due: datetime | None = None
    # What lateness costs, of the earned score: "10% per day" (per day or part of one), "2% per hour";
    # without it, late work earns nothing. The course's [defaults] late_penalty stands in for it.
    late_penalty: str | None = None
    # After this time a submission earns nothing.
    late_until: datetime | None = None
    # Canvas's id of the assignment (the number in its address, /courses/<course>/assignments/<id>):
    # the Canvas grade file names its column "Title (id)", which Canvas matches by id, not by title.
    canvas_assignment_id: int | None = Field(default=None, ge=1, strict=True)
    # Values drawn for each student ([parameters.NAME], as a generated check question draws its own:
    # range, uniform or choices, optionally size): each student's notebook holds their own in its
    # cell tagged "parameters", and the hidden tests and the reference use the student's (the
    # `parameters` fixture), drawn from the student's id, never read from the notebook.
    parameters: dict[str, Parameter] = {}
    # The course's seed for those values (course.toml's seed): set from the course.
    course_seed: str = ""

    @field_validator("due", "late_until")
    @classmethod
    def _with_time_zone(cls, value: datetime | None, info) -> datetime | None:
        return aware(value, info.field_name)

    @field_validator("late_penalty")
    @classmethod
    def _penalty_form(cls, value: str | None) -> str | None:
        if value is not None:
            parse_penalty(value)
        return value

    @model_validator(mode="after")
    def _one_visibility(self) -> Assignment:
        given = self.model_fields_set
        said = FROM_FEEDBACK[self.feedback]
        if (
            self.visibility is not None
            and "feedback" in given
            and self.feedback != "immediate"
            and said != self.visibility
        ):
            raise ValueError(
                f"feedback = {self.feedback!r} (the older name) says {FROM_FEEDBACK[self.feedback]!r}, visibility "
                f"says {self.visibility!r}: keep visibility alone"
            )
        return self

    @property
    def visibility_rules(self) -> VisibilityRules:
        """What a student sees of each question and check, and when, as autograder.visibility reads
        it: the most specific setting of each, the older ``feedback`` for an assignment without
        ``visibility``, and who publishes (the staff's, once anything says after_published)."""
        default = self.visibility or FROM_FEEDBACK[self.feedback]
        checks: dict[str, dict[str, Visibility]] = {}
        practice: dict[str, list[str]] = {}
        for question in self.questions:
            for test, setting in question.checks.items():
                if setting == "practice":
                    practice.setdefault(question.id, []).append(test)
                else:
                    checks.setdefault(question.id, {})[test] = setting
        questions = {q.id: q.visibility for q in self.questions if q.visibility is not None}
        used = {default, *questions.values(), *(v for own in checks.values() for v in own.values())}
        publish: Publish = self.publish or ("by_staff" if "after_published" in used else "automatic")
        return VisibilityRules(
            default=default,
            questions=questions,
            checks=checks,
            practice=practice,
            manual=[q.id for q in self.questions if q.manual],
            publish=publish,
        )

    @property
    def late_policy(self) -> LatePolicy | None:
        if self.due is None:
            return None
        return LatePolicy(due=self.due, late_penalty=self.late_penalty or "100% per day", late_until=self.late_until)

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, questions: list[Question]) -> list[Question]:
        ids = [question.id for question in questions]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"question ids repeat: {', '.join(repeated)}")
        return questions

    @field_validator("parameters")
    @classmethod
    def _parameter_names(cls, parameters: dict[str, Parameter]) -> dict[str, Parameter]:
        for name in parameters:
            if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
                raise ValueError(f"{name!r} is not a name a notebook's cell can assign (a Python name, no leading _)")
        return parameters

    @model_validator(mode="after")
    def _known_uses(self) -> Assignment:
        graded = {function for question in self.questions for function in question.functions}
        for question in self.questions:
            unknown = [function for function in question.uses if function not in graded]
            if unknown:
                raise ValueError(
                    f"question {question.id!r} uses {', '.join(unknown)}, which no question grades "
                    f"(graded functions: {', '.join(sorted(graded))})"
                )
        return self

    def in_course(
        self,
        packages: list[str],
        default_limits: dict[str, float],
        course_file: Path,
        late_penalty: str | None = None,
        seed: str = "",
    ) -> Assignment:
        """The assignment with its course's sandbox packages, and the course's defaults (limits, late
        policy) under the ones its own manifest sets."""
        if late_penalty is not None and self.late_penalty is None:
            try:
                parse_penalty(late_penalty)
            except ValueError as exc:
                raise AssignmentError(f"{course_file}: defaults.late_penalty: {exc}") from None
        own = self.limits.model_dump(include=self.limits.model_fields_set)
        try:
            limits = Limits(**{**default_limits, **own})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise AssignmentError(f"{course_file}: defaults.limits.{where}: {first['msg']}") from None
        update = {"sandbox_packages": packages, "limits": limits, "course_seed": seed}
        if late_penalty is not None and self.late_penalty is None:
            update["late_penalty"] = late_penalty
        return self.model_copy(update=update)

    @property
    def notebook_path(self) -> Path:
        return self.folder / self.notebook

    @property
    def released_notebook(self) -> str:
        """The file name of the notebook students are given (and hand back)."""
        return f"{self.name}.ipynb"

    @property
    def hidden_path(self) -> Path:
        return self.folder / self.hidden_tests

    @property
    def reference_paths(self) -> dict[str, Path]:
        """Each reference's module, by name, in the manifest's order."""
        if isinstance(self.references, dict):
            return {name: (self.folder / path).resolve() for name, path in self.references.items()}
        folder = (self.folder / self.references).resolve()
        return {name: folder / f"{name}_reference.py" for name in ("numpy", "torch")}

    @property
    def max_score(self) -> float:
        return sum(question.points for question in self.questions)

    def question_of_cell(self, grade_id: str) -> Question | None:
        """The question a notebook cell belongs to, by ``question_of_cell``'s rule."""
        found = question_of_cell(grade_id, (question.id for question in self.questions))
        return None if found is None else self.question(found)

    @property
    def answer_headings(self) -> dict[str, str]:
        """Each hand-graded question's heading in the source notebook (the first heading of a Markdown
        cell of that question that is not a solution), by question id, as ``heading_of`` compares it."""
        return _answer_headings(
            str(self.notebook_path),
            tuple(q.id for q in self.questions if q.manual),
            tuple(q.id for q in self.questions),
        )

    def question(self, question_id: str) -> Question:
        for question in self.questions:
            if question.id == question_id:
                return question
        raise AssignmentError(
            f"{self.name}: no question {question_id!r}; questions: {', '.join(q.id for q in self.questions)}"
        )


@cache
def _answer_headings(notebook: str, manual: tuple[str, ...], question_ids: tuple[str, ...]) -> dict[str, str]:
    from .submissions import heading_of

    try:
        cells = json.loads(Path(notebook).read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return {}
    headings: dict[str, str] = {}
    for cell in cells:
        nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
        grade_id = nbgrader.get("grade_id")
        if cell.get("cell_type") != "markdown" or not isinstance(grade_id, str) or nbgrader.get("solution"):
            continue
        question = question_of_cell(grade_id, question_ids)
        source = cell.get("source", "")
        heading = heading_of("".join(source) if isinstance(source, list) else str(source))
        if question in manual and heading and question not in headings:
            headings[question] = heading
    return headings


def course_assignment(course: CourseFolder, reference: str | Path) -> Assignment:
    """An assignment of a course, by name (as course.toml lists it) or by its folder, with the
    course's sandbox packages and defaults (limits, late policy)."""
    given = Path(reference)
    folders = course.assignment_folders
    if (given / MANIFEST).is_file():
        assignment = load_assignment(given)
    elif str(reference) in folders:
        assignment = load_assignment(folders[str(reference)])
    else:
        known = ", ".join(sorted(folders)) or "none"
        raise AssignmentError(f"{reference}: no such assignment in the course; its assignments: {known}")
    return assignment.in_course(
        course.sandbox.packages,
        course.defaults.limits,
        course.root / "course.toml",
        course.defaults.late_penalty,
        course.seed,
    )


def course_assignments(course: CourseFolder) -> list[Assignment]:
    """Every assignment of a course, in course.toml's order."""
    return [course_assignment(course, name) for name in course.assignment_folders]


def find_assignment(reference: str | Path, course: Path | None = None) -> Assignment:
    """The assignment a command names: a folder holding assignment.toml, else an assignment of the
    course (``course``, else the course.toml in the working directory or above) by name, with the
    course's sandbox packages; a folder outside any course (no ``course`` given) gets the defaults."""
    from course.errors import CourseError
    from course.folder import find_course

    try:
        found = find_course(course)
    except CourseError as exc:
        if (Path(reference) / MANIFEST).is_file() and not course:
            return load_assignment(reference)
        raise AssignmentError(f"{reference}: {exc}") from None
    return course_assignment(found, reference)


def find_assignments(references: Iterable[str | Path], course: Path | None = None) -> list[Assignment]:
    """``find_assignment`` of each; none named: every assignment of the course, in course.toml's order."""
    from course.folder import find_course

    named = list(references)
    if not named:
        return course_assignments(find_course(course))
    return [find_assignment(reference, course) for reference in named]


def load_assignment(reference: str | Path, root: Path = DEFAULT_ROOT) -> Assignment:
    """An assignment by folder name under ``root`` (``assignments/``) or by path."""
    folder = Path(reference)
    if not (folder / MANIFEST).is_file() and (root / str(reference) / MANIFEST).is_file():
        folder = root / str(reference)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        known = sorted(p.parent.name for p in root.glob(f"*/{MANIFEST}")) if root.is_dir() else []
        hint = f"; known assignments: {', '.join(known)}" if known else ""
        raise AssignmentError(f"{reference}: no assignment here (no {MANIFEST}){hint}")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AssignmentError(f"{manifest}: {exc}") from None
    try:
        assignment = Assignment(**data, folder=folder.resolve())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise AssignmentError(f"{manifest}: {where}: {first['msg']}") from None
    for path, what in ((assignment.notebook_path, "notebook"), (assignment.hidden_path, "hidden_tests")):
        if not path.exists():
            raise AssignmentError(f"{manifest}: {what}: {path} does not exist")
    return assignment
