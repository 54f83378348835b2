"""The house's rules that a reading of the source can check: no import cycle between the packages'
modules, and each rule stated in one place (the sandbox's default packages, a due time after an
extension, the grader's version, the writing of a hand mark). Each check reads the source's syntax
trees, so it fails on the code a maintainer would write, not on a comment or a docstring."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.timeout(120)

PACKAGES = [
    "course",
    "autograder",
    "untrusted",
    "gradebook",
    "commands",
    "service",
    "gradewright",
    "jupyterlab_gradewright",
]


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name), migrations aside."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            # ui-tests/: the JupyterLab extension's UI test tooling, not a module (its name cannot be imported).
            if {"migrations", "node_modules", "ui-tests"} & set(relative.parts):
                continue
            name = ".".join(relative.with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports: anywhere in it (in a function, under
    TYPE_CHECKING), absolute or relative; ``from pkg import name`` imports ``pkg`` and, where it is
    a module, ``pkg.name``. An import that runs when the module is imported also runs the packages
    above its target (``import a.b.c`` runs ``a/b/__init__.py``): those count too, the module's own
    packages aside (they are running already)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    at_import = {id(node) for node in _run_at_import(tree.body)}
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bases = [alias.name for alias in node.names]
            targets.update(bases)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            bases = [base]
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
        else:
            continue
        if id(node) in at_import:
            for base in bases:
                parts = base.split(".")
                above = {".".join(parts[:end]) for end in range(1, len(parts))}
                targets.update(parent for parent in above if not f"{name}.".startswith(f"{parent}."))
    return {target for target in targets if target in known and target != name}


def _run_at_import(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The import statements that run when a module is imported: not in a function, nor under
    ``if TYPE_CHECKING``."""
    for statement in body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            yield statement
        elif isinstance(statement, ast.If):
            if not (isinstance(statement.test, ast.Name) and statement.test.id == "TYPE_CHECKING"):
                yield from _run_at_import(statement.body)
            yield from _run_at_import(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)):
                yield from _run_at_import(block)
        elif isinstance(statement, ast.With | ast.ClassDef):
            yield from _run_at_import(statement.body)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively):
    each is a set of modules that import one another, directly or through others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def test_the_cycle_finder_finds_a_circle_through_a_package_and_a_relative_import(tmp_path):
    """The check itself can fail: a package whose __init__ registers a submodule that imports the
    package back, and a circle of three through ``from . import name``, are both found."""
    exports = tmp_path / "gradebook" / "exports"
    exports.mkdir(parents=True)
    (tmp_path / "gradebook" / "__init__.py").write_text("")
    (exports / "__init__.py").write_text("from . import canvas\n")
    (exports / "canvas.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import Table\n")
    (tmp_path / "gradebook" / "book.py").write_text("def f():\n    from .grades import g\n")
    (tmp_path / "gradebook" / "grades.py").write_text("from gradebook import marks\n")
    (tmp_path / "gradebook" / "marks.py").write_text("from .book import f\n")
    (tmp_path / "gradebook" / "alone.py").write_text("from .book import f\nimport gradebook.grades\n")
    # A circle through a package's __init__ that a dotted import runs (how autograder.explain once
    # imported itself back through autograder/reports/__init__.py); the same import for annotations
    # only, or in a function, runs no __init__ when the module is imported.
    reports = tmp_path / "gradebook" / "reports"
    reports.mkdir()
    (reports / "__init__.py").write_text("from . import other, writer\n")
    (reports / "model.py").write_text("")
    (reports / "writer.py").write_text("from gradebook.explain import why\n")
    (tmp_path / "gradebook" / "explain.py").write_text("from gradebook.reports.model import Report\n")
    (tmp_path / "gradebook" / "lazy.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gradebook.reports.model import R\n"
    )
    (reports / "other.py").write_text("from gradebook.lazy import x\n")
    found = cycles(import_graph(tmp_path))
    assert sorted(found) == [
        ["gradebook.book", "gradebook.grades", "gradebook.marks"],
        ["gradebook.explain", "gradebook.reports", "gradebook.reports.writer"],
        ["gradebook.exports", "gradebook.exports.canvas"],
    ]


def test_no_module_imports_a_module_that_imports_it_back():
    found = cycles(import_graph())
    assert not found, "modules that import one another, directly or through others:\n" + "\n".join(
        " <-> ".join(component) for component in found
    )


# The rules stated once. Each finder yields (file, line, what) for every place that states the rule.


