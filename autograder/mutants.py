"""Mutants of the reference: the solution with one small change, made by a catalogue of operators.

A mutant of a question is the assignment's solution (the code cells of its source notebook, which
``autograder assign`` writes from the master notebook's solution cells) with one of the question's
functions changed in one place by one operator of ``OPERATORS``: a step or a call left out, a
function replaced by its neighbour (``np.exp`` by ``np.exp2``), a constant by its neighbour, an axis
changed or ``keepdims`` dropped, an operand transposed, two operands or arguments swapped, a
reduction replaced by another, an off-by-one, an order reversed, a sign or a comparison flipped, an
argument ignored, two steps done in the other order. Each operator says its change in a sentence
that a student reads ("Your softmax matches one that does not subtract np.max(x, ...)"), and the
instructor reads beside the mutant's diff.

Two uses (docs/explanation/mutants.md): ``autograder verify`` grades every mutant with the hidden
suite and lists those it passes (mutation.py), and the grader names the mutant whose answers a
student's match on a failing question's checks (mutant_names.py).

The catalogue is this module's ``OPERATORS``: an instructor extends it by adding an ``Operator``
(a name, and a function from a node of the function's tree to its changed versions, each with the
change in words), and a question switches operators off in its settings
(``mutants = { off = ["constant"] }`` in assignment.toml or the master notebook's question cell).
Mutants are made once per solution and settings (``question_mutants``, cached per process): the
generator parses the solution with ``ast`` and unparses each changed function, so a mutant whose
code is the same as another's (two operators reaching one change) is kept once.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .assignment import Assignment, Question
from .errors import AssignmentError

# A change an operator makes at one node: the node that replaces it, and the change in words that
# completes "Your <function> matches one that ..." (no full stop).
Change = tuple[ast.AST, str]


@dataclass(frozen=True)
class Operator:
    name: str
    what: str  # the operator in a few words, for the docs and verify's summary
    changes: Callable[[ast.AST, Context], Iterator[Change]]


@dataclass(frozen=True)
class Context:
    """What an operator may need beyond the node: the function it is in and its parameters' defaults."""

    function: ast.FunctionDef
    defaults: dict[str, ast.expr]  # each parameter with a default, by name
    has_numpy: bool  # the solution imports numpy as np (an operator may add an np. call)
    # The numbers other operators own (an index, a slice's bound, an axis, a range's bound): ids of their nodes.
    reserved: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Mutant:
    id: str  # "<function>:<line>:<operator>", "#2" and on for a second change of one kind on a line
    question: str
    function: str  # the function changed
    operator: str
    change: str  # the change in words, completing "... a softmax that ..."
    diff: str  # the changed line(s): "old → new"
    sources: tuple[tuple[str, str], ...]  # each of the question's functions: (name, source), one changed

    @property
    def sentence(self) -> str:
        """What a student whose answers match it reads first."""
        return "Your " + self.function + " matches one that " + self.change + "."

    @property
    def gap(self) -> str:
        """What ``autograder verify`` says of it when the hidden tests pass it."""
        article = "an" if self.function[:1].lower() in "aeiou" else "a"
        return f"your hidden tests pass {article} {self.function} that {self.change}"


def _text(node: ast.AST, limit: int = 60) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call_name(node: ast.AST) -> str | None:
    """``np.exp`` for ``np.exp(x)``, ``max`` for ``max(x)``, ``.max`` for ``x.max()`` (a method)."""
    if not isinstance(node, ast.Call):
        return None
    function = node.func
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        if isinstance(function.value, ast.Name) and function.value.id in ("np", "numpy", "math"):
            return f"{function.value.id}.{function.attr}"
        return f".{function.attr}"
    return None


def _renamed_call(node: ast.Call, short: str) -> ast.Call:
    new = copy.deepcopy(node)
    if isinstance(new.func, ast.Name):
        new.func.id = short
    elif isinstance(new.func, ast.Attribute):
        new.func.attr = short
    return new


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


