"""The words a person reads agree with their counts: every count printed beside its noun goes through
the one rule (course.wording.plural in Python, the ``counted`` filter in templates), never "1 pairs",
"answer(s)" or a hand-made ``'s' if n != 1``. A reading of the source finds the forms that break it
(in the packages' Python and their log lines, the site's templates and the JupyterLab panel's script), so the rule fails
on the code a maintainer would write; a page and a command are then read at counts 1 and 2."""

from __future__ import annotations

import ast
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_house_rules import modules

pytestmark = pytest.mark.timeout(120)

# A word ending in s after an interpolation is taken for a plural noun unless it is one of these: the
# verbs and words that follow a name ("{path} exists", "{question} needs points").
NOT_NOUNS = frozenset(
    "is was has does its this as us yes pass https repeats refers gives uses calls lacks needs says grades "
    "passes holds belongs exists".split()
)
# ... and a second word is one only after a word that can qualify a noun ("{n} more minutes").
NOT_QUALIFIERS = NOT_NOUNS | frozenset("in of the to at on and or for by from with".split())

# Reviewed exceptions: (file, the text found) and why each may stay.
ALLOWED = {
    # The sandboxed worker imports nothing of the project (autograder/sandbox/worker.py says why).
    ("autograder/sandbox/worker.py", "{MAX_BLOBS} arrays"),
    # A constant far above 1, written with thousands separators, which plural() would drop.
    ("autograder/sandbox/session.py", "{MAX_ITEMS:,} values"),
    # untrusted/ imports nothing of the project; the text cut is always long, the count over 1 in practice.
    ("untrusted/text.py", "{len(text) - limit} more characters"),
    # The example hidden test copied into a new course, which imports only autograder.testing.
    ("course/skeleton/assignments/example/hidden/test_mean.py", "{size} random value{'s' if size != 1 else ''}"),
}

TEMPLATE_FOLDERS = ["service/templates", "service/console_templates"]
SCRIPTS = ["jupyterlab_gradewright/src/index.ts"]


def _plural_looking(word: str) -> bool:
    return len(word) > 2 and word.endswith("s") and word not in NOT_NOUNS


def _noun_after(text: str) -> str | None:
    """The plural noun ``text`` starts with, after a space ("pairs", "more minutes"), if any."""
    found = re.match(r"\s+([a-z][a-z-]*)(?:\s+([a-z]+))?", text)
    if not found:
        return None
    first, second = found.group(1), found.group(2) or ""
    if _plural_looking(first):
        return first
    if first not in NOT_QUALIFIERS and _plural_looking(second):
        return f"{first} {second}"
    return None


def _shown(node: ast.FormattedValue) -> str:
    spec = (
        ""
        if node.format_spec is None
        else ":" + "".join(str(part.value) for part in ast.walk(node.format_spec) if isinstance(part, ast.Constant))
    )
    return f"{{{ast.unparse(node.value)}{spec}}}"


def _is_plural_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "plural"


def _s_or_nothing(node: ast.AST) -> bool:
    """``'s' if n != 1 else ''`` (either way round): a plural made by hand."""
    if not isinstance(node, ast.IfExp):
        return False
    branches = {getattr(node.body, "value", None), getattr(node.orelse, "value", None)}
    return branches == {"s", ""}


LOG_METHODS = frozenset("debug info warning error exception critical".split())
PERCENT_FIELD = re.compile(r"%(?:\([a-z_]+\))?[-#0 +]*\d*(?:\.\d+)?[dsifgr]")


