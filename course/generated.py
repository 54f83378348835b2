"""Generated check questions: a question whose numbers are drawn for each student.

A generated check declares its parameters and how to draw them (``range``, ``uniform``, ``choices``,
each optionally ``size`` draws long), values computed from them (``values``: arithmetic expressions
such as ``sqrt(d_k)``), and optionally a generator function in a Python file beside the lesson (the
instructor's trusted code: ``generator(rng, values) -> dict`` of more values). Its question, options,
answer and feedback are templates that use those values: ``{d_k}``, ``{p:.3f}``.

Three kinds: ``multiple-choice`` (options, one correct; a distractor may be a known wrong computation,
with its own ``tempting`` feedback), ``numeric`` (``answer`` is an expression; a response is right
within the question's ``tolerance``) and ``short-answer`` (``answer`` is a template; a response is
right when its text agrees, its numbers within the tolerance). Both tolerances go through the one
rule, ``course.tolerance.within``.

The draw is deterministic: the seed is SHA-256 of the question's id, the student (or any seed
string) and the variant number, fed to a ``random.Random`` — never Python's ``hash()``, which differs
between processes — so the same student gets the same variant on every machine.
"""

from __future__ import annotations

import ast
import hashlib
import math
import random
import re
import string
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import CourseError, Problem
from .models import Check, GeneratedCheck, Model, Option, QuestionKind, RichText, Tolerance, normalise_text
from .tolerance import within
from .wording import plural

Number = int | float


class GenerationError(CourseError):
    """A generated question that cannot be drawn: its generator failed, a template names an unknown
    value, an expression is not arithmetic. The message says which part, in one line."""


class Variant(Model):
    """One draw of a generated question: its values, and the question a student sees."""

    question_id: str
    seed: str
    variant: int
    kind: QuestionKind
    values: dict[str, Any]
    stem: RichText
    # multiple-choice: the drawn Check (its id names the variant); the others: the answer and tolerance.
    check: Check | None = None
    answer: float | str | None = None
    tolerance: Tolerance
    units: str | None = None
    feedback: RichText | None = None

    def is_right(self, response: str) -> bool:
        """Whether a student's response is right: the correct option's letter or text for a
        multiple-choice question, else the answer within the tolerance."""
        if self.check is not None:
            chosen = normalise_text(response).casefold()
            shown = self.check.displayed()
            letters = [chr(ord("a") + i) for i in range(len(shown))]
            index = letters.index(chosen) if chosen in letters else None
            if index is not None:
                return shown[index].correct
            return chosen == normalise_text(self.check.options[self.check.correct_index].text.plain()).casefold()
        assert self.answer is not None
        return judge(self.kind, response, self.answer, self.tolerance, self.units) is True


