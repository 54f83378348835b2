"""A course platform's JSON export of one lesson.

The file is validated first against the published schema (``course/schemas/lesson-export.schema.json``),
then turned into the model. It describes the lesson twice: ``body.text`` as Markdown and
``reader.blocks`` as typed blocks, and the check twice: ``check`` as strings and ``reader.check``
as styled runs with the display order. The reader's version is the source of truth (it is typed and
carries the order); where the two disagree the file earns a warning, not an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import LessonFileError
from ..generated import GenerationError, generator_function
from ..models import (
    Attribution,
    Block,
    Check,
    CodeBlock,
    CourseRef,
    GeneratedCheck,
    InlineRun,
    Lesson,
    LessonLink,
    Licence,
    ListBlock,
    MathBlock,
    ModuleRef,
    Paragraph,
    RichText,
    block_text,
    normalise_text,
)
from ..schemas import pointer, schema_problems
from ..wording import plural
from .markdown import parse_blocks, parse_inline
from .outline import Located, build_outline, find_assignment, find_objectives, find_open_questions, heading
from .source import LoadedLesson, SourceText, build_model

SCHEMA = "lesson-export"
HEADING_LEVELS = {"h2": 2, "h3": 3, "h4": 4}


def load(source: SourceText) -> LoadedLesson:
    document = _parse(source)
    problems = [source.problem(where, what) for where, what in schema_problems(SCHEMA, document)]
    if problems:
        raise LessonFileError(problems)
    warnings: list = []
    info, reader = document["lesson"], document.get("reader") or {}

    body_blocks = parse_blocks(document["body"]["text"]) if "body" in document else None
    reader_blocks = [_block(raw) for raw in reader["blocks"]] if "blocks" in reader else None
    if body_blocks is not None and reader_blocks is not None:
        _compare_blocks(source, [item.block for item in body_blocks], reader_blocks, warnings)
    located = [Located(block, 0) for block in reader_blocks] if reader_blocks is not None else body_blocks or []
    outline = build_outline(source, [Located(heading(info["title"], 1), 0), *located])

    checks = []
    if "check" in document or "check" in reader:
        checks.append(_check(source, document.get("check"), reader.get("check"), warnings))
    for n, raw in enumerate(document.get("checks", [])):
        checks.append(_check_from_strings(source, raw, f"/checks/{n}"))
    generated = [_generated(source, raw, f"/generated/{n}") for n, raw in enumerate(document.get("generated", []))]

    course = document.get("course")
    module = reader.get("module")
    lesson = build_model(
        source,
        lambda loc: "/lesson" + (f"/{loc[0]}" if loc else ""),
        Lesson,
        slug=info["slug"],
        title=info["title"],
        format="json",
        source=source.name,
        position=info.get("position"),
        minutes=info.get("minutes"),
        key_idea=info.get("keyIdea") or reader.get("keyIdea"),
        answer=info.get("answer"),
        course=CourseRef(slug=course["slug"], title=course["title"], url=course.get("url")) if course else None,
        module=ModuleRef(number=module.get("index"), slug=module.get("slug"), title=module["title"])
        if module
        else None,
        intro=[item.block for item in outline.intro],
        sections=outline.model_sections(),
        checks=checks,
        generated=generated,
        objectives=find_objectives(outline),
        open_questions=find_open_questions(source, outline, warnings),
        assignment=find_assignment(source, outline, warnings),
        previous=_link(document.get("prev")),
        next=_link(document.get("next")),
        attribution=_attribution(document, info),
    )
    return LoadedLesson(lesson=lesson, warnings=warnings)


def _parse(source: SourceText) -> Any:
    try:
        return json.loads(source.text)
    except json.JSONDecodeError as exc:
        raise source.fail(f"line {exc.lineno}, column {exc.colno}", f"malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise source.fail("/", "malformed JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise source.fail("/", f"malformed JSON: {exc}") from None


def _runs(raw: list[dict[str, Any]]) -> RichText:
    return RichText(
        [
            InlineRun(
                text=run["text"],
                bold=bool(run.get("b")),
                italic=bool(run.get("i")),
                code=bool(run.get("code")),
                math=bool(run.get("math")),
            )
            for run in raw
        ]
    )


def _block(raw: dict[str, Any]) -> Block:
    kind = raw["t"]
    if kind in HEADING_LEVELS:
        block = heading(_runs(raw["runs"]).plain().strip() or "(untitled)", HEADING_LEVELS[kind])
        return block.model_copy(update={"anchor": raw.get("id") or block.anchor})
    if kind == "p":
        return Paragraph(runs=_runs(raw["runs"]))
    if kind == "code":
        return CodeBlock(language=raw.get("lang"), text=raw["text"])
    if kind == "math":
        return MathBlock(latex=raw["tex"])
    return ListBlock(ordered=kind == "ol", items=[_runs(item) for item in raw["items"]])


def _check(source: SourceText, plain: dict[str, Any] | None, styled: dict[str, Any] | None, warnings: list) -> Check:
    """The check from ``reader.check`` (styled, ordered) where present, else from ``check``."""
    if styled is None:
        if plain is None:  # the caller asks only where one is given; the schema makes it an object
            raise source.fail("/check", "the check is missing")
        return _check_from_strings(source, plain, "/check")
    base = "/reader/check"
    check = build_model(
        source,
        lambda loc: _check_pointer(base, loc),
        Check,
        stem=_runs(styled["question"]),
        id=styled.get("id") or (plain or {}).get("id"),
        options=[
            {
                "text": _runs(option["text"]),
                "correct": option["correct"],
                "tempting": _runs(option["tempting"]) if option.get("tempting") else None,
            }
            for option in styled["options"]
        ],
        order=styled.get("order") or [],
    )
    if plain is not None:
        _compare_checks(source, _check_from_strings(source, plain, "/check"), check, warnings)
    return check


def _check_from_strings(source: SourceText, raw: dict[str, Any], base: str) -> Check:
    return build_model(
        source,
        lambda loc: _check_pointer(base, loc),
        Check,
        stem=parse_inline(raw["question"]),
        id=raw.get("id"),
        pool=raw.get("pool"),
        options=[
            {
                "text": parse_inline(option["text"]),
                "correct": option["correct"],
                "tempting": parse_inline(option["tempting"]) if option.get("tempting") else None,
            }
            for option in raw["options"]
        ],
    )


def _generated(source: SourceText, raw: dict[str, Any], base: str) -> GeneratedCheck:
    """A generated check; its generator, ``file.py:function`` beside the lesson, is found and
    imported now, so that a missing one is the file's problem at load time."""
    reference = raw.get("generator")
    if isinstance(reference, str) and ":" in reference:
        file, _, name = reference.rpartition(":")
        if Path(file).is_absolute() or ".." in Path(file).parts:
            raise source.fail(f"{base}/generator", f"{file!r}: a generator is a file beside the lesson")
        raw = {**raw, "generator": f"{source.path.parent / file}:{name}"}
    question = build_model(source, lambda loc: pointer([*base.strip("/").split("/"), *loc[:2]]), GeneratedCheck, **raw)
    if question.generator:
        try:
            generator_function(question.generator)
        except GenerationError as exc:
            raise source.fail(f"{base}/generator", str(exc).removeprefix("generator: ")) from None
    return question