def log_findings(node: ast.AST, where: str) -> Iterator[tuple[str, int, str]]:
    """A log line's ``%s`` field right before a plural noun (``logger.info("%s attempts graded", n)``),
    its value not made by plural(): an operator reads the log too."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in LOG_METHODS
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return
    message = node.args[0].value
    for index, field in enumerate(PERCENT_FIELD.finditer(message), start=1):
        value = node.args[index] if index < len(node.args) else None
        if value is not None and _is_plural_call(value):
            continue
        noun = _noun_after(message[field.end() : field.end() + 40])
        if noun:
            yield where, node.lineno, f"{field.group(0)} {noun}"


def python_findings(source: str, where: str) -> Iterator[tuple[str, int, str]]:
    """In one module: a count interpolated right before a plural noun (``f"{n} pairs"``, or a log
    line's ``"%s pairs"``), a count and a noun given its s by hand (``f"{n} answer{'s' if n != 1
    else ''}"``), and "(s)" in any string but a docstring."""
    tree = ast.parse(source, where)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        yield from log_findings(node, where)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if "(s)" in node.value:
                yield where, node.lineno, node.value[:80]
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for before, text in zip(parts, parts[1:], strict=False):
            if not isinstance(before, ast.FormattedValue) or not isinstance(text, ast.Constant):
                continue
            if _is_plural_call(before.value) or isinstance(before.value, ast.IfExp | ast.Constant):
                continue
            noun = _noun_after(str(text.value))
            if noun:
                yield where, node.lineno, f"{_shown(before)} {noun}"
        for count, noun, suffix in zip(parts, parts[1:], parts[2:], strict=False):
            if (
                isinstance(count, ast.FormattedValue)
                and not _is_plural_call(count.value)
                and isinstance(noun, ast.Constant)
                and re.fullmatch(r"\s[a-z][a-z -]*", str(noun.value))
                and isinstance(suffix, ast.FormattedValue)
                and _s_or_nothing(suffix.value)
            ):
                yield where, node.lineno, f"{_shown(count)}{noun.value}{_shown(suffix)}"


TEMPLATE_VALUE = re.compile(r"\{\{\s*(?P<value>[^}]*?)\s*\}\}(?P<after>(?:\s*</\w+>)?[^{<]{0,40})")


def template_findings(text: str, where: str) -> Iterator[tuple[str, int, str]]:
    """In one template: a value shown right before a plural noun without ``|counted`` (``{{ n }}
    pairs``, ``{{ total|score }} points``), "(s)", and Django's ``pluralize`` (a second rule)."""
    for found in TEMPLATE_VALUE.finditer(text):
        if "counted" in found["value"]:
            continue
        noun = _noun_after(re.sub(r"^\s*</\w+>", "", found["after"]))
        if noun:
            yield where, text.count("\n", 0, found.start()) + 1, f"{{{{ {found['value']} }}}} {noun}"
    for found in re.finditer(r"\(s\)|\|\s*pluralize", text):
        yield where, text.count("\n", 0, found.start()) + 1, found.group(0)


def script_findings(text: str, where: str) -> Iterator[tuple[str, int, str]]:
    """In the panel's TypeScript: ``${n} pairs`` in a template literal, and "(s)"."""
    for found in re.finditer(r"\$\{(?P<value>[^}]*)\}(?P<after>[^`${]{0,40})", text):
        noun = _noun_after(found["after"])
        if noun:
            yield where, text.count("\n", 0, found.start()) + 1, f"${{{found['value']}}} {noun}"
    for found in re.finditer(r"\(s\)", text):
        yield where, text.count("\n", 0, found.start()) + 1, found.group(0)


