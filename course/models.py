"""The course content as typed, validated data.

Every loader, whatever the file format, produces these models; exports, exams and the CLI read
only these. Rules that a lesson file must keep (one correct option, a display order that is a
permutation, ...) live here, so they hold however a lesson was made.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterator
from typing import Annotated, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .tolerance import tolerance
from .wording import plural

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

# Characters that would start markup if written bare into inline Markdown.
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>&])")
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def normalise_text(text: str) -> str:
    """Text as a reader compares it: typographic quotes straightened, white space folded."""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC)
    return " ".join(text.split())


def slugify(text: str) -> str:
    """A URL-safe identifier: 'Recurrent networks, and their ceiling' -> 'recurrent-networks-and-their-ceiling'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


# --- inline text -------------------------------------------------------------------------------


class InlineRun(Model):
    """A stretch of inline text with one style. ``math`` runs hold LaTeX source, without delimiters."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    math: bool = False

    def markdown(self) -> str:
        if self.math:
            return f"\\({self.text}\\)"
        if self.code:
            fence = "``" if "`" in self.text else "`"
            pad = " " if self.text.startswith("`") or self.text.endswith("`") else ""
            return f"{fence}{pad}{self.text}{pad}{fence}"
        body = _MARKDOWN_SPECIALS.sub(r"\\\1", self.text)
        # Emphasis markers must hug the text: move surrounding spaces outside them.
        stripped = body.strip()
        if not stripped or not (self.bold or self.italic):
            return body
        lead, trail = body[: len(body) - len(body.lstrip())], body[len(body.rstrip()) :]
        if self.italic:
            stripped = f"*{stripped}*"
        if self.bold:
            stripped = f"**{stripped}**"
        return f"{lead}{stripped}{trail}"


class RichText(RootModel[list[InlineRun]]):
    """Inline text as a list of styled runs (bold, italic, code, math)."""

    model_config = ConfigDict(frozen=True)

    def __iter__(self) -> Iterator[InlineRun]:  # type: ignore[override]
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def plain(self) -> str:
        """The text a reader sees, with math kept as its LaTeX source."""
        return "".join(run.text for run in self.root)

    def markdown(self) -> str:
        """Inline Markdown: ``code``, ``**bold**``, ``*italic*`` and ``\\( math \\)``."""
        return "".join(run.markdown() for run in self.root)

    @classmethod
    def of(cls, text: str) -> RichText:
        return cls([InlineRun(text=text)])


# --- blocks --------------------------------------------------------------------------------------


class Heading(Model):
    kind: Literal["heading"] = "heading"
    level: int = Field(ge=1, le=6)
    text: str = Field(min_length=1)
    anchor: str


class Paragraph(Model):
    kind: Literal["paragraph"] = "paragraph"
    runs: RichText


class CodeBlock(Model):
    kind: Literal["code"] = "code"
    language: str | None = None
    text: str


class MathBlock(Model):
    """Display math, as LaTeX source without its ``\\[ \\]`` delimiters."""

    kind: Literal["math"] = "math"
    latex: str


class ListBlock(Model):
    kind: Literal["list"] = "list"
    ordered: bool = False
    items: list[RichText] = Field(min_length=1)


Block = Annotated[Heading | Paragraph | CodeBlock | MathBlock | ListBlock, Field(discriminator="kind")]


def block_text(block: Heading | Paragraph | CodeBlock | MathBlock | ListBlock) -> str:
    """A block's text, for comparing two descriptions of the same lesson."""
    match block:
        case Heading():
            return block.text
        case Paragraph():
            return block.runs.plain()
        case CodeBlock():
            return block.text
        case MathBlock():
            return block.latex
        case ListBlock():
            return " | ".join(item.plain() for item in block.items)
    raise TypeError(f"not a block: {block!r}")


class Section(Model):
    """A titled part of a lesson; sub-headings (level 3 and deeper) stay inside as blocks."""

    title: str = Field(min_length=1)
    anchor: str
    level: int = Field(default=2, ge=1, le=6)
    blocks: list[Block] = []


# --- questions -----------------------------------------------------------------------------------


class Option(Model):
    text: RichText
    correct: bool = False
    # Why a student is drawn to this wrong option; shown as its feedback.
    tempting: RichText | None = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, text: RichText) -> RichText:
        if not text.plain().strip():
            raise ValueError("option text is empty")
        return text


