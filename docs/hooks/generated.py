"""MkDocs hook: the reference pages' tables, generated from the code each time the site is built.

A page asks for a generated part with a comment line of its own, ``<!-- generated: KIND [ARG] -->``;
the hook replaces the line with Markdown made from the code, so the reference cannot drift from it:

- ``cli PROG``: every subcommand of ``course`` or ``autograder``, with its ``--help`` as argparse prints it;
- ``model course`` / ``model assignment`` / ``model report``: the fields of the pydantic models that read
  ``course.toml``, ``assignment.toml`` and write the report JSON (type, default, constraints, and the
  comment above the field in the source);
- ``settings``: every setting and environment variable, from the one module that reads them;
- ``api``: every route of the HTTP API, from its OpenAPI document.
"""

from __future__ import annotations

import argparse
import html
import inspect
import json
import os
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- generated: (?P<kind>[a-z-]+)(?: (?P<arg>[\w.-]+))? -->$", re.MULTILINE)
# argparse wraps its help to the terminal's width: one width for every build.
HELP_WIDTH = "100"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each generated part's marker with its Markdown, and link each command a page names in
    inline code (`autograder grade ...`) to its entry in the command-line reference."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    markdown = MARKER.sub(lambda match: generate(match["kind"], match["arg"]), markdown)
    source = getattr(getattr(page, "file", None), "src_uri", None)
    if source is None or source == CLI_PAGE:
        return markdown
    return link_commands(markdown, source)


CLI_PAGE = "reference/cli.md"
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
# Inline code naming a command, not already a link's text nor in a heading.
COMMAND_CODE = re.compile(r"(?<![\[`])`((?:autograder|course) [^`\n]+)`(?![\]`])")


def link_commands(markdown: str, source: str) -> str:
    """Each inline `autograder ...` or `course ...` that starts with a known command, as a link to the
    command's reference entry (its longest known command path)."""
    known = command_paths()
    target = "../" * source.count("/") + CLI_PAGE

    def linked(match: re.Match[str]) -> str:
        words = match[1].split()
        for length in range(len(words), 0, -1):
            name = " ".join(words[:length])
            if name in known:
                return f"[`{match[1]}`]({target}#{anchor(name)})"
        return match[0]

    def outside_fences(text: str) -> str:
        lines = text.split("\n")
        return "\n".join(line if line.startswith("#") else COMMAND_CODE.sub(linked, line) for line in lines)

    parts, last = [], 0
    for fence in FENCE.finditer(markdown):
        parts += [outside_fences(markdown[last : fence.start()]), fence[0]]
        last = fence.end()
    parts.append(outside_fences(markdown[last:]))
    return "".join(parts)


_COMMANDS: set[str] = set()


def command_paths() -> set[str]:
    if not _COMMANDS:
        from commands import autograder, course

        for build in (autograder.build_parser, course.build_parser):
            _COMMANDS.update(" ".join(path) for path, _parser in walk(build()))
    return _COMMANDS


def generate(kind: str, arg: str | None) -> str:
    makers: dict[str, Callable[[str | None], str]] = {
        "cli": cli_reference,
        "model": model_reference,
        "settings": settings_reference,
        "api": api_reference,
    }
    if kind not in makers:
        raise ValueError(f"unknown generated part {kind!r} (known: {', '.join(sorted(makers))})")
    return makers[kind](arg)


# The command lines


def cli_reference(prog: str | None) -> str:
    from commands import autograder, course

    builders = {"autograder": autograder.build_parser, "course": course.build_parser}
    if prog not in builders:
        raise ValueError(f"cli: unknown command {prog!r}")
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parts = []
        for path, parser in walk(builders[prog]()):
            name = " ".join(path)
            level = "#" * min(2 + len(path) - 1, 5)
            parts.append(f"{level} `{name}` {{#{anchor(name)}}}\n\n```text\n{parser.format_help().rstrip()}\n```\n")
        return "\n".join(parts)
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def walk(parser: argparse.ArgumentParser) -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    """The parser, then each subcommand's, depth first in the order they were added."""
    yield parser.prog.split(), parser
    for action in parser._actions:  # argparse has no public way to list subparsers
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for sub in action.choices.values():
                if id(sub) not in seen:  # aliases name the same parser
                    seen.add(id(sub))
                    yield from walk(sub)


def anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# The files' models


def model_reference(which: str | None) -> str:
    from autograder.assignment import Assignment, MutantSettings, Question, RubricItem
    from autograder.reports.model import HandMark, LatePenalty, QuestionResult, Report, TestOutcome
    from autograder.sandbox.limits import Limits
    from course.exams.definition import Alternatives, ExamDefinition, Zone
    from course.folder import CourseDefaults, CourseFolder, CourseModule, SandboxSettings

    tables: dict[str, list[tuple[str, type[BaseModel], set[str]]]] = {
        "course": [
            ("Top level", CourseFolder, {"root"}),
            ("`[[modules]]`", CourseModule, set()),
            ("`[sandbox]`", SandboxSettings, set()),
            ("`[defaults]`", CourseDefaults, set()),
        ],
        "assignment": [
            ("Top level", Assignment, {"name", "folder", "sandbox_packages"}),
            ("`[[questions]]`", Question, set()),
            ("`[[questions.rubric]]`", RubricItem, set()),
            ("`[questions.mutants]`", MutantSettings, set()),
            ("`[limits]`", Limits, set()),
        ],
        "exam": [
            ("Top level", ExamDefinition, set()),
            ("`[[zones]]`", Zone, set()),
            ("An entry of alternatives", Alternatives, set()),
        ],
        "report": [
            ("The report", Report, set()),
            ("`questions[]`", QuestionResult, set()),
            ("`questions[].tests[]`", TestOutcome, set()),
            ("`questions[].mark`", HandMark, set()),
            ("`late`", LatePenalty, set()),
        ],
    }
    if which not in tables:
        raise ValueError(f"model: unknown model {which!r} (known: {', '.join(tables)})")
    return "\n".join(model_table(title, model, left_out) for title, model, left_out in tables[which])