# --- the operators ----------------------------------------------------------------------------------

_LEFT_OUT = {ast.Sub: "subtract", ast.Add: "add", ast.Div: "divide by", ast.Mult: "multiply by"}


def drop_operand(node: ast.AST, context: Context) -> Iterator[Change]:
    """``a - b`` as ``a``: a step of arithmetic left out (the softmax that subtracts no maximum)."""
    if isinstance(node, ast.BinOp) and type(node.op) in _LEFT_OUT:
        yield copy.deepcopy(node.left), f"does not {_LEFT_OUT[type(node.op)]} {_text(node.right)}"


_UNARY = {"sqrt", "exp", "exp2", "log", "log2", "log10", "abs", "square", "tanh", "round", "floor", "ceil"}


def drop_call(node: ast.AST, context: Context) -> Iterator[Change]:
    """``np.sqrt(d)`` as ``d``: an elementwise function left out."""
    name = _call_name(node)
    if name and not name.startswith(".") and _short(name) in _UNARY and isinstance(node, ast.Call):
        if len(node.args) == 1 and not node.keywords:
            yield copy.deepcopy(node.args[0]), f"leaves out {name}: {_text(node.args[0])} where {_text(node)} belongs"


# Each function's neighbours: what a student confuses it with (reductions are ``reduction``'s).
NEIGHBOURS = {
    "exp": ("exp2",),
    "exp2": ("exp",),
    "log": ("log2", "log10"),
    "log2": ("log",),
    "log10": ("log",),
    "sin": ("cos",),
    "cos": ("sin",),
    "maximum": ("minimum",),
    "minimum": ("maximum",),
    "argmax": ("argmin",),
    "argmin": ("argmax",),
    "floor": ("ceil",),
    "ceil": ("floor",),
    "hstack": ("vstack",),
    "vstack": ("hstack",),
    "sqrt": ("square",),
}


def neighbour_call(node: ast.AST, context: Context) -> Iterator[Change]:
    """``np.exp`` as ``np.exp2``, ``np.sin`` as ``np.cos``: a function replaced by its neighbour."""
    name = _call_name(node)
    if name and isinstance(node, ast.Call):
        prefix = name[: -len(_short(name))]
        for other in NEIGHBOURS.get(_short(name), ()):
            yield _renamed_call(node, other), f"calls {prefix}{other} where {name} belongs"


def constant(node: ast.AST, context: Context) -> Iterator[Change]:
    """A number replaced by its neighbour: a whole number by one more or less, a real one by ten
    times more or less (indexes, slices, axes and ranges are ``off_by_one``'s and ``axis``')."""
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool) or not isinstance(node.value, int | float):
        return
    if id(node) in context.reserved:
        return
    value = node.value
    others = [value - 1, value + 1] if isinstance(value, int) else [value * 10, value / 10] if value else [1.0]
    for other in others:
        yield ast.Constant(other), f"uses {other!r} where {value!r} belongs"


_AXES = (-1, 0, 1)


def axis(node: ast.AST, context: Context) -> Iterator[Change]:
    """``axis=`` changed to another axis, or ``keepdims=True`` left out."""
    if not isinstance(node, ast.Call):
        return
    name = _call_name(node) or _text(node.func)
    for index, keyword in enumerate(node.keywords):
        if keyword.arg == "axis":
            given = keyword.value
            current: object = given.value if isinstance(given, ast.Constant) else None
            if isinstance(given, ast.UnaryOp) and isinstance(given.operand, ast.Constant):
                current = -given.operand.value if isinstance(given.operand.value, int) else None
            for other in _AXES:
                if other == current:
                    continue
                new = copy.deepcopy(node)
                new.keywords[index].value = ast.Constant(other)
                yield new, f"works along axis={other} in {name}" + f" where axis={_text(given)} belongs"
        if keyword.arg == "keepdims" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
            new = copy.deepcopy(node)
            del new.keywords[index]
            yield new, f"leaves out keepdims=True in {name}, so the reduced axis is not kept to broadcast against"