class Check(Model):
    """A single-answer multiple-choice question with per-option feedback.

    ``options`` keep the order of the source; ``order`` is the order a student sees them in
    (``order[0]`` is the index of the option shown first).
    """

    stem: RichText
    options: list[Option] = Field(min_length=2, max_length=26)
    order: list[int] = Field(default_factory=list, validate_default=True)
    # The check's identifier on course platforms, kept through export and import so that a re-export
    # updates the same question there; None: derived from the lesson's slug and the check's number.
    id: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9._-]*$", max_length=200)
    # The pool this check is one drawn variant of (a generated question exported as N variants, of
    # which a platform gives each student one); exports group a pool's checks, imports keep it.
    pool: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9._-]*$", max_length=200)

    @field_validator("stem")
    @classmethod
    def _stem_not_blank(cls, stem: RichText) -> RichText:
        if not stem.plain().strip():
            raise ValueError("the question is empty")
        return stem

    @field_validator("options")
    @classmethod
    def _one_correct_no_repeats(cls, options: list[Option]) -> list[Option]:
        correct = [i for i, option in enumerate(options) if option.correct]
        if not correct:
            raise ValueError("no option is marked correct; exactly one must be")
        if len(correct) > 1:
            numbers = ", ".join(str(i + 1) for i in correct)
            raise ValueError(f"options {numbers} are all marked correct; exactly one must be")
        seen: dict[str, int] = {}
        for index, option in enumerate(options):
            key = normalise_text(option.text.plain()).casefold()
            if key in seen:
                raise ValueError(
                    f"option {index + 1} repeats the text of option {seen[key] + 1}: {_quote(option.text.plain())}"
                )
            seen[key] = index
        return options

    @field_validator("order")
    @classmethod
    def _order_is_permutation(cls, order: list[int], info: ValidationInfo) -> list[int]:
        options = info.data.get("options")
        if options is None:  # options already failed; their error is the one to report
            return order
        if not order:
            return list(range(len(options)))
        if sorted(order) != list(range(len(options))):
            raise ValueError(
                f"display order {order} is not a permutation of the {plural(len(options), 'option')} "
                f"(each of 0..{len(options) - 1} exactly once)"
            )
        return order

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)

    def displayed(self) -> list[Option]:
        """The options in the order a student sees them."""
        return [self.options[i] for i in self.order]


# --- generated questions (drawn by course.generated) ---------------------------------------------

QuestionKind = Literal["multiple-choice", "numeric", "short-answer"]
ParameterValue = int | float | str | list[int | float | str]


class Parameter(Model):
    """How one parameter is drawn: exactly one of ``range`` (integers, both ends included, by
    ``step``), ``uniform`` (a real number rounded to ``digits`` decimals) or ``choices``; with
    ``size``, a list of that many independent draws."""

    range: tuple[int, int] | None = None
    step: int = Field(default=1, ge=1)
    uniform: tuple[float, float] | None = None
    digits: int = Field(default=2, ge=0, le=12)
    choices: list[int | float | str] | None = Field(default=None, min_length=1)
    size: int | None = Field(default=None, ge=1, le=64)

    @model_validator(mode="after")
    def _one_way(self) -> Parameter:
        ways = [way for way in ("range", "uniform", "choices") if getattr(self, way) is not None]
        if len(ways) != 1:
            raise ValueError("give exactly one of range, uniform or choices")
        for pair in (self.range, self.uniform):
            if pair is not None and pair[0] > pair[1]:
                raise ValueError(f"the range's low end {pair[0]} is above its high end {pair[1]}")
        return self

    def draw(self, rng: random.Random) -> ParameterValue:
        if self.size is None:
            return self._one(rng)
        return [self._one(rng) for _ in range(self.size)]

    def _one(self, rng: random.Random) -> int | float | str:
        if self.range is not None:
            return rng.randrange(self.range[0], self.range[1] + 1, self.step)
        if self.uniform is not None:
            return round(rng.uniform(*self.uniform), self.digits)
        assert self.choices is not None
        return rng.choice(self.choices)


class Tolerance(Model):
    """How close a numeric answer must be: ``|response - answer| <= absolute + relative * |answer|``
    (``course.tolerance.within``). Unstated parts are the grader's own, float32's precision."""

    relative: float = Field(default_factory=lambda: tolerance(np.dtype("float32"))[0], ge=0)
    absolute: float = Field(default_factory=lambda: tolerance(np.dtype("float32"))[1], ge=0)