def everything(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    for path in modules(root).values():
        yield from python_findings(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    for folder in TEMPLATE_FOLDERS:
        for path in sorted((root / folder).rglob("*.html")) + sorted((root / folder).rglob("*.txt")):
            yield from template_findings(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    for path in (root / script for script in SCRIPTS):
        yield from script_findings(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())


def test_every_count_beside_its_noun_goes_through_the_one_rule():
    found = list(everything())
    unreviewed = [f"{where}:{line}: {what}" for where, line, what in found if (where, what) not in ALLOWED]
    assert not unreviewed, "a count without course.wording.plural / |counted:\n" + "\n".join(unreviewed)
    stale = ALLOWED - {(where, what) for where, _, what in found}
    assert not stale, f"allowed exceptions no longer found (remove them): {sorted(stale)}"


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ('f"{len(pairs)} pairs share more than"', "{len(pairs)} pairs"),
        ('f"{n} more minutes"', "{n} more minutes"),
        ('f"{points:g} points"', "{points:g} points"),
        ('f"{n} answer(s) left out"', None),  # "(s)": found as the string's text
        ("f\"{n} answer{'s' if n != 1 else ''}\"", "{n} answer{'s' if n != 1 else ''}"),
        ("f\"{plural(n, 'pair')} share{'s' if n == 1 else ''}\"", False),  # a verb agreeing
        ('f"{path} exists already"', False),
        ("f\"{plural(n, 'pair')} compared\"", False),
        ('logger.info("%s: %s attempts graded in %.1f s", exam, graded, seconds)', "%s attempts"),
        ('logger.warning("%d pairs left", n)', "%d pairs"),
        ("logger.info(\"%s: %s graded\", exam, plural(graded, 'attempt'))", False),
        ('logger.info("%s exists", path)', False),
    ],
)
def test_the_python_finder_fails_on_the_forms_it_names(source, flagged):
    found = [what for _, _, what in python_findings(source, "example.py")]
    if flagged is False:
        assert found == []
    elif flagged is None:
        assert found and "(s)" in found[0]
    else:
        assert flagged in found


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("<p>{{ report.pairs|length }} pairs share</p>", True),
        ("<p>{{ spec.max_score|score }}\n  points.</p>", True),
        ("<h2><strong>{{ n }}</strong> students</h2>", True),
        ("{{ n }} answer{{ n|pluralize }}", True),
        ("<p>answer(s)</p>", True),
        ('<p>{{ n|counted:"pair" }} share</p>', False),
        ("<h1>{{ title }} online</h1>", False),
    ],
)
def test_the_template_finder_fails_on_the_forms_it_names(text, flagged):
    assert bool(list(template_findings(text, "example.html"))) is flagged


def test_the_script_finder_fails_on_the_forms_it_names():
    assert list(script_findings("text('p', `${count} checks passed`)", "x.ts"))
    assert not list(script_findings("text('h2', `Submission ${job.id} of ${job.assignment}`)", "x.ts"))


# Read at counts 1 and 2: the staff's similarity page and `autograder roster import`.


@pytest.mark.parametrize(("pairs", "said"), [(1, "1 pair shares more than"), (2, "2 pairs share more than")])
def test_the_similarity_page_agrees_with_its_counts(pairs, said):
    from gradebook.models import SimilarityRun
    from service.accounts.models import Member

    from .served import student

    name = "sequences-and-attention"
    report = {
        "assignment": name,
        "threshold": 0.5,
        "compared": pairs + 1,
        "candidates": pairs,
        "all_pairs": pairs,
        "pairs": [
            {"first": f"w{n}", "second": f"w{n}b", "first_share": 0.9, "second_share": 0.8} for n in range(pairs)
        ],
    }
    when = datetime(2999, 1, 1, tzinfo=UTC)  # the last report of all while this test reads it
    tag = uuid.uuid4().hex[:8]
    run = SimilarityRun.objects.create(
        assignment=name,
        threshold=0.5,
        state=SimilarityRun.DONE,
        requested_at=when,
        finished_at=when,
        requested_by=f"words-{tag}",
        report=report,
    )
    try:
        _, staff = student(Member.TA)
        page = " ".join(staff.get(f"/staff/similarity/{name}/").content.decode().split())
    finally:
        run.delete()
    assert f"words-{tag}" in page and said in page
    compared = f"{pairs + 1} latest submissions compared; {pairs} of their {pairs} pair"
    assert compared + ("" if pairs == 1 else "s") + (" shares" if pairs == 1 else " share") in page


@pytest.mark.parametrize(("rows", "said"), [(1, "1 student added, 0 updated"), (2, "2 students added, 0 updated")])
def test_the_roster_import_agrees_with_its_count(tmp_path, capsys, rows, said):
    from commands.autograder import main

    roster = tmp_path / "roster.csv"
    lines = [f"s00{n},Student {n},s{n}@example.edu,,,\n" for n in range(1, rows + 1)]
    roster.write_text("student_id,name,email,canvas_id,moodle_id,sis_id\n" + "".join(lines), encoding="utf-8")
    code = main(["--course", str(ROOT), "roster", "import", str(roster), "--gradebook", str(tmp_path / "book.db")])
    assert code == 0 and said in capsys.readouterr().out
