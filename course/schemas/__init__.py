"""The JSON Schemas the project publishes (draft 2020-12), and their errors in plain words."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..wording import plural


def _import_jsonschema():
    """jsonschema, imported without ``rfc3987_syntax``. Installed beside it (Jupyter's dependencies
    bring it), that package builds a grammar at import for jsonschema's "iri" format checker, about
    1.4 s of every command that validates a lesson; our schemas check no such format. jsonschema
    imports it inside ``try: ... except ImportError``, so it is blocked (a ``None`` in ``sys.modules``)
    for exactly that import, and unblocked after, for anyone else who wants it."""
    import sys

    blocked = "rfc3987_syntax" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None
    try:
        import jsonschema
        import jsonschema.exceptions
    finally:
        if blocked and sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return jsonschema.Draft202012Validator, jsonschema.exceptions.ValidationError


if TYPE_CHECKING:  # the type checker sees the classes through a plain import
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
else:
    Draft202012Validator, ValidationError = _import_jsonschema()

MAX_REPORTED = 20
_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    type(None): "null",
}
_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "null": "null",
}


def schema_text(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


@cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads(schema_text(name))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_problems(name: str, document: Any) -> list[tuple[str, str]]:
    """(JSON pointer, message) for each way ``document`` breaks schema ``name``, in document order."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    problems = [(pointer(error.absolute_path), describe(error)) for error in errors]
    if len(problems) > MAX_REPORTED:
        rest = len(problems) - MAX_REPORTED
        problems = problems[:MAX_REPORTED] + [(problems[MAX_REPORTED][0], f"... and {plural(rest, 'more problem')}")]
    return problems


def pointer(path: Any) -> str:
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in path]
    return "/" + "/".join(parts)


def describe(error: ValidationError) -> str:
    """One plain sentence for a schema error, never quoting more of the document than a value."""
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        return f"missing required property {missing[0]!r}" if missing else error.message
    if keyword == "type":
        expected = value if isinstance(value, list) else [value]
        wanted = " or ".join(str(_TYPE_NAMES.get(t, t)) for t in expected)
        return f"expected {wanted}, found {_json_type(instance)}"
    if keyword == "pattern":
        if value == "\\S":
            return "must not be empty or blank"
        return f"{_short(instance)} must be lower-case words joined by hyphens, like 'attention-basics'"
    if keyword in {"const", "enum"}:
        allowed = [value] if keyword == "const" else value
        return f"{_short(instance)} is not allowed here; expected {' or '.join(repr(v) for v in allowed)}"
    if keyword in {"minItems", "maxItems"}:
        bound = "at least" if keyword == "minItems" else "at most"
        return f"has {plural(len(instance), 'item')}; expected {bound} {value}"
    if keyword in {"minimum", "maximum"}:
        bound = "at least" if keyword == "minimum" else "at most"
        return f"{_short(instance)} must be {bound} {value}"
    if keyword == "uniqueItems":
        return "has repeated items; each must appear once"
    if keyword in {"contains", "minContains", "maxContains"} and error.schema_path and "options" in error.absolute_path:
        correct = [
            str(i + 1) for i, item in enumerate(instance) if isinstance(item, dict) and item.get("correct") is True
        ]
        if not correct:
            return "no option is marked correct; exactly one must be"
        return f"options {', '.join(correct)} are all marked correct; exactly one must be"
    if keyword == "anyOf" and error.absolute_path == error.relative_path and not error.absolute_path:
        needed = [next(iter(branch.get("required", [])), "?") for branch in value]
        return f"needs at least one of {', '.join(repr(n) for n in needed)}"
    if keyword in {"anyOf", "oneOf"} and error.context:
        best = min(error.context, key=lambda e: len(list(e.relative_schema_path)))
        return describe(best)
    return error.message if len(error.message) <= 200 else error.message[:199] + "\u2026"


def _json_type(instance: Any) -> str:
    return _JSON_TYPES.get(type(instance), type(instance).__name__)


def _short(instance: Any) -> str:
    text = json.dumps(instance, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "\u2026"