def _transposed_operand(node: ast.AST) -> ast.expr | None:
    """``x`` of ``x.T``, ``np.swapaxes(x, ...)``, ``np.transpose(x)`` or ``x.transpose(...)``."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return node.value
    name = _call_name(node)
    if isinstance(node, ast.Call) and name in ("np.swapaxes", "np.transpose", "numpy.swapaxes") and node.args:
        return node.args[0]
    if isinstance(node, ast.Call) and name == ".transpose" and isinstance(node.func, ast.Attribute):
        return node.func.value
    return None


def transpose(node: ast.AST, context: Context) -> Iterator[Change]:
    """A transpose left out (``K.T`` as ``K``), or an operand of ``@`` transposed that is not."""
    inner = _transposed_operand(node)
    if inner is not None:
        yield copy.deepcopy(inner), f"uses {_text(inner)} where its transpose {_text(node)} belongs"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and context.has_numpy:
        for side in ("left", "right"):
            operand = getattr(node, side)
            if _transposed_operand(operand) is None:
                new = copy.deepcopy(node)
                swapped = ast.parse(f"np.swapaxes({ast.unparse(operand)}, -1, -2)", mode="eval").body
                setattr(new, side, swapped)
                yield new, f"transposes {_text(operand)} in {_text(node)}"


_NOT_COMMUTING = (ast.Sub, ast.Div, ast.MatMult, ast.Pow, ast.FloorDiv, ast.Mod)


def swap(node: ast.AST, context: Context) -> Iterator[Change]:
    """``a - b`` as ``b - a``, ``f(a, b)`` as ``f(b, a)``: two operands or arguments swapped."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _NOT_COMMUTING):
        if ast.dump(node.left) != ast.dump(node.right):
            new = ast.BinOp(left=copy.deepcopy(node.right), op=node.op, right=copy.deepcopy(node.left))
            yield new, f"computes {_text(new)} where {_text(node)} belongs (its operands swapped)"
    if isinstance(node, ast.Call) and not any(isinstance(arg, ast.Starred) for arg in node.args):
        name = _call_name(node) or _text(node.func)
        for index in range(len(node.args) - 1):
            first, second = node.args[index], node.args[index + 1]
            if ast.dump(first) == ast.dump(second):
                continue
            swapped = copy.deepcopy(node)
            swapped.args[index], swapped.args[index + 1] = swapped.args[index + 1], swapped.args[index]
            yield swapped, f"passes {name} {_text(second, 30)} and {_text(first, 30)} in the other order"


REDUCTIONS = ("sum", "mean", "max", "min")


def reduction(node: ast.AST, context: Context) -> Iterator[Change]:
    """A sum, mean, maximum or minimum replaced by another (``np.sum`` as ``np.mean``)."""
    name = _call_name(node)
    if name and isinstance(node, ast.Call) and _short(name) in REDUCTIONS:
        bare = name in REDUCTIONS  # the builtins: mean is numpy's only
        for other in REDUCTIONS:
            if other == _short(name) or (bare and other == "mean"):
                continue
            yield _renamed_call(node, other), f"takes the {other} where the {_short(name)} belongs ({name})"


def _plus(node: ast.expr, step: int) -> ast.expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return ast.Constant(node.value + step)
    return ast.BinOp(left=copy.deepcopy(node), op=ast.Add() if step > 0 else ast.Sub(), right=ast.Constant(abs(step)))


