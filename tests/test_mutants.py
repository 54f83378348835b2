"""Mutants of the reference (autograder/mutants.py, mutant_names.py, mutation.py): made by each
operator of the catalogue; named in the feedback of a hand-written submission that makes the same
mistake in other code; not named when two changes fit; and a hidden suite with a gap caught by
`verify`. The naming tests grade with the in-process runner (trusted code only); the verify tests
run the real sandbox."""

from __future__ import annotations

import ast
import shutil
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import load_reference
from autograder.errors import AssignmentError
from autograder.grading import grade_submission
from autograder.mutants import OPERATORS, question_mutants, solution_program
from autograder.submissions import find_submissions

from .conftest import ROOT, needs_sandbox
from .fake_runner import InProcessRunner

OPERATORS_FOLDER = Path(__file__).parent / "fixtures" / "mutants" / "operators"

# Each operator's mistake as a student writes it: not the mutant's code, the same answers.
WRITTEN = {
    "drop_operand": ("centred", "def centred(x):\n    return np.array(x, dtype=float) * 1.0"),
    "drop_call": ("rms", "def rms(x):\n    return float(sum(v * v for v in x) / len(x))"),
    "neighbour_call": ("wave", "def wave(t):\n    return np.sin(t + np.pi / 2)"),
    "reduction": ("total", "def total(x):\n    s = 0.0\n    for v in x:\n        s += v\n    return s / len(x)"),
    "axis": ("row_shares", "def row_shares(m):\n    return m / m.sum(axis=1)"),
    "transpose": ("gram", "def gram(a, b):\n    return np.einsum('ij,jk->ik', a, b)"),
    "swap": ("ratio", "def ratio(a, b):\n    return np.reciprocal(a / b)"),
    "off_by_one": ("head_sum", "def head_sum(x, k):\n    return float(np.sum(x[: k + 1]))"),
    "reverse": ("ranked", "def ranked(x):\n    out = list(x)\n    out.sort()\n    return out"),
    "sign": ("shifted", "def shifted(x, c):\n    return x + (-c)"),
    "comparison": ("positives", "def positives(x):\n    return np.where(x < 0, x, 0.0)"),
    "ignore_argument": ("power_sum", "def power_sum(x, p=2):\n    return float(np.dot(x, x))"),
    "steps": ("affine", "def affine(x):\n    return 3.0 * x + 3.0"),
    "constant": ("halved", "def halved(x):\n    return x / 0.2"),
}


def _grade(folder: Path, path: Path, secret: str = "first") -> dict:
    assignment = load_assignment(folder)
    (submission,) = find_submissions([path]).submissions
    report = grade_submission(
        assignment, submission, InProcessRunner(), load_reference(assignment, "numpy"), secret=secret
    )
    return {q.id: q for q in report.questions}


def _with(tmp_path: Path, function: str) -> Path:
    """The solution with one function replaced by a student's own."""
    base = (OPERATORS_FOLDER / "known" / "correct.py").read_text(encoding="utf-8")
    path = tmp_path / "student.py"
    path.write_text(f"{base}\n\n{function}\n", encoding="utf-8")
    return path


def test_the_catalogue_has_a_hand_written_mistake_per_operator():
    assert set(WRITTEN) == set(OPERATORS)


@pytest.mark.parametrize("operator", list(WRITTEN))
def test_each_operator_makes_mutants_with_a_diff_and_a_sentence(operator):
    assignment = load_assignment(OPERATORS_FOLDER)
    question, _ = WRITTEN[operator]
    mutants = [m for m in question_mutants(assignment, assignment.question(question)) if m.operator == operator]
    assert mutants, operator
    for mutant in mutants:
        assert mutant.id.startswith(f"{question}:") and mutant.id.split(":")[2].split("#")[0] == operator
        assert mutant.sentence.startswith(f"Your {question} matches one that ") and mutant.sentence.endswith(".")
        old, new = mutant.diff.split(" → ")
        assert old != new
        changed = dict(mutant.sources)[question]
        ast.parse(changed)  # every mutant is Python


@pytest.mark.parametrize("operator", list(WRITTEN))
def test_a_mistake_written_differently_is_named_by_its_operators_mutant(tmp_path, operator):
    question, function = WRITTEN[operator]
    results = _grade(OPERATORS_FOLDER, _with(tmp_path, function))
    assert {q for q, result in results.items() if result.status != "passed"} == {question}
    first = results[question].feedback.splitlines()[0]
    assignment = load_assignment(OPERATORS_FOLDER)
    named = [m for m in question_mutants(assignment, assignment.question(question)) if m.sentence == first]
    assert [m.operator for m in named] == [operator], results[question].feedback


