"""The course's lessons as the site lists them, and a lesson's check questions as one student gets
them: its checks as written, its generated questions drawn for the student by the one drawing rule
(course.generated.draw, seeded by the student's id: what ``course show LESSON --student ID`` prints,
on every machine), each answer judged by the question's own rule (a generated one's by
course.generated.judge, the tolerance rule the exams use). Text as HTML escaped, its math as MathML, as the exam pages show it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from django.http import Http404

from course.catalog import Catalog, lesson_files, load_catalog
from course.generated import GenerationError, Variant, draw
from course.models import Check, Lesson, Module, Option, RichText
from service.core.access import course
from service.exams.text import question_html

logger = logging.getLogger("gradewright.lessons")
CHOICE, UNAVAILABLE = "multiple-choice", "unavailable"


@dataclass(frozen=True)
class Question:
    """One check question of a lesson as a student sees it. ``key`` names it in the answers kept:
    ``<slug>-check-<n>`` (or the check's own id) for a check, ``<slug>-<id>`` for a generated question
    (the names the exports and the exams' definitions give them)."""

    key: str
    number: int
    kind: str  # "multiple-choice", "numeric", "short-answer", or "unavailable" (cannot be drawn now)
    stem: str  # HTML
    options: list[tuple[str, str]] = field(default_factory=list)  # (letter, HTML), in the order shown
    check: Check | None = None  # a multiple-choice question's options, in their order
    variant: Variant | None = None  # a generated question's draw

    @property
    def generated(self) -> bool:
        return self.variant is not None

    def is_right(self, response: str) -> bool:
        """A letter of the options shown, or a typed answer judged by the generated question's rule."""
        if self.variant is not None:
            return self.variant.is_right(response)
        chosen = self._chosen(response)
        return chosen is not None and chosen.correct

    def feedback(self, response: str) -> list[str]:
        """What the student reads after answering, as HTML paragraphs: a wrong option's own feedback
        (why it tempts: the mistake it comes from), then the question's feedback."""
        said = []
        chosen = self._chosen(response)
        if chosen is not None and not chosen.correct and chosen.tempting:
            said.append(_html(chosen.tempting))
        if self.variant is not None and self.variant.feedback:
            said.append(_html(self.variant.feedback))
        return said

    def _chosen(self, response: str) -> Option | None:
        if self.check is None:
            return None
        letters = [letter for letter, _ in self.options]
        return self.check.displayed()[letters.index(response)] if response in letters else None


def _html(text: RichText) -> str:
    """Inline text as the exam pages show it (service/exams/text.py: rendered once per text)."""
    return question_html(text.markdown())


def _letters(check: Check) -> list[tuple[str, str]]:
    return [(chr(ord("A") + n), _html(option.text)) for n, option in enumerate(check.displayed())]


def questions_for(lesson: Lesson, student_id: str) -> list[Question]:
    """The lesson's checks, then its generated questions drawn for ``student_id``; a question that
    cannot be drawn (its generator fails: ``course validate`` says so first) is shown as unavailable,
    and logged for the staff."""
    found = []
    for number, check in enumerate(lesson.checks, start=1):
        key = check.id or f"{lesson.slug}-check-{number}"
        found.append(Question(key, number, CHOICE, _html(check.stem), _letters(check), check=check))
    for number, question in enumerate(lesson.generated, start=len(lesson.checks) + 1):
        key = f"{lesson.slug}-{question.id}"
        try:
            variant = draw(question, student_id)
        except GenerationError as exc:
            logger.warning("lesson %s: question %s cannot be drawn: %s", lesson.slug, question.id, exc)
            found.append(Question(key, number, UNAVAILABLE, ""))
            continue
        options = _letters(variant.check) if variant.check is not None else []
        found.append(Question(key, number, question.kind, _html(variant.stem), options, variant.check, variant))
    return found


def key_idea(lesson: Lesson) -> str:
    return question_html(lesson.key_idea) if lesson.key_idea else ""


def modules() -> list[Module]:
    """The course's lessons by module, as ``course lessons`` groups them; a lesson file that does
    not read is left out (and logged: ``course validate`` says what is wrong with it)."""
    return _catalog().course().modules


def lesson_or_404(slug: str) -> Lesson:
    for lesson in _catalog().lessons:
        if lesson.slug == slug:
            return lesson
    raise Http404("no such lesson")


def _catalog() -> Catalog:
    """The lessons of the course's lesson folders, read again when a lesson file changes (its
    modification time and size)."""
    folders = tuple(course().lesson_folders)
    seen = []
    for folder in folders:
        for path in lesson_files(folder) if folder.is_dir() else []:
            stat = path.stat()
            seen.append((str(path), stat.st_mtime_ns, stat.st_size))
    return _read(folders, tuple(seen))


@lru_cache(maxsize=4)
def _read(folders: tuple[Path, ...], version: tuple[tuple[str, int, int], ...]) -> Catalog:
    catalog = load_catalog(list(folders))
    for problem in catalog.errors:
        logger.warning("a lesson is left out of the site: %s", problem)
    return catalog