def off_by_one(node: ast.AST, context: Context) -> Iterator[Change]:
    """A range's bound, an index or a slice's bound one more or one less."""
    if isinstance(node, ast.Call) and _call_name(node) == "range" and 1 <= len(node.args) <= 3:
        for index in range(min(len(node.args), 2)):
            for step in (-1, 1):
                new = copy.deepcopy(node)
                new.args[index] = _plus(node.args[index], step)
                yield new, f"is off by one: {_text(new)} where {_text(node)} belongs"
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for position, part in enumerate(parts):
            bounds = [("lower", part.lower), ("upper", part.upper)] if isinstance(part, ast.Slice) else [("", part)]
            for field, bound in bounds:
                if bound is None or (field == "" and not isinstance(bound, ast.Constant | ast.UnaryOp)):
                    continue
                if isinstance(bound, ast.Constant) and not isinstance(bound.value, int):
                    continue
                for step in (-1, 1):
                    moved = copy.deepcopy(node)
                    new_parts = moved.slice.elts if isinstance(moved.slice, ast.Tuple) else None
                    target = new_parts[position] if new_parts is not None else moved.slice
                    if field:
                        setattr(target, field, _plus(bound, step))
                    elif new_parts is not None:
                        new_parts[position] = _plus(bound, step)
                    else:
                        moved.slice = _plus(bound, step)
                    yield moved, f"is off by one: {_text(moved)} where {_text(node)} belongs"


def reverse(node: ast.AST, context: Context) -> Iterator[Change]:
    """An order reversed: ``sorted(x)`` as ``sorted(x, reverse=True)`` (and back), ``x[::-1]`` as ``x``."""
    name = _call_name(node)
    if isinstance(node, ast.Call) and name in ("sorted", ".sort"):
        new = copy.deepcopy(node)
        reversed_ = [k for k in new.keywords if k.arg == "reverse"]
        if reversed_:
            new.keywords = [k for k in new.keywords if k.arg != "reverse"]
        else:
            new.keywords.append(ast.keyword(arg="reverse", value=ast.Constant(True)))
        yield new, f"sorts in the reverse order: {_text(new)} where {_text(node)} belongs"
    if isinstance(node, ast.Call) and name == "reversed" and len(node.args) == 1:
        yield copy.deepcopy(node.args[0]), f"does not reverse {_text(node.args[0])}"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        step = node.slice.step
        if step is not None and ast.unparse(step) == "-1" and node.slice.lower is None and node.slice.upper is None:
            yield copy.deepcopy(node.value), f"does not reverse {_text(node.value)}"


_ADD_SUB = {ast.Add: ast.Sub, ast.Sub: ast.Add}


def sign(node: ast.AST, context: Context) -> Iterator[Change]:
    """A sign flipped: ``-x`` as ``x``, ``a + b`` as ``a - b`` and back."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        yield copy.deepcopy(node.operand), f"has a sign flipped: {_text(node.operand)} where {_text(node)} belongs"
    if isinstance(node, ast.BinOp) and type(node.op) in _ADD_SUB:
        new = ast.BinOp(left=copy.deepcopy(node.left), op=_ADD_SUB[type(node.op)](), right=copy.deepcopy(node.right))
        yield new, f"has a sign flipped: {_text(new)} where {_text(node)} belongs"


_FLIPPED: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.Gt, ast.LtE),
    ast.Gt: (ast.Lt, ast.GtE),
    ast.LtE: (ast.GtE, ast.Lt),
    ast.GtE: (ast.LtE, ast.Gt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}


def comparison(node: ast.AST, context: Context) -> Iterator[Change]:
    """A comparison flipped (``<`` as ``>``) or its boundary moved (``<`` as ``<=``)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        for other in _FLIPPED.get(type(node.ops[0]), ()):
            new = copy.deepcopy(node)
            new.ops = [other()]
            yield new, f"compares the other way: {_text(new)} where {_text(node)} belongs"