def seed_of(question_id: str, who: str, variant: int = 0) -> int:
    """The draw's seed: SHA-256 of the question's id, the student or seed, and the variant."""
    digest = hashlib.sha256(f"{question_id}\x1f{who}\x1f{variant}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def draw(question: GeneratedCheck, who: str, variant: int = 0) -> Variant:
    """The variant of ``question`` for ``who`` (a student's id or any seed string); raises
    GenerationError naming the part that failed."""
    from .loaders.markdown import parse_inline  # the loaders import this module

    rng = random.Random(seed_of(question.id, who, variant))
    values: dict[str, Any] = {name: spec.draw(rng) for name, spec in question.parameters.items()}
    for name, expression in question.values.items():
        values[name] = evaluate(expression, values, f"values.{name}")
    if question.generator:
        values.update(_generated(question.generator, rng, dict(values)))

    def fill(template: str, where: str) -> RichText:
        return parse_inline(render(template, values, where))

    common: dict[str, Any] = {
        "question_id": question.id,
        "seed": who,
        "variant": variant,
        "kind": question.kind,
        "values": values,
        "stem": fill(question.question, "question"),
        "tolerance": question.tolerance,
        "units": question.units,
        "feedback": fill(question.feedback, "feedback") if question.feedback else None,
    }
    if question.kind == "multiple-choice":
        options = [
            Option(
                text=fill(option.text, f"options/{n}/text"),
                correct=option.correct,
                tempting=fill(option.tempting, f"options/{n}/tempting") if option.tempting else None,
            )
            for n, option in enumerate(question.options)
        ]
        duplicate = _repeated(options)
        if duplicate:
            raise GenerationError(duplicate)
        order = list(range(len(options)))
        rng.shuffle(order)
        check = Check(stem=common["stem"], options=options, order=order, id=f"{question.id}.v{variant}")
        return Variant(**common, check=check)
    assert question.answer is not None
    if question.kind == "numeric":
        number = float(evaluate(question.answer, values, "answer"))
        if not math.isfinite(number):
            raise GenerationError(f"answer: {question.answer!r} is {number}, not a finite number")
        answer: float | str = number
    else:
        answer = render(question.answer, values, "answer")
        if not answer.strip():
            raise GenerationError("answer: the answer is empty")
    return Variant(**common, answer=answer)


def _repeated(options: list[Option]) -> str | None:
    """Why two drawn options cannot both stand (one is the answer, or they read the same), or None."""
    seen: dict[str, int] = {}
    correct = next(n for n, option in enumerate(options) if option.correct)
    for n, option in enumerate(options):
        key = normalise_text(option.text.plain()).casefold()
        number = _number(key)
        for key_seen, m in seen.items():
            other = _number(key_seen)
            same = key == key_seen or (number is not None and other is not None and number == other)
            if same:
                if correct in (n, m):
                    wrong = m if n == correct else n
                    return f"options/{wrong}: the distractor equals the answer ({option.text.plain()!r})"
                return f"options/{n}: equals option {m + 1} ({option.text.plain()!r}); the options are not unique"
        seen[key] = n
    return None


# --- templates and expressions -------------------------------------------------------------------


def render(template: str, values: dict[str, Any], where: str) -> str:
    """``template`` with each ``{name}`` or ``{name:spec}`` replaced by its value (a list's items
    joined by commas); ``{{`` and ``}}`` are braces."""
    out = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise GenerationError(f"{where}: {exc}") from None
    for literal, name, spec, conversion in parsed:
        out.append(literal)
        if name is None:
            continue
        if conversion or not name.isidentifier():
            raise GenerationError(f"{where}: {{{name}}} is not a value's name")
        if name not in values:
            raise GenerationError(f"{where}: no parameter or value is named {name!r} (known: {', '.join(values)})")
        value = values[name]
        try:
            if isinstance(value, list | tuple):
                out.append(", ".join(format(item, spec or "") for item in value))
            else:
                out.append(format(value, spec or ""))
        except (ValueError, TypeError) as exc:
            raise GenerationError(f"{where}: {{{name}:{spec}}}: {exc}") from None
    return "".join(out)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "pow": pow,
}
_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}


def evaluate(expression: str, values: dict[str, Any], where: str) -> Number:
    """An arithmetic expression over the values: numbers, names, + - * / // % **, and the
    functions of ``FUNCTIONS`` (the form Moodle's calculated questions also read)."""
    try:
        tree = ast.parse(expression, mode="eval")
        result = _eval(tree.body, values)
    except GenerationError as exc:
        raise GenerationError(f"{where}: {exc}") from None
    except (SyntaxError, ArithmeticError, ValueError, TypeError) as exc:
        raise GenerationError(f"{where}: {expression!r} cannot be computed: {exc}") from None
    return result