def test_a_submission_two_mutants_fit_is_named_by_neither(tmp_path):
    """A mask ignored answers as the mutant that ignores the argument and the one whose comparison
    is flipped (the checks never call without a mask): two operators, so no name."""
    assignment = load_assignment(OPERATORS_FOLDER)
    fitting = {
        m.operator
        for m in question_mutants(assignment, assignment.question("masked"))
        if m.operator in ("ignore_argument", "comparison")
    }
    assert fitting == {"ignore_argument", "comparison"}
    results = _grade(OPERATORS_FOLDER, _with(tmp_path, "def masked(x, mask=None):\n    return 2.0 * np.asarray(x)"))
    feedback = results["masked"].feedback
    assert results["masked"].status == "partial"
    assert "matches one" not in feedback and feedback.startswith("1 of 3 checks passed"), feedback


def test_a_match_on_fewer_checks_than_the_minimum_names_nothing(tmp_path):
    """An off-by-one that shows on one check only (k = 6 of 2, 4, 6): below the minimum of two."""
    results = _grade(
        OPERATORS_FOLDER,
        _with(tmp_path, "def head_sum(x, k):\n    return float(np.sum(x[:k])) + (float(x[k]) if k == 6 else 0.0)"),
    )
    assert results["head_sum"].status == "partial"
    assert "matches one" not in results["head_sum"].feedback


def test_an_operator_switched_off_makes_no_mutant_and_an_unknown_one_is_refused(tmp_path):
    folder = tmp_path / "operators"
    shutil.copytree(OPERATORS_FOLDER, folder)
    manifest = folder / "assignment.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace('functions = ["wave"]\n', 'functions = ["wave"]\nmutants = { off = ["neighbour_call"] }\n')
    )
    assignment = load_assignment(folder)
    assert question_mutants(assignment, assignment.question("wave")) == []
    results = _grade(folder, _with(tmp_path, WRITTEN["neighbour_call"][1]))
    assert "matches one" not in results["wave"].feedback
    manifest.write_text(text.replace('functions = ["wave"]\n', 'functions = ["wave"]\nmutants = { off = ["swapp"] }\n'))
    with pytest.raises(AssignmentError, match=r"assignment.toml: question wave: mutants.off: no operator 'swapp'"):
        question_mutants(load_assignment(folder), load_assignment(folder).question("wave"))


def test_an_instructors_own_operator_extends_the_catalogue(monkeypatch):
    """An operator added to the catalogue makes mutants like the built-in ones."""
    import autograder.mutants as mutants

    def doubled(node, context):
        if isinstance(node, ast.Return) and node.value is not None:
            yield ast.Return(ast.BinOp(node.value, ast.Mult(), ast.Constant(2))), "returns twice its answer"

    monkeypatch.setitem(mutants.OPERATORS, "doubled", mutants.Operator("doubled", "the answer doubled", doubled))
    assignment = load_assignment(OPERATORS_FOLDER)
    made = [m for m in question_mutants(assignment, assignment.question("wave")) if m.operator == "doubled"]
    assert [(m.sentence, m.diff) for m in made] == [
        ("Your wave matches one that returns twice its answer.", "return np.sin(t) → return np.sin(t) * 2")
    ]


def test_the_solution_is_the_source_notebooks_definitions_without_its_demonstrations():
    program = solution_program(load_assignment(ROOT / "assignments" / "sequences-and-attention"))
    tree = ast.parse(program)
    assert [type(node).__name__ for node in tree.body][:2] == ["Import", "FunctionDef"]
    assert "plt" not in program and "print(" not in program
    assert {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} >= {"softmax", "positional_encoding"}


def test_an_unlisted_mistake_is_named_by_its_mutant_below_no_known_one(tmp_path):
    """Scores divided by d_k instead of its square root: no known/ file makes it, a mutant does."""
    from .test_known_mistakes import FIXTURES, _written_differently
    from .test_known_mistakes import _grade as grade_shipped

    name = "sequences-and-attention"
    results = grade_shipped(name, _written_differently(name, FIXTURES / name / "unknown_scaled_by_width.py", tmp_path))
    assert results["attention"].feedback.splitlines()[0] == (
        "Your scaled_dot_product_attention matches one that leaves out np.sqrt: d_k where np.sqrt(d_k) belongs."
    )