def ignore_argument(node: ast.AST, context: Context) -> Iterator[Change]:
    """An argument with a default ignored: the function as if it were always given its default."""
    if node is not context.function:
        return
    values = [(name, default) for name, default in context.defaults.items()]
    values += [  # a switch ignored either way: as if always on, or always off
        (name, ast.Constant(not default.value))
        for name, default in context.defaults.items()
        if isinstance(default, ast.Constant) and isinstance(default.value, bool)
    ]
    for name, default in values:
        new = copy.deepcopy(node)
        used = False
        for inner in ast.walk(new):
            for field, value in ast.iter_fields(inner):
                if isinstance(value, ast.Name) and value.id == name and isinstance(value.ctx, ast.Load):
                    setattr(inner, field, copy.deepcopy(default))
                    used = True
                elif isinstance(value, list):
                    for index, item in enumerate(value):
                        if isinstance(item, ast.Name) and item.id == name and isinstance(item.ctx, ast.Load):
                            value[index] = copy.deepcopy(default)
                            used = True
        if used:
            yield new, f"ignores its argument {name}, as if it were always {_text(default)}"


def _binds(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reads(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def steps(node: ast.AST, context: Context) -> Iterator[Change]:
    """Two steps in the other order: adjacent assignments swapped, where the later one does not read
    a name the earlier one binds first (that order would only raise NameError)."""
    body = getattr(node, "body", None)
    if not isinstance(body, list) or isinstance(node, ast.Module):
        return
    bound: set[str] = set(context.defaults) | {a.arg for a in context.function.args.args}
    for index, statement in enumerate(body):
        if index + 1 < len(body):
            first, second = statement, body[index + 1]
            simple = all(isinstance(s, ast.Assign | ast.AugAssign | ast.Expr) for s in (first, second))
            if simple and not (_reads(second) & (_binds(first) - bound)) and not _docstring(first):
                new = copy.deepcopy(node)
                steps_ = getattr(new, "body")  # noqa: B009 (any node with a body)
                steps_[index], steps_[index + 1] = steps_[index + 1], steps_[index]
                yield new, f"does two steps in the other order: {_text(second, 40)} before {_text(first, 40)}"
        bound |= _binds(statement)


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


# The catalogue, in the order mutants are made (two operators reaching one change keep the first).
OPERATORS: dict[str, Operator] = {
    operator.name: operator
    for operator in (
        Operator("drop_operand", "a step of arithmetic left out (a - b as a)", drop_operand),
        Operator("drop_call", "an elementwise function left out (np.sqrt(d) as d)", drop_call),
        Operator("neighbour_call", "a function replaced by its neighbour (np.exp as np.exp2)", neighbour_call),
        Operator("reduction", "a reduction replaced by another (sum, mean, max, min)", reduction),
        Operator("axis", "an axis changed, or keepdims=True left out", axis),
        Operator("transpose", "a transpose left out, or an operand of @ transposed", transpose),
        Operator("swap", "two operands or arguments swapped", swap),
        Operator("off_by_one", "a range's bound, an index or a slice's bound off by one", off_by_one),
        Operator("reverse", "an order reversed (sorted's reverse=, x[::-1])", reverse),
        Operator("sign", "a sign flipped (-x as x, + as -)", sign),
        Operator("comparison", "a comparison flipped or its boundary moved", comparison),
        Operator("ignore_argument", "an argument with a default ignored", ignore_argument),
        Operator("steps", "two adjacent steps in the other order", steps),
        Operator("constant", "a number replaced by its neighbour (n ± 1, x × 10 or ÷ 10)", constant),
    )
}


# --- making them ------------------------------------------------------------------------------------


def solution_program(assignment: Assignment) -> str:
    """The assignment's solution: the code cells of its source notebook (the master notebook's
    solution cells and the cells around them) that the graded functions need, in order: imports,
    definitions and the assignments they read, never the demonstrations (plots, prints)."""
    path = assignment.notebook_path
    try:
        stat = path.stat()
    except OSError as exc:
        raise AssignmentError(f"{path}: {exc.strerror}") from None
    return _program(str(path), stat.st_mtime_ns, stat.st_size)


@cache
def _program(path: str, modified: int, size: int) -> str:
    """The solution of the notebook at ``path``, read again when it changes."""
    from .submissions import Unreadable, extract

    try:
        cells = extract(Path(path)).cells
    except Unreadable as unreadable:
        raise AssignmentError(f"{path}: {unreadable}") from None
    statements: list[ast.stmt] = []
    for cell in cells:
        try:
            statements += ast.parse(cell.source).body
        except SyntaxError:
            continue  # a cell only the notebook runs (a magic, a shell line): no definition
    return ast.unparse(ast.Module(body=_needed(statements), type_ignores=[])) + "\n"


def _needed(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The definitions and what they read, transitively (imports and top-level assignments)."""
    defines = {i: _defined(s) for i, s in enumerate(statements)}
    wanted: set[str] = set()
    keep: set[int] = set()
    for index, statement in enumerate(statements):
        if isinstance(statement, ast.FunctionDef | ast.ClassDef):
            keep.add(index)
            wanted |= _reads_anywhere(statement)
    changed = True
    while changed:
        changed = False
        for index, statement in enumerate(statements):
            if index not in keep and defines[index] & wanted:
                keep.add(index)
                wanted |= _reads_anywhere(statement)
                changed = True
    return [statement for index, statement in enumerate(statements) if index in keep]


def _defined(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, ast.FunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return _binds(statement)
    return set()


def _reads_anywhere(statement: ast.stmt) -> set[str]:
    """The global names a statement reads (a function's: less its parameters and its own names)."""
    reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(statement, ast.FunctionDef):
        arguments = statement.args
        own = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        reads -= own | _binds(statement)
    return reads


def program_digest(program: str) -> str:
    return hashlib.sha256(program.encode()).hexdigest()[:16]


def question_mutants(assignment: Assignment, question: Question, program: str | None = None) -> list[Mutant]:
    """The mutants of ``question`` (its settings' operators switched off), made once per process for
    a given solution and settings."""
    off = tuple(question.mutants.off)
    unknown = [name for name in off if name not in OPERATORS]
    if unknown:
        raise AssignmentError(
            f"{assignment.folder / 'assignment.toml'}: question {question.id}: mutants.off: no operator "
            f"{unknown[0]!r} (the operators: {', '.join(OPERATORS)})"
        )
    program = solution_program(assignment) if program is None else program
    return list(_mutants(program, question.id, tuple(question.functions), off, tuple(OPERATORS)))


@cache
def _mutants(
    program: str, question: str, functions: tuple[str, ...], off: tuple[str, ...], catalogue: tuple[str, ...]
) -> tuple[Mutant, ...]:
    tree = ast.parse(program)
    defined = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    has_numpy = any(
        isinstance(s, ast.Import) and any(a.name == "numpy" and a.asname == "np" for a in s.names) for s in tree.body
    )
    own = [defined[name] for name in functions if name in defined]
    originals = {function.name: ast.unparse(function) for function in own}
    made: list[Mutant] = []
    seen = set(originals.values())
    for function in own:
        context = Context(function, _defaults(function), has_numpy, _reserved(function))
        counts: dict[tuple[int, str], int] = {}
        for index, node in enumerate(_nodes(function)):
            for name in catalogue:
                if name in off:
                    continue
                for replacement, change in _safely(OPERATORS[name], node, context):
                    changed = _replaced(function, index, replacement)
                    try:
                        source = ast.unparse(ast.fix_missing_locations(changed))
                        compile(source, "<mutant>", "exec")
                    except (SyntaxError, ValueError, TypeError):
                        continue
                    if source in seen:
                        continue
                    seen.add(source)
                    line = getattr(node, "lineno", function.lineno) - function.lineno
                    counts[(line, name)] = counts.get((line, name), 0) + 1
                    count = counts[(line, name)]
                    made.append(
                        Mutant(
                            id=f"{function.name}:{line}:{name}" + (f"#{count}" if count > 1 else ""),
                            question=question,
                            function=function.name,
                            operator=name,
                            change=change,
                            diff=_diff(originals[function.name], source),
                            sources=tuple(
                                (other, source if other == function.name else text) for other, text in originals.items()
                            ),
                        )
                    )
    return tuple(made)


def _safely(operator: Operator, node: ast.AST, context: Context) -> list[Change]:
    """An operator's changes at ``node``; an operator of the instructor's that fails makes none here
    (``autograder verify`` lists the operators and how many mutants each made)."""
    try:
        return list(operator.changes(node, context))
    except Exception:  # an instructor's operator that cannot handle this node
        return []


def _reserved(function: ast.FunctionDef) -> frozenset[int]:
    """The numbers of ``function`` that ``off_by_one`` and ``axis`` change, not ``constant``: in an
    index or a slice, an ``axis=`` or a range's bounds (one change, one operator, one sentence)."""
    owned: list[ast.AST] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript):
            owned.append(node.slice)
        elif isinstance(node, ast.Call):
            owned += [keyword.value for keyword in node.keywords if keyword.arg == "axis"]
            if _call_name(node) == "range":
                owned += node.args
    return frozenset(id(inner) for part in owned for inner in ast.walk(part) if isinstance(inner, ast.Constant))


def _defaults(function: ast.FunctionDef) -> dict[str, ast.expr]:
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    found = {
        argument.arg: default
        for argument, default in zip(
            positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
        )
    }
    found |= {
        argument.arg: default
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    }
    return found


def _nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The function's nodes in a fixed order (the function itself first), less its docstring, its
    arguments' defaults and decorators, and what an f-string or a print shows."""
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        found.append(node)
        for field, value in ast.iter_fields(node):
            if node is function and field in ("args", "decorator_list", "returns"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST) or isinstance(child, ast.JoinedStr) or _docstring_node(child):
                    continue
                if isinstance(child, ast.Expr) and _call_name(child.value) == "print":
                    continue
                visit(child)

    visit(function)
    return found


def _docstring_node(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _replaced(function: ast.FunctionDef, index: int, replacement: ast.AST) -> ast.AST:
    """A copy of ``function`` with its ``index``-th node (``_nodes``' order) replaced."""
    if index == 0:
        return copy.deepcopy(replacement)
    changed = copy.deepcopy(function)
    target = _nodes(changed)[index]
    for parent in _nodes(changed):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, replacement)
                return changed
            if isinstance(value, list) and any(item is target for item in value):
                value[[i for i, item in enumerate(value) if item is target][0]] = replacement
                return changed
    return changed


def _diff(before: str, after: str) -> str:
    """The changed lines of a function, from the first that differs to the last: ``old → new``
    (each side's lines joined by `` / ``; two steps swapped show both)."""
    old, new = before.splitlines(), after.splitlines()
    first = 0
    while first < min(len(old), len(new)) and old[first] == new[first]:
        first += 1
    last = 0
    while last < min(len(old), len(new)) - first and old[-1 - last] == new[-1 - last]:
        last += 1
    removed = [line.strip() for line in old[first : len(old) - last]]
    added = [line.strip() for line in new[first : len(new) - last]]
    return f"{' / '.join(removed) or '(nothing)'} → {' / '.join(added) or '(nothing)'}"


def renamed_sources(mutant: Mutant, suffix: str) -> str:
    """The mutant's functions under other names (``softmax`` as ``softmax<suffix>``), calling one
    another by those names: many mutants beside the solution in one program."""
    names = {name for name, _ in mutant.sources}
    parts = []
    for _, source in mutant.sources:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in names:
                node.name += suffix
            elif isinstance(node, ast.Name) and node.id in names:
                node.id += suffix
        parts.append(ast.unparse(tree))
    return "\n\n".join(parts) + "\n"
