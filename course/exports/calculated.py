"""Moodle's calculated question: a numeric generated question whose answer Moodle computes itself,
from a formula over wildcards (``{d_k}``) with values drawn from datasets, one set per variant.

A generated question fits when Moodle can say all of it: a numeric answer; scalar parameters drawn
by ``range`` (step 1) or ``uniform`` (Moodle's datasets: a minimum, a maximum, decimals); values and
answer in arithmetic Moodle's formulas know (``+ - * /``, ``**`` as ``pow``, ``sqrt exp log abs
round min max pow``); a tolerance that is relative or absolute, not both; and templates whose values
are shown plain, with ``:g`` or with ``:.Nf`` (``{=round(...,N)}``), whose text holds no ``{name}``
of a wildcard of its own (Moodle would replace it). Anything else goes out as a pool of drawn
variants. The export writes N drawn sets of values, as ``course.generated.draw`` draws them, so each
student meets one of the same N variants a pool holds; the import reads the question back as a
generated question (``moodle_question``), its parameters, values and templates rebuilt.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from ..generated import FUNCTIONS, GenerationError, render
from ..inline import to_html
from ..loaders.markdown import parse_inline
from ..models import GeneratedCheck, Parameter, Tolerance

MOODLE_FUNCTIONS = {"sqrt", "exp", "log", "abs", "round", "min", "max", "pow"}
TOLERANCE_TYPES = {"relative": "1", "nominal": "2"}  # Moodle's tolerancetype
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_TOKEN = "QQMOODLE{}QQ"  # stands for a wildcard or formula while text is converted to HTML


class Unfit(Exception):
    """Why a question is not a Moodle calculated question (it goes out as a pool instead)."""


def unfit(question: GeneratedCheck) -> str | None:
    """Why Moodle cannot compute ``question``, or None when it can."""
    try:
        moodle_text(question, question.question)
        if question.feedback:
            moodle_text(question, question.feedback)
        answer_formula(question)
        tolerance_of(question.tolerance)
    except Unfit as exc:
        return str(exc)
    return None


def fits(question: GeneratedCheck) -> bool:
    return unfit(question) is None


def tolerance_of(tolerance: Tolerance) -> tuple[str, float]:
    """Moodle's tolerance type and tolerance for the question's own."""
    if tolerance.relative and tolerance.absolute:
        raise Unfit("its tolerance is both relative and absolute; Moodle's is one or the other")
    if tolerance.relative:
        return "relative", tolerance.relative
    return "nominal", tolerance.absolute


def answer_decimals(kind: str, tolerance: float) -> int:
    """How many decimals (nominal) or significant figures (relative) Moodle shows the right answer with."""
    digits = math.ceil(-math.log10(tolerance)) if tolerance > 0 else 0  # exact: a whole number
    return max(0, min(12, digits + (1 if kind == "relative" else 0)))


def _check_parameters(question: GeneratedCheck) -> None:
    if question.kind != "numeric":
        raise Unfit(f"a {question.kind} question")
    if question.generator:
        raise Unfit("its generator is Python, which Moodle cannot run")
    if not question.parameters:
        raise Unfit("it draws nothing")
    for name, spec in question.parameters.items():
        if spec.size is not None or spec.choices is not None or (spec.range is not None and spec.step != 1):
            raise Unfit(f"parameter {name}: Moodle draws one number from a range, not a list, choices or steps")


def _expanded(question: GeneratedCheck, tree: ast.AST, depth: int = 0) -> ast.AST:
    """``tree`` with every value's name replaced by its own expression, down to the parameters."""
    if depth > len(question.values) + 1:
        raise Unfit("its values refer to each other in a circle")

    class Inline(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            node.args = [self.visit(arg) for arg in node.args]  # its function's name is no value
            return node

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in question.parameters:
                return node
            if node.id in question.values:
                return _expanded(question, _parse(question.values[node.id]), depth + 1)
            raise Unfit(f"{node.id!r} is neither a parameter nor a value")

    return Inline().visit(tree)


def _parse(expression: str) -> ast.AST:
    try:
        return ast.parse(expression, mode="eval").body
    except SyntaxError:
        raise Unfit(f"{expression!r} is not an expression") from None


def formula(node: ast.AST, top: bool = True) -> str:
    """An expression (its values already expanded) in Moodle's formula language."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return f"{{{node.id}}}"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        text = ("-" if isinstance(node.op, ast.USub) else "+") + formula(node.operand, top=False)
        return text if top else f"({text})"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return f"pow({formula(node.left)},{formula(node.right)})"
    if isinstance(node, ast.BinOp) and type(node.op) in _SYMBOLS:
        text = f"{formula(node.left, top=False)}{_SYMBOLS[type(node.op)]}{formula(node.right, top=False)}"
        return text if top else f"({text})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id not in MOODLE_FUNCTIONS or node.func.id not in FUNCTIONS:
            raise Unfit(f"{node.func.id}() is not a function of Moodle's formulas")
        return f"{node.func.id}({','.join(formula(arg) for arg in node.args)})"
    raise Unfit(f"{ast.unparse(node)!r} is not in Moodle's formula language")


def answer_formula(question: GeneratedCheck) -> str:
    _check_parameters(question)
    assert question.answer is not None
    return formula(_expanded(question, _parse(question.answer)))


class _Placeholder:
    """A value in a template: formats to a token, and records what Moodle writes for it."""

    def __init__(self, question: GeneratedCheck, name: str, codes: dict[str, str]) -> None:
        self.question, self.name, self.codes = question, name, codes

    def __format__(self, spec: str) -> str:
        tree: ast.expr = _expanded(self.question, ast.Name(id=self.name))  # type: ignore[assignment]
        decimals = re.fullmatch(r"\.(\d+)f", spec)
        if decimals:
            tree = ast.Call(func=ast.Name(id="round"), args=[tree, ast.Constant(int(decimals.group(1)))], keywords=[])
        elif spec not in ("", "g"):
            raise Unfit(f"{{{self.name}:{spec}}}: Moodle shows a value plain or rounded (:.Nf), not as {spec!r}")
        code = f"{{{self.name}}}" if isinstance(tree, ast.Name) else f"{{={formula(tree)}}}"
        token = _TOKEN.format(len(self.codes))
        self.codes[token] = code
        return token


def moodle_text(question: GeneratedCheck, template: str) -> str:
    """A template as the HTML of a Moodle calculated question: ``{name}`` for a parameter shown
    plain, ``{=formula}`` for a value."""
    _check_parameters(question)
    codes: dict[str, str] = {}
    names = {name: _Placeholder(question, name, codes) for name in [*question.parameters, *question.values]}
    try:
        html = to_html(parse_inline(render(template, names, "template")))
    except GenerationError as exc:
        raise Unfit(str(exc)) from None
    for name in question.parameters:
        if f"{{{name}}}" in html:
            raise Unfit(f"its text holds {{{name}}} itself, which Moodle would replace by the wildcard's value")
    if "{=" in html:
        raise Unfit("its text holds '{=', which Moodle would compute")
    for token, code in codes.items():
        html = html.replace(token, code)
    return html


def datasets(question: GeneratedCheck, drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each wildcard's dataset: its distribution's bounds and decimals, and its drawn items."""
    out = []
    for name, spec in question.parameters.items():
        low, high = spec.range if spec.range is not None else spec.uniform  # type: ignore[misc]
        out.append(
            {
                "name": name,
                "minimum": low,
                "maximum": high,
                "decimals": 0 if spec.range is not None else spec.digits,
                "items": [values[name] for values in drawn],
            }
        )
    return out


# --- reading one back ----------------------------------------------------------------------------


def parameter_of(minimum: float, maximum: float, decimals: int) -> Parameter:
    """A dataset's distribution as a parameter: whole numbers as a range, else uniform."""
    if decimals == 0 and float(minimum).is_integer() and float(maximum).is_integer():
        return Parameter(range=(int(minimum), int(maximum)))
    return Parameter(uniform=(minimum, maximum), digits=decimals)


def expression_of(text: str, wildcards: set[str]) -> str:
    """A Moodle formula as an expression over the parameters: ``{d_k}`` becomes ``d_k``."""
    expression = re.sub(r"\{([^{}=]+)\}", lambda m: m.group(1) if m.group(1) in wildcards else m.group(0), text)
    if "{" in expression or "}" in expression:
        raise ValueError(f"{text!r}: a wildcard that has no dataset")
    _parse_or_fail(expression)
    return expression


def _parse_or_fail(expression: str) -> None:
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError:
        raise ValueError(f"{expression!r} is not a formula") from None


def template_of(html: str, wildcards: set[str], values: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A calculated question's HTML as tokens for its wildcards and formulas (each formula a value,
    ``_e1``, ``_e2``, ..., added to ``values``) and the token for each template field."""
    fields: dict[str, str] = {}
    out, index = [], 0
    while index < len(html):
        if html.startswith("{=", index):
            end, depth = index + 2, 1
            while end < len(html) and depth:
                depth += {"{": 1, "}": -1}.get(html[end], 0)
                end += 1
            name = f"_e{len(values) + 1}"
            values[name] = expression_of(html[index + 2 : end - 1], wildcards)
            token = _TOKEN.format(len(fields))
            fields[token] = f"{{{name}}}"
            out.append(token)
            index = end
            continue
        match = re.match(r"\{([^{}=]+)\}", html[index:])
        if match and match.group(1) in wildcards:
            token = _TOKEN.format(len(fields))
            fields[token] = f"{{{match.group(1)}}}"
            out.append(token)
            index += match.end()
            continue
        out.append(html[index])
        index += 1
    return "".join(out), fields


def fill_template(markdown: str, fields: dict[str, str]) -> str:
    """Markdown with its literal braces doubled and its tokens back as template fields."""
    text = markdown.replace("{", "{{").replace("}", "}}")
    for token, field in fields.items():
        text = text.replace(token, field)
    return text