def trees(root: Path = ROOT) -> Iterator[tuple[str, ast.AST]]:
    for path in modules(root).values():
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def sandbox_package_lists(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every list or tuple of exactly the default packages' names, and every SANDBOX_PACKAGES set."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.List | ast.Tuple)
                and node.elts
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
            ):
                if {e.value for e in node.elts} == {"numpy", "matplotlib"}:  # type: ignore[attr-defined]
                    yield where, node.lineno, ast.unparse(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                names = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(n, ast.Name) and n.id == "SANDBOX_PACKAGES" for n in names):
                    yield where, node.lineno, "SANDBOX_PACKAGES ="


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def due_after_extension(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every comparison, max() or min() of a due time with an extension's end (``until``)."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"max", "min"}:
                operands = list(node.args)
            else:
                continue
            names = [_names_in(operand) for operand in operands]
            if any(any("due" in n for n in each) for each in names) and any(
                any("until" in n for n in each) for each in names
            ):
                yield where, node.lineno, ast.unparse(node)


def version_lookups(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every lookup of the installed grader's version: importlib.metadata's version() or
    distribution() of the project's distribution, by its name or by a name bound to it."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called not in {"version", "distribution", "metadata"} or not node.args:
                continue
            argument = node.args[0]
            if (isinstance(argument, ast.Constant) and argument.value == "gradewright") or (
                isinstance(argument, ast.Name) and argument.id == "DISTRIBUTION"
            ):
                yield where, node.lineno, ast.unparse(node)


ANSWER_TEXT = "YOUR ANSWER HERE"  # what the release leaves in a written answer's cell

MARK_WRITES = {"create", "get_or_create", "update_or_create", "bulk_create", "bulk_update", "update", "delete", "save"}


def mark_writes(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every write of gradebook Mark rows through the ORM: a writing method called on a chain that
    starts from ``Mark`` (``Mark.objects...``, ``book.objects(Mark)...``), or a ``Mark(...)`` made."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            made = (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) == "Mark"
            written = isinstance(func, ast.Attribute) and func.attr in MARK_WRITES and _from_mark(func.value)
            if made or written:
                yield where, node.lineno, ast.unparse(node)[:120]


def _from_mark(node: ast.AST) -> bool:
    """Whether a call chain's receiver is the Mark model: its root, or an argument of a call in it."""
    while True:
        if isinstance(node, ast.Name):
            return node.id == "Mark"
        if isinstance(node, ast.Attribute):
            if node.attr == "Mark":
                return True
            node = node.value
        elif isinstance(node, ast.Call):
            if any(isinstance(a, ast.Name) and a.id == "Mark" for a in node.args):
                return True
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return False


def queue_claims(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every claim of a queue's rows: a ``select_for_update(skip_locked=...)`` call, or a lease token
    (``lease=``) written with a new value from ``secrets``."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "select_for_update"
                and any(k.arg == "skip_locked" for k in node.keywords)
            ):
                yield where, node.lineno, ast.unparse(node)[:120]
            elif any(k.arg == "lease" and "secrets" in _names_in(k.value) for k in node.keywords):
                yield where, node.lineno, ast.unparse(node)[:120]


def environment_reads(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every read of one of our environment variables (GRADEWRIGHT_..., AUTOGRADER_..., the hub's
    JUPYTERHUB_...) from os.environ or os.getenv: by its name, or by a name bound to one."""
    ours = ("GRADEWRIGHT_", "AUTOGRADER_", "JUPYTERHUB_")
    for where, tree in trees(root):
        bound = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and node.value.value.startswith(ours)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                text = ast.unparse(node.func)
                if text not in {"os.environ.get", "os.getenv", "environ.get", "getenv", "environment.get"}:
                    continue
                key = node.args[0]
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                if ast.unparse(node.value) not in {"os.environ", "environ", "environment"}:
                    continue
                key = node.slice
            else:
                continue
            if (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith(ours)) or (
                isinstance(key, ast.Name) and key.id in bound | {"name"}
            ):
                yield where, node.lineno, ast.unparse(node)


def _about_scores(node: ast.AST) -> bool:
    return any("score" in name.lower() or "mean" in name.lower() for name in _names_in(node))


def score_roundings(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every rounding of a score for a reader: ``round(score, n)``, or a score formatted to a number
    of decimals (``f"{mean:.2f}"``), where the names in it speak of a score or a mean."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            rounded = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "round"
                and len(node.args) + len(node.keywords) == 2
                and _about_scores(node)
            )
            formatted = (
                isinstance(node, ast.FormattedValue)
                and node.format_spec is not None
                and "." in ast.unparse(node.format_spec)
                and _about_scores(node.value)
            )
            if rounded or formatted:
                yield where, node.lineno, ast.unparse(node)[:120]


def empty_answer_rules(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every comparison of an answer with a starter text (a name that speaks of a starter, the
    released notebook's ``ANSWER_STUB`` or its text): whether an answer is empty. A check for None
    (``starters is None``) is not one."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
                continue
            names = _names_in(node)
            texts = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
            if any("starter" in name.lower() for name in names) or "ANSWER_STUB" in names or ANSWER_TEXT in texts:
                yield where, node.lineno, ast.unparse(node)[:120]


COUNTING_RULES = {"last", "best", "last_before_due"}  # assignment.toml's counts


def counting_rules(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """Every comparison with one of the rules of which submission counts (``counts == "best"``,
    ``rule in ("last", ...)``): what a rule means is said by gradebook.grades.which_counts alone;
    everything else asks it."""
    for where, tree in trees(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value in COUNTING_RULES for c in ast.walk(node)
            ):
                yield where, node.lineno, ast.unparse(node)[:120]


RULES = {
    # rule: (its finder, the one file allowed to state it)
    "how a queue claims a row": (queue_claims, "gradebook/leases.py"),
    "sandbox packages": (sandbox_package_lists, "course/folder.py"),
    "due after an extension": (due_after_extension, "autograder/lateness.py"),
    "grader version": (version_lookups, "autograder/version.py"),
    "mark writer": (mark_writes, "gradebook/marking/marks.py"),
    "environment variables": (environment_reads, "autograder/environment.py"),
    "score rounding": (score_roundings, "course/wording.py"),
    "empty answer": (empty_answer_rules, "gradebook/marking/empty_answers.py"),
    "which submission counts": (counting_rules, "gradebook/grades.py"),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_is_stated_in_one_place(rule):
    finder, home = RULES[rule]
    found = list(finder())
    stated_at_home = [place for place in found if place[0] == home]
    elsewhere = [place for place in found if place[0] != home]
    assert stated_at_home, f"{rule}: no longer found in {home}; the check would pass on anything"
    others = "; ".join(f"{f}:{line}: {what}" for f, line, what in elsewhere)
    assert not others, f"{rule}: stated outside {home}: {others}"


def test_the_sandbox_packages_have_one_definition():
    """One assignment of the default, and its value the two packages the runtime bundles."""
    definitions = [place for place in sandbox_package_lists() if place[2] == "SANDBOX_PACKAGES ="]
    assert [where for where, _, _ in definitions] == ["course/folder.py"]
    from course.folder import SANDBOX_PACKAGES, CourseFolder

    assert SANDBOX_PACKAGES == ("numpy", "matplotlib")
    from autograder.assignment import Assignment
    from autograder.sandbox import preflight, runners, runtime

    assert runtime.SANDBOX_PACKAGES is SANDBOX_PACKAGES and runners.SANDBOX_PACKAGES is SANDBOX_PACKAGES
    assert preflight.check_limits.__defaults__ == (SANDBOX_PACKAGES,)
    assert Assignment.model_fields["sandbox_packages"].default == list(SANDBOX_PACKAGES)
    course = CourseFolder.model_validate({"title": "t", "modules": [{"number": 1, "title": "m"}], "root": "."})
    assert course.sandbox.packages == list(SANDBOX_PACKAGES)


@pytest.mark.parametrize(
    ("finder", "source", "expected"),
    [
        (sandbox_package_lists, 'packages = ("numpy", "matplotlib")\n', 1),
        (sandbox_package_lists, 'PRELOAD = ("numpy", "matplotlib.pyplot")\n"""numpy, matplotlib"""\n', 0),
        (due_after_extension, "due = max(spec.due, extension.until) if extension else spec.due\n", 1),
        (due_after_extension, "if extended_until is not None and extended_until > due:\n    pass\n", 1),
        (version_lookups, 'from importlib.metadata import version\nv = version("gradewright")\n', 1),
        (version_lookups, 'import importlib.metadata\nv = importlib.metadata.version("numpy")\n', 0),
        (mark_writes, "Mark.objects.update_or_create(student=s, defaults={})\n", 1),
        (mark_writes, "book.objects(Mark).filter(student=s).delete()\n", 1),
        (mark_writes, "Mark.objects.filter(student=s).first()\nbook.objects(ExamMark).create()\n", 0),
        (queue_claims, "jobs = Job.objects.filter(state=Q).select_for_update(skip_locked=True)\n", 1),
        (queue_claims, "Job.objects.create(lease=secrets.token_hex(16))\n", 1),
        (queue_claims, "Job.objects.filter(lease=job.lease).select_for_update().update(state=DONE)\n", 0),
        (environment_reads, 'import os\nurl = os.environ.get("GRADEWRIGHT_DATABASE_URL")\n', 1),
        (environment_reads, 'import os\nVARIABLE = "AUTOGRADER_SECRET"\nsecret = os.environ[VARIABLE]\n', 1),
        (environment_reads, 'import os\nhome = os.environ.get("XDG_CONFIG_HOME")\n', 0),
        (score_roundings, 'shown = f"{stats.mean_score:.2f}"\nx = round(report.score, 3)\n', 2),
        (score_roundings, 'seconds = round(time.monotonic() - started, 3)\nshown = f"{share:.1%}"\n', 0),
        (
            empty_answer_rules,
            'if text.strip() == starter_text:\n    pass\nempty = answer in ("", "YOUR ANSWER HERE")\n',
            2,
        ),
        (empty_answer_rules, "hashes = np.isin(kept, starter.hashes)\nempty = not text.strip()\n", 0),
    ],
)
def test_each_finder_finds_what_it_looks_for(tmp_path, finder, source, expected):
    """The finders can fail: each finds a statement of its rule (and not a look-alike) in a module."""
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "pages.py").write_text(source)
    assert len(list(finder(tmp_path))) == expected
