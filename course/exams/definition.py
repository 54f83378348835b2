"""An exam's definition: a list of zones, each choosing some questions from its pool, with points per
zone (``course exam build --definition exam.toml``, TOML or JSON).

.. code-block:: toml

    title = "Module 10 exam"

    [[zones]]
    title = "Attention"
    choose = 2            # questions each student gets from this zone's pool
    points = 2            # what each of them is worth
    balance = true        # with --statistics: one question from each band of measured difficulty
    questions = [
        "module-10-question-bank-check-1",
        "module-10-question-bank-scale-factor-known-mistake",   # generated: a drawn variant per student
        { alternatives = ["module-10-question-bank-check-2", "module-10-question-bank-check-3"] },
    ]

A question is named as the exports name it: a check by its identifier (``<lesson>-check-<n>``, or
its own ``id``), a generated question of any kind by ``<lesson>-<question id>`` (each student gets
their own drawn variant; a numeric or short-answer one is written in a box on the answer sheet). An entry with ``alternatives`` counts as one question of its zone, and each
student gets one of its alternatives.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from ..errors import ExamError
from ..models import Model
from ..wording import plural


class Alternatives(Model):
    """One question of a zone, of which each student gets one of these."""

    alternatives: list[str] = Field(min_length=2)  # the questions that stand for one another


class Zone(Model):
    title: str = Field(min_length=1)  # printed before the zone's first question, with its points
    choose: int = Field(ge=1)  # how many of its questions each student gets
    points: float = Field(default=1.0, gt=0)  # what each of them is worth
    # With --statistics: one question from each of choose bands of measured difficulty.
    balance: bool = False
    # Its pool: checks (<lesson>-check-<n>), generated questions (<lesson>-<id>), entries of alternatives.
    questions: list[str | Alternatives] = Field(min_length=1)

    @model_validator(mode="after")
    def _enough(self) -> Zone:
        if self.choose > len(self.questions):
            raise ValueError(
                f"chooses {self.choose} of its {plural(len(self.questions), 'question')}; it cannot choose more"
            )
        return self

    def entries(self) -> list[tuple[str, list[str]]]:
        """Each entry of the pool: its key (a question's name, or its alternatives' joined by '|') and
        the questions it may be."""
        return [
            (entry, [entry]) if isinstance(entry, str) else ("|".join(entry.alternatives), entry.alternatives)
            for entry in self.questions
        ]


class ExamDefinition(Model):
    title: str | None = None  # the exam's title (--title wins; default: course.toml's)
    zones: list[Zone] = Field(min_length=1)  # in the order the exam prints them

    @model_validator(mode="after")
    def _each_question_once(self) -> ExamDefinition:
        seen: dict[str, int] = {}
        for number, zone in enumerate(self.zones, start=1):
            for _, names in zone.entries():
                for name in names:
                    if name in seen:
                        raise ValueError(f"{name!r} is in zone {seen[name]} already; a question is in one place")
                    seen[name] = number
        return self

    def names(self) -> list[str]:
        return [name for zone in self.zones for _, names in zone.entries() for name in names]


def load_definition(path: Path) -> ExamDefinition:
    """The definition in ``path`` (``.toml`` or ``.json``); one line naming the file and the place
    for anything wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExamError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        raw = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ExamError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'} ({exc})") from None
    try:
        return ExamDefinition.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        error = next((e for e in errors if e["type"] != "string_type"), errors[0])  # a dict entry: its own error
        where = "/".join(str(part) for part in error["loc"] if not str(part).startswith(("str", "Alternatives")))
        what = error["msg"].removeprefix("Value error, ")
        raise ExamError(f"{path}: {where or 'the definition'}: {what}") from None