class GeneratedOption(Model):
    text: str = Field(min_length=1)
    correct: bool = False
    tempting: str | None = None


class GeneratedCheck(Model):
    """A check question drawn anew for each student: templates over drawn and computed values."""

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9._-]*$", max_length=200)
    kind: QuestionKind = "multiple-choice"
    objective: str | None = None  # the learning objective it covers, as the bank's checks name theirs
    question: str = Field(min_length=1)
    parameters: dict[str, Parameter] = {}
    values: dict[str, str] = {}
    # "file.py:function", the file beside the lesson; resolved to an absolute path by the loader.
    generator: str | None = Field(default=None, pattern=r"^[^:]+\.py:[A-Za-z_][A-Za-z0-9_]*$")
    options: list[GeneratedOption] = []
    answer: str | None = None
    tolerance: Tolerance = Field(default_factory=Tolerance)
    # A numeric or short answer's units, printed after a paper exam's answer box (and accepted after
    # the number a student writes): "ms", "weights".
    units: str | None = Field(default=None, min_length=1, max_length=40)
    feedback: str | None = None
    # The pool this question is one variant of (a fixed question read back from a platform's pool).
    pool: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9._-]*$", max_length=200)

    @property
    def fixed(self) -> bool:
        """Whether it draws nothing (no parameters, no generator): one question for everyone, as a
        numeric or short-answer question read back from a platform is."""
        return not self.parameters and not self.generator

    @model_validator(mode="after")
    def _kind_has_its_parts(self) -> GeneratedCheck:
        if self.kind == "multiple-choice":
            if len(self.options) < 2:
                raise ValueError("a multiple-choice question needs at least two options")
            correct = sum(option.correct for option in self.options)
            if correct != 1:
                raise ValueError(f"{plural(correct, 'option')} marked correct; exactly one must be")
            if self.answer is not None:
                raise ValueError("a multiple-choice question marks its answer among its options, not in answer")
        else:
            if self.options:
                raise ValueError(f"a {self.kind} question has no options")
            if not self.answer:
                raise ValueError(f"a {self.kind} question needs an answer")
        if self.units is not None and self.kind == "multiple-choice":
            raise ValueError("a multiple-choice question's options say their units; units are for a typed answer")
        for name in [*self.parameters, *self.values]:
            if not name.isidentifier():
                raise ValueError(f"{name!r} is not a name a template can use")
        return self


class OpenQuestion(Model):
    """A self-check question answered in the student's own words and graded by hand."""

    prompt: RichText


class LearningObjective(Model):
    text: RichText


class Assignment(Model):
    title: str
    brief: list[Block] = []
    tasks: list[RichText] = []
    notes: list[Block] = []


# --- lessons, modules, courses -------------------------------------------------------------------


class Licence(Model):
    name: str
    url: str | None = None


class Attribution(Model):
    url: str | None = None
    authorship: str | None = None
    citation: str | None = None
    licence: Licence | None = None


class CourseRef(Model):
    slug: str
    title: str
    url: str | None = None


class ModuleRef(Model):
    number: int | None = None
    slug: str | None = None
    title: str


class LessonLink(Model):
    slug: str
    title: str


LessonFormat = Literal["json", "markdown", "text"]


class Lesson(Model):
    slug: Annotated[str, Field(pattern=SLUG_PATTERN)]
    title: str = Field(min_length=1)
    format: LessonFormat
    source: str
    position: int | None = Field(default=None, ge=0)
    minutes: int | None = Field(default=None, ge=0)
    key_idea: str | None = None
    answer: str | None = None
    course: CourseRef | None = None
    module: ModuleRef | None = None
    intro: list[Block] = []
    sections: list[Section] = []
    checks: list[Check] = []
    # Check questions drawn for each student (course.generated.draw); validate draws each many times.
    generated: list[GeneratedCheck] = []
    objectives: list[LearningObjective] = []
    open_questions: list[OpenQuestion] = []
    assignment: Assignment | None = None
    previous: LessonLink | None = None
    next: LessonLink | None = None
    attribution: Attribution | None = None

    @property
    def headings(self) -> list[str]:
        return [section.title for section in self.sections]


class Module(Model):
    number: int | None = None
    title: str
    objectives: list[LearningObjective] = []
    lessons: list[Lesson] = []


class Course(Model):
    slug: str | None = None
    title: str | None = None
    modules: list[Module] = []


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "\u2026")