def model_table(title: str, model: type[BaseModel], left_out: set[str]) -> str:
    comments = field_comments(model)
    rows = ["| field | type | default | what it is |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if name in left_out:
            continue
        description = field.description or comments.get(name, "")
        rows.append(
            f"| `{name}` | {cell(type_name(field.annotation))} | {cell(default_of(field))} | "
            f"{cell(with_constraints(description, field))} |"
        )
    return f"### {title}\n\n" + "\n".join(rows) + "\n"


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field's comment in the model's source: the comment lines just above it, or at its end."""
    comments: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            lines = inspect.getsource(cls).splitlines()
        except (OSError, TypeError):
            continue
        above: list[str] = []
        for line in lines[1:]:
            stripped = line.strip()
            if stripped.startswith("#"):
                above.append(stripped.lstrip("#").strip())
                continue
            field = re.match(r"\s{4}(\w+)\s*:", line)
            if field and not line.startswith(" " * 5):
                inline = line.split("  # ", 1)[1].strip() if "  # " in line else ""
                text = " ".join([*above, inline]).strip()
                if text:
                    comments[field[1]] = text
            above = []
    return comments


def type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " or ".join(json.dumps(value) for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(arg) for arg in typing.get_args(annotation))
    if origin in (list, dict, tuple):
        args = ", ".join(type_name(arg) for arg in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return "table"
        return {"str": "string", "float": "number", "int": "integer", "bool": "boolean"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def default_of(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    default = field.get_default(call_default_factory=True)
    if isinstance(default, BaseModel):
        return "(its defaults)"
    if default is None:
        return "none"
    if isinstance(default, Path):
        return str(default)
    return json.dumps(default)


def with_constraints(description: str, field: FieldInfo) -> str:
    said = []
    for constraint in field.metadata:
        for attribute, words in (
            ("ge", "at least"),
            ("gt", "more than"),
            ("le", "at most"),
            ("lt", "less than"),
            ("min_length", "length at least"),
            ("pattern", "matches"),
        ):
            value = getattr(constraint, attribute, None)
            if value is not None:
                said.append(f"{words} `{value}`")
    return " ".join(part for part in (description, "; ".join(said)) if part)


def cell(text: str) -> str:
    """Text for a table's cell: one line, its bars escaped, and outside code spans its `<`, `>` and `&`
    as entities, so that a placeholder such as <course> is shown, not taken for an HTML tag."""
    spans = text.replace("|", "\\|").replace("\n", " ").split("`")
    for number in range(0, len(spans), 2):  # the even parts are outside `...`
        spans[number] = html.escape(spans[number], quote=False)
    return "`".join(spans)


# Settings and environment variables


def settings_reference(_arg: str | None) -> str:
    from autograder.environment import SETTINGS  # the one place that reads them

    rows = ["| variable | default | read by | what it does |", "| --- | --- | --- | --- |"]
    for setting in SETTINGS:
        name = f"`{setting.name}`" + (f" (was `{setting.old_name}`)" if setting.old_name else "")
        default = f"`{setting.default}`" if setting.default else "unset"
        rows.append(f"| {name} | {default} | {cell(setting.used_by)} | {cell(setting.description)} |")
    return "\n".join(rows) + "\n"


# The HTTP API


def api_reference(_arg: str | None) -> str:
    document = json.loads((ROOT / "service" / "handin" / "openapi.json").read_text(encoding="utf-8"))
    base = document.get("servers", [{}])[0].get("url", "")
    parts = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            title = f"`{method.upper()} {base}{path}`"
            lines = [f"### {title}\n", operation.get("summary", ""), ""]
            parameters = operation.get("parameters", [])
            if parameters:
                lines += ["| parameter | in | required | what it is |", "| --- | --- | --- | --- |"]
                for parameter in parameters:
                    lines.append(
                        f"| `{parameter['name']}` | {parameter.get('in', '')} | "
                        f"{'yes' if parameter.get('required') else 'no'} | {cell(parameter.get('description', ''))} |"
                    )
                lines.append("")
            body = operation.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                fields = content.get("schema", {}).get("properties", {})
                if fields:
                    lines.append(f"Body ({media}): " + ", ".join(f"`{name}`" for name in fields) + "\n")
            lines += ["| status | when |", "| --- | --- |"]
            for status, response in operation.get("responses", {}).items():
                lines.append(f"| {status} | {cell(response.get('description', ''))} |")
            parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