def _check_pointer(base: str, loc: tuple[Any, ...]) -> str:
    names = {"stem": "question"}
    return pointer([*base.strip("/").split("/"), *(names.get(str(part), part) for part in loc[:2])])


def _compare_blocks(source: SourceText, body: list[Block], reader: list[Block], warnings: list) -> None:
    for index, (ours, theirs) in enumerate(zip(body, reader, strict=False)):
        a, b = _comparable(ours), _comparable(theirs)
        if a != b:
            warnings.append(
                source.problem(
                    f"/reader/blocks/{index}",
                    f"body.text and reader.blocks disagree at block {index + 1}: body has "
                    f"{_clip(a[1])}, reader has {_clip(b[1])}; the reader's blocks are used",
                    "warning",
                )
            )
            return
    if len(body) != len(reader):
        warnings.append(
            source.problem(
                "/reader/blocks",
                f"body.text has {plural(len(body), 'block')} but reader.blocks has {len(reader)}; the reader's blocks are used",
                "warning",
            )
        )


def _compare_checks(source: SourceText, plain: Check, styled: Check, warnings: list) -> None:
    def texts(check: Check) -> list[tuple[str, str]]:
        rows = [("question", check.stem.plain())]
        for n, option in enumerate(check.options):
            rows.append((f"options/{n}/text", option.text.plain()))
            rows.append((f"options/{n}/correct", str(option.correct)))
            rows.append((f"options/{n}/tempting", option.tempting.plain() if option.tempting else ""))
        return rows

    for (where, a), (_, b) in zip(texts(plain), texts(styled), strict=False):
        if normalise_text(a) != normalise_text(b):
            warnings.append(
                source.problem(
                    f"/reader/check/{where}",
                    f"check and reader.check disagree: check has {_clip(a)}, reader has {_clip(b)}; "
                    "reader.check is used",
                    "warning",
                )
            )
            return
    if len(plain.options) != len(styled.options):
        warnings.append(
            source.problem(
                "/reader/check/options",
                f"check has {plural(len(plain.options), 'option')} but reader.check has {len(styled.options)}; "
                "reader.check is used",
                "warning",
            )
        )


def _comparable(block: Block) -> tuple[str, str]:
    return block.kind, normalise_text(block_text(block))


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "\u2026")


def _link(raw: dict[str, Any] | None) -> LessonLink | None:
    return LessonLink(slug=raw["slug"], title=raw["title"]) if raw else None


def _attribution(document: dict[str, Any], info: dict[str, Any]) -> Attribution | None:
    licence = document.get("licence")
    attribution = Attribution(
        url=info.get("url"),
        authorship=document.get("authorship"),
        citation=document.get("cite"),
        licence=Licence(name=licence["name"], url=licence.get("url")) if licence else None,
    )
    return attribution if attribution != Attribution() else None