def _eval(node: ast.AST, values: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise GenerationError(f"no parameter or value is named {node.id!r}")
        return values[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _eval(node.operand, values)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        function = FUNCTIONS.get(node.func.id)
        if function is None:
            raise GenerationError(f"{node.func.id}() is not one of {', '.join(FUNCTIONS)}")
        return function(*(_eval(arg, values) for arg in node.args))
    raise GenerationError(f"{ast.unparse(node)!r} is not arithmetic over the values")


# --- generator functions -------------------------------------------------------------------------

_modules: dict[tuple[str, float], Any] = {}


def generator_function(reference: str) -> Callable[[random.Random, dict[str, Any]], dict[str, Any]]:
    """The function ``path.py:name`` names (the instructor's own code, imported once per version of
    its file); raises GenerationError when the file or the function is missing or fails to import."""
    file, _, name = reference.rpartition(":")
    path = Path(file)
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        raise GenerationError(f"generator: {path.name}: no such file beside the lesson") from None
    module = _modules.get(key)
    if module is None:
        # Compiled and run here rather than imported: no __pycache__ is written into the lesson folder.
        module = types.ModuleType(f"_gradewright_generator_{len(_modules)}")
        module.__file__ = str(path)
        try:
            exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)  # the instructor's trusted code
        except Exception as exc:  # the instructor's file: any failure is theirs to fix
            raise GenerationError(f"generator: cannot run {path.name}: {type(exc).__name__}: {exc}") from None
        _modules[key] = module
    function = getattr(module, name, None)
    if not callable(function):
        raise GenerationError(f"generator: no function {name!r} in {path.name}")
    return function


def _generated(reference: str, rng: random.Random, values: dict[str, Any]) -> dict[str, Any]:
    function = generator_function(reference)
    name = reference.rpartition(":")[2]
    try:
        more = function(rng, values)
    except Exception as exc:  # the instructor's code: its failure is reported, never a traceback
        raise GenerationError(f"generator: {name}() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(more, dict) or not all(isinstance(key, str) and key.isidentifier() for key in more):
        raise GenerationError(f"generator: {name}() must return a dict of values by name, not {type(more).__name__}")
    return more


# --- answers -------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _number(text: str) -> float | None:
    text = text.strip().replace("\u2212", "-")
    return float(text) if _NUMBER.fullmatch(text) else None


def judge(
    kind: QuestionKind, response: str, answer: float | str, tol: Tolerance, units: str | None = None
) -> bool | None:
    """Whether a typed or written ``response`` to a numeric or short-answer question is right, by the
    question's tolerance through the one rule; None when a numeric response is no number (a student
    may write the question's ``units`` after it: ``5.66 ms``)."""
    if kind == "numeric":
        text = response.strip()
        if units and text.casefold().endswith(units.casefold()):
            text = text[: -len(units)]
        number = _number(text)
        return None if number is None else within(number, answer, tol.relative, tol.absolute)
    return _text_agrees(response, str(answer), tol)


def precision_of(question: GeneratedCheck) -> str | None:
    """What a numeric question's stated tolerance asks of a written answer, in words (``to 3
    decimals``, ``exactly``, ``within 1%``); None when it states none (float32's, which no one writes)
    or the question is not numeric."""
    if question.kind != "numeric" or "tolerance" not in question.model_fields_set:
        return None
    relative, absolute = question.tolerance.relative, question.tolerance.absolute
    if not relative and not absolute:
        return "exactly"
    if not relative:
        decimals = -math.log10(2 * absolute)
        if abs(decimals - round(decimals)) < 1e-9 and round(decimals) >= 0:
            return "to the nearest whole number" if round(decimals) == 0 else f"to {plural(round(decimals), 'decimal')}"
        return f"within ±{absolute:g}"
    within_relative = f"within {100 * relative:g}%"
    return within_relative if not absolute else f"within ±{absolute:g} + {100 * relative:g}% of the answer"


def _text_agrees(response: str, answer: str, tol: Tolerance) -> bool:
    """A short answer agrees when its text without spaces matches the answer's, case aside, each
    number within the tolerance: ``(2,5, 64)`` for ``(2, 5, 64)``."""

    def split(text: str) -> tuple[str, list[float]]:
        flat = "".join(normalise_text(text).replace("\u2212", "-").split()).casefold()
        return _NUMBER.sub("#", flat), [float(found) for found in _NUMBER.findall(flat)]

    (shape, numbers), (want_shape, want) = split(response), split(answer)
    if shape != want_shape or len(numbers) != len(want):
        return False
    return not want or within(numbers, want, tol.relative, tol.absolute)


# --- validation ----------------------------------------------------------------------------------

VALIDATION_DRAWS = 200


def generated_problems(file: str, questions: list[GeneratedCheck], draws: int = VALIDATION_DRAWS) -> list[Problem]:
    """What ``course validate`` says of a lesson's generated questions: each is drawn for ``draws``
    seeds, twice each; one line for the first draw that fails (a generator that raises, an answer
    that is not a number, a distractor equal to the answer, two equal options) or that differs
    between its two draws (not deterministic for its seed), and a warning for one that never varies."""
    problems = []
    for n, question in enumerate(questions):
        where = f"/generated/{n}"
        seen: set[str] = set()
        for i in range(draws):
            who = f"validate-{i}"
            try:
                first, again = _fingerprint(draw(question, who)), _fingerprint(draw(question, who))
            except GenerationError as exc:
                problems.append(Problem(file=file, where=where, what=f"question {question.id!r}: {exc} (seed {who!r})"))
                break
            if first != again:
                problems.append(
                    Problem(
                        file=file,
                        where=where,
                        what=f"question {question.id!r} is not deterministic for its seed: two draws for seed "
                        f"{who!r} differ (draw only from the rng the generator is given)",
                    )
                )
                break
            seen.add(first)
        else:
            if draws > 1 and len(seen) == 1 and not question.fixed:
                problems.append(
                    Problem(
                        file=file,
                        where=where,
                        what=f"question {question.id!r} is the same for all {plural(draws, 'seed')}: it draws nothing",
                        severity="warning",
                    )
                )
    return problems


def _fingerprint(variant: Variant) -> str:
    parts: list[Any] = [variant.values, variant.stem.plain(), variant.answer, variant.feedback]
    if variant.check is not None:
        parts += [
            variant.check.order,
            [(o.text.plain(), o.tempting and o.tempting.plain()) for o in variant.check.options],
        ]
    return repr(parts)
