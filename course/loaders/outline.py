"""From a flat run of blocks to a lesson's outline, shared by the Markdown and plain-text loaders.

Both formats reduce a file to blocks with line numbers; this module finds the title, the intro,
the sections, and the parts a course page carries by convention: learning objectives (a list
after "you will be able to"), self-check questions (the list in a "Self-check" section) and the
assignment (the list of tasks in an "Assignment" section).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..models import (
    Assignment,
    Block,
    Heading,
    LearningObjective,
    Lesson,
    LessonFormat,
    ListBlock,
    ModuleRef,
    OpenQuestion,
    Paragraph,
    Section,
    slugify,
)
from .source import LoadedLesson, SourceText, build_model

OBJECTIVES_INTRO = re.compile(r"\b(able to|objectives?|outcomes?)\b", re.IGNORECASE)
OBJECTIVES_TITLE = re.compile(r"^(learning )?(objectives|outcomes)\b", re.IGNORECASE)
SELF_CHECK_TITLE = re.compile(r"^(self[- ]?check|check yourself|review questions)\b", re.IGNORECASE)
ASSIGNMENT_TITLE = re.compile(r"^assignment\b", re.IGNORECASE)
MODULE_TITLE = re.compile(r"^module\s+(\d+)\s*[.:\u2014\u2013-]\s*(.+)$", re.IGNORECASE)
LESSON_TITLE = re.compile(r"^lesson\s+(\d+)\s*[.:\u2014\u2013-]\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Located:
    block: Block
    line: int


@dataclass
class LocatedSection:
    heading: Heading
    line: int
    blocks: list[Located] = field(default_factory=list)


@dataclass
class Outline:
    title: Heading
    title_line: int
    intro: list[Located]
    sections: list[LocatedSection]

    def section(self, pattern: re.Pattern[str]) -> LocatedSection | None:
        return next((s for s in self.sections if pattern.search(s.heading.text)), None)

    def model_sections(self) -> list[Section]:
        anchors: set[str] = set()
        result = []
        for located in self.sections:
            anchor = _unique(located.heading.anchor or slugify(located.heading.text) or "section", anchors)
            result.append(
                Section(
                    title=located.heading.text,
                    anchor=anchor,
                    level=located.heading.level,
                    blocks=[item.block for item in located.blocks],
                )
            )
        return result


def heading(text: str, level: int) -> Heading:
    return Heading(level=level, text=text, anchor=slugify(text) or "section")


def build_outline(source: SourceText, located: list[Located]) -> Outline:
    """Title (the first block, a heading), intro (blocks before the first section) and sections
    (headings of the shallowest level below the title; deeper headings stay inside as blocks)."""
    title = located[0].block if located else None
    if not isinstance(title, Heading):
        line = located[0].line if located else 1
        raise source.fail(f"line {line}", "no title: a lesson file must start with its title heading")
    rest = located[1:]
    levels = [item.block.level for item in rest if isinstance(item.block, Heading)]
    section_level = min(levels, default=2)
    intro: list[Located] = []
    sections: list[LocatedSection] = []
    for item in rest:
        if isinstance(item.block, Heading) and item.block.level <= section_level:
            sections.append(LocatedSection(heading=item.block, line=item.line))
        elif sections:
            sections[-1].blocks.append(item)
        else:
            intro.append(item)
    return Outline(title=title, title_line=located[0].line, intro=intro, sections=sections)


def lesson_from_blocks(source: SourceText, located: list[Located], fmt: LessonFormat) -> LoadedLesson:
    """A whole lesson from a file's blocks. A title "Module 10. X" makes the file a module page."""
    warnings: list = []
    outline = build_outline(source, located)
    module_number, lesson_number, title = split_numbered_title(outline.title.text)
    slug = slugify(f"module {module_number} {title}" if module_number is not None else title)
    if not slug:
        raise source.fail(f"line {outline.title_line}", f"the title {outline.title.text!r} gives no usable slug")
    lesson = build_model(
        source,
        lambda loc: f"line {outline.title_line}",
        Lesson,
        slug=slug,
        title=title,
        format=fmt,
        source=source.name,
        position=lesson_number,
        module=ModuleRef(number=module_number, slug=slugify(title), title=title) if module_number else None,
        intro=[item.block for item in outline.intro],
        sections=outline.model_sections(),
        objectives=find_objectives(outline),
        open_questions=find_open_questions(source, outline, warnings),
        assignment=find_assignment(source, outline, warnings),
    )
    return LoadedLesson(lesson=lesson, warnings=warnings)


def find_objectives(outline: Outline) -> list[LearningObjective]:
    """The list in an "Objectives" section, or the first intro list introduced by "you will be able to"."""
    section = outline.section(OBJECTIVES_TITLE)
    if section is not None:
        items = _list_items(section.blocks)
        return [LearningObjective(text=item) for item in items]
    previous: Block | None = None
    for item in outline.intro:
        if (
            isinstance(item.block, ListBlock)
            and isinstance(previous, Paragraph)
            and OBJECTIVES_INTRO.search(previous.runs.plain())
        ):
            return [LearningObjective(text=text) for text in item.block.items]
        previous = item.block
    return []


def find_open_questions(source: SourceText, outline: Outline, warnings: list) -> list[OpenQuestion]:
    section = outline.section(SELF_CHECK_TITLE)
    if section is None:
        return []
    items = _list_items(section.blocks)
    if not items:
        warnings.append(
            source.problem(
                f"line {section.line}",
                f"the '{section.heading.text}' section has no list of questions",
                "warning",
            )
        )
    return [OpenQuestion(prompt=item) for item in items]


def find_assignment(source: SourceText, outline: Outline, warnings: list) -> Assignment | None:
    """The brief before the first list, the list's items as tasks, what follows as notes."""
    section = outline.section(ASSIGNMENT_TITLE)
    if section is None:
        return None
    blocks = [item.block for item in section.blocks]
    lists = [(i, block) for i, block in enumerate(blocks) if isinstance(block, ListBlock)]
    if not lists:
        warnings.append(source.problem(f"line {section.line}", "the assignment lists no tasks", "warning"))
        return Assignment(title=section.heading.text, brief=blocks)
    first_list, tasks_block = lists[0]
    return Assignment(
        title=section.heading.text,
        brief=blocks[:first_list],
        tasks=list(tasks_block.items),
        notes=blocks[first_list + 1 :],
    )


def split_numbered_title(text: str) -> tuple[int | None, int | None, str]:
    """'Module 10. Sequences and attention' -> (10, None, 'Sequences and attention');
    'Lesson 4 — Sequences and transformers' -> (None, 4, 'Sequences and transformers')."""
    if match := MODULE_TITLE.match(text):
        return int(match.group(1)), None, match.group(2).strip()
    if match := LESSON_TITLE.match(text):
        return None, int(match.group(1)), match.group(2).strip()
    return None, None, text


def _list_items(blocks: list[Located]) -> list:
    return [text for item in blocks if isinstance(item.block, ListBlock) for text in item.block.items]


def _unique(anchor: str, taken: set[str]) -> str:
    candidate, n = anchor, 2
    while candidate in taken:
        candidate, n = f"{anchor}-{n}", n + 1
    taken.add(candidate)
    return candidate