def test_a_known_mistake_comes_first_and_the_mutant_below_it(tmp_path):
    from .test_known_mistakes import ASSIGNMENTS
    from .test_known_mistakes import _grade as grade_shipped

    results = grade_shipped(
        "sequences-and-attention", ASSIGNMENTS / "sequences-and-attention" / "known" / "missing_sqrt.py"
    )
    lines = results["attention"].feedback.splitlines()
    assert lines[0].startswith("Your scores are not divided by sqrt(d_k)")
    assert lines[1] == "Your scaled_dot_product_attention matches one that does not divide by np.sqrt(d_k)."


@needs_sandbox
def test_verify_lists_the_mutants_a_suite_with_a_gap_passes(tmp_path):
    """The example's hidden test weakened to a check that the answer is a number: verify lists the
    mean that does not divide by the length among the survivors; the full suite kills them all."""
    from autograder.verify import verify_assignment

    folder = tmp_path / "assignments"
    shutil.copytree(ROOT / "course" / "skeleton" / "assignments", folder)
    example = folder / "example"
    full = verify_assignment(load_assignment(example), ["s1"], margin=1).mutation
    assert [(q.question, q.killed_share, q.count("survived")) for q in full] == [("mean", 1.0, 0)]
    test = example / "hidden" / "test_mean.py"
    test.write_text(
        test.read_text().replace(
            "    expect_close(expect_number(student.mean_of(values), what), reference.mean_of(values), what)",
            "    expect_number(student.mean_of(values), what)",
        )
    )
    (question,) = verify_assignment(load_assignment(example), ["s1"], margin=1).mutation
    assert question.killed_share == 0.0 and question.count("survived") == question.judged > 0
    lines = question.lines()
    assert lines[0] == f"mutants mean: 0%, 0 of {question.judged} mutants killed"
    assert (
        "  survives mean_of:1:drop_operand: return float(np.sum(values) / len(values)) → return float(np.sum(values)): "
        "your hidden tests pass a mean_of that does not divide by len(values)"
    ) in lines


def test_accepted_survivors_are_listed_with_their_reason_and_stale_ones_are_said():
    from autograder.mutation import MutantResult, QuestionMutation

    question = QuestionMutation(
        question="q",
        mutants=[
            MutantResult(id="f:1:swap", operator="swap", sentence="s", diff="a → b", status="killed"),
            MutantResult(id="f:2:sign", operator="sign", sentence="s", diff="c → d", status="accepted", reason="why"),
            MutantResult(id="f:3:sign", operator="sign", sentence="s", diff="e → f", status="equivalent"),
        ],
        stale=["f:9:constant"],
    )
    assert question.killed_share == 0.5
    assert question.lines() == [
        "mutants q: 50%, 1 of 2 mutants killed (1 equivalent one set aside)",
        "  accepted f:2:sign: c → d: why",
        "  stale mutants.accepted f:9:constant: no mutant has this id any more",
    ]


def test_an_accepted_entry_may_be_a_pattern_and_an_id_wins_over_it():
    from autograder.mutation import accepted_reason

    accepted = {"f:*": "any change of f keeps the property", "f:2:sign": "a sign is free"}
    assert accepted_reason("f:2:sign", accepted) == "a sign is free"
    assert accepted_reason("f:7:constant#2", accepted) == "any change of f keeps the property"
    assert accepted_reason("g:1:swap", accepted) is None


def test_the_shipped_assignments_accept_only_mutants_they_make_each_with_a_reason():
    for name in ("sequences-and-attention", "attention-not-explanation"):
        assignment = load_assignment(ROOT / "assignments" / name)
        for question in assignment.questions:
            made = {m.id for m in question_mutants(assignment, question)} if not question.manual else set()
            for accepted, reason in question.mutants.accepted.items():
                assert any(fnmatchcase(id_, accepted) for id_ in made), (name, accepted)
                assert len(reason.split()) >= 5, (name, accepted)


@needs_sandbox
@pytest.mark.slow  # about 15 s: every mutant of both assignments through its hidden suite, in the sandbox
def test_the_shipped_assignments_kill_every_mutant_or_accept_it():
    from autograder.mutation import mutation_scores
    from autograder.sandbox.runners import make_runner

    for name in ("sequences-and-attention", "attention-not-explanation"):
        assignment = load_assignment(ROOT / "assignments" / name)
        runner = make_runner(False, tuple(assignment.sandbox_packages))
        found = mutation_scores(assignment, runner, load_reference(assignment, "numpy"), "a secret")
        assert all(not question.problem and not question.stale for question in found), name
        survivors = [m.id for question in found for m in question.mutants if m.status == "survived"]
        assert survivors == [], (name, survivors)
