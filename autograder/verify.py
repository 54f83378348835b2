"""Is the hidden suite fair? Every known submission graded under fresh secrets, its verdicts checked.

An assignment's ``known/`` folder holds submissions whose verdict per question the instructor knows
(correct ones in several styles, typical mistakes), listed in ``known/verdicts.toml``. Inputs are
drawn per submission from the grader's secret, so a suite can be right under one secret and wrong
under another: a test that checks two things at once, a draw that happens to hide a mistake, a
float32 answer whose rounding sits at the tolerance's edge. ``verify_known`` grades every known
submission in the sandbox under each of several secrets (fresh ones, or ones to replay) and lists
every verdict that differs from the expected one, with the secret that produced it. Submissions
expected to pass everything are graded again with every tolerance divided by ``margin``: one that
then fails passes only by a hair, and some secret's draw will push it over.
"""

from __future__ import annotations

import secrets as secret_source
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Literal

from pydantic import BaseModel

from course.wording import plural

from .assignment import Assignment
from .authoring.origin import master_of, master_place
from .grading import grade_submission
from .known import PASSING, FeedbackRule, known_feedback, known_sentences, known_verdicts
from .mutation import QuestionMutation, mutation_scores
from .own_values import known_values
from .reports.model import Report, TestFault
from .sandbox.limits import Limits
from .sandbox.runners import Runner
from .submissions import find_submissions
from .testing import stricter


class Disagreement(BaseModel):
    file: str
    question: str
    expected: str
    got: str
    secret: str
    feedback: str
    margin: float = 1.0  # > 1: graded with every tolerance divided by this
    # feedback: a broken feedback rule; mistake: a known mistake's sentence not the first thing said
    kind: Literal["verdict", "feedback", "mistake"] = "verdict"


class Alike(BaseModel):
    """Two known mistakes, with different sentences, whose answers a question's failing checks could
    not tell apart under some secret: a student making either is told neither."""

    file: str
    other: str
    question: str
    secret: str


class Verification(BaseModel):
    assignment: str
    files: list[str]
    secrets: list[str]
    margin: float
    gradings: int
    disagreements: list[Disagreement]
    unlisted: list[str] = []  # files in known/ that verdicts.toml does not list: not graded
    alike: list[Alike] = []
    mutation: list[QuestionMutation] = []  # each question's mutants, judged by its hidden suite (mutation.py)
    # The hidden tests that failed by their own code (each once), and the public tests the solution
    # fails (one line each, naming the master notebook's cell): the assignment's faults, not a student's.
    test_faults: list[TestFault] = []
    solution_failures: list[str] = []
    # An assignment with values drawn per student: each question a correct known version fails when
    # its values are those drawn for a few students (a range the solution or the tests cannot take).
    drawn_failures: list[str] = []
    # Where each known file was written (the master notebook's cell, when assign wrote it), and what
    # holds the expected verdicts: known/verdicts.toml, or the master notebook it is written from.
    places: dict[str, str] = {}
    verdicts_from: str = "known/verdicts.toml"

    def fault_lines(self) -> list[str]:
        """The assignment's own faults, as ``verify`` prints them: each public test the solution
        fails, then each hidden test that failed by its own code, with its traceback."""
        lines = [f"FAIL the solution: {failure}" for failure in self.solution_failures]
        lines += [f"FAIL {failure}" for failure in self.drawn_failures]
        for fault in self.test_faults:
            lines.append(
                f"FAIL the hidden test {fault.test} (question {fault.question}) fails by its own code, whatever the submission "
                "(its question is not graded for anyone until it is fixed):"
            )
            lines += [f"     {line}" for line in fault.traceback.splitlines()]
        return lines

    def fault_summary(self) -> list[str]:
        """How many of the assignment's own faults ``verify`` found, one line per kind."""
        lines = []
        if self.solution_failures:
            failing = plural(len(self.solution_failures), "public test")
            lines.append(f"the solution fails {failing}: fix the solution or the test")
        if self.drawn_failures:
            failing = plural(len(self.drawn_failures), "question")
            lines.append(f"{failing} fail with values drawn for students: fix the solution, the tests or [parameters]")
        if self.test_faults:
            one = len(self.test_faults) == 1
            tests = plural(len(self.test_faults), "hidden test")
            lines.append(f"{tests} {'fails' if one else 'fail'} by {'its' if one else 'their'} own code")
        return lines

    @property
    def holds(self) -> bool:
        """Every verdict holds, and the assignment's own tests and solution are sound."""
        return not (self.disagreements or self.test_faults or self.solution_failures or self.drawn_failures)

    def findings(self, file: str) -> list[Finding]:
        """``file``'s disagreements, one per kind of difference (question, expected, got, margin),
        in the order first seen, with how many secrets showed it and the first that did."""
        groups: dict[tuple[str, str, str, float], list[Disagreement]] = {}
        for d in self.disagreements:
            if d.file == file:
                groups.setdefault((d.question, d.expected, d.got, d.margin), []).append(d)
        found = []
        for (question, expected, got, margin), same in groups.items():
            checks = [line[2:] for line in same[0].feedback.splitlines() if line.startswith("- ")]
            found.append(
                Finding(
                    question=question,
                    expected=expected,
                    got=got,
                    margin=margin,
                    secrets=len(same),
                    first_secret=same[0].secret,
                    first_check=checks[0] if checks else same[0].feedback,
                )
            )
        return found

    @property
    def verdicts_wrong(self) -> int:
        """Verdicts that differ, each once however many secrets showed it."""
        return len({(d.file, d.question, d.expected, d.margin) for d in self.disagreements if d.kind == "verdict"})

    @property
    def rules_broken(self) -> int:
        """Feedback rules broken, each once however many secrets showed it."""
        return len({(d.file, d.question, d.expected, d.margin) for d in self.disagreements if d.kind == "feedback"})

    @property
    def mistakes_unnamed(self) -> int:
        return sum(d.kind == "mistake" for d in self.disagreements)

    def alike_pairs(self) -> dict[tuple[str, str, str], int]:
        """Each pair of known mistakes not told apart on a question, with how many secrets showed it."""
        secrets: dict[tuple[str, str, str], set[str]] = {}
        for alike in self.alike:
            first, second = sorted((alike.file, alike.other))
            secrets.setdefault((first, second, alike.question), set()).add(alike.secret)
        return {pair: len(shown) for pair, shown in secrets.items()}


class Finding(BaseModel):
    """One kind of difference of a known submission, under however many secrets showed it."""

    question: str
    expected: str
    got: str
    margin: float  # > 1: with every tolerance divided by this
    secrets: int  # how many of the secrets showed it
    first_secret: str  # the first that did (to replay with --secret)
    first_check: str  # the first failed check of its feedback, else the whole feedback


def gradings_needed(verdicts: dict[str, dict[str, str]], secrets: int, margin: float) -> int:
    """How many gradings ``verify_known`` makes (for a progress bar)."""
    return secrets * sum(len(_margins(expected, margin)) for expected in verdicts.values())


def _margins(expected: dict[str, str], margin: float) -> tuple[float, ...]:
    """Tolerances at 1, and divided by ``margin`` for a submission expected to pass everything."""
    return (1.0, margin) if margin > 1 and set(expected.values()) <= PASSING else (1.0,)


def fresh_secrets(count: int) -> list[str]:
    return [secret_source.token_hex(32) for _ in range(count)]


def verify_assignment(
    assignment: Assignment,
    secrets: list[str],
    fresh: int = 10,
    margin: float = 4.0,
    reference: str = "auto",
    unsafe_no_sandbox: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_grading: Callable[[str], None] | None = None,
    mutants: bool = True,
) -> Verification:
    """``autograder verify``: the sandbox started, the known verdicts read, every known submission
    graded (``verify_known``) under ``secrets``, or ``fresh`` new ones when none is given, against
    the ``reference`` chosen as ``grade`` chooses it. ``on_start`` hears how many gradings it makes.
    With ``mutants``, each question's mutants are judged by its hidden suite too (mutation.py)."""
    from .batch import GradeOptions, prepare_sandbox
    from .references import load_reference, resolve_reference
    from .sandbox.runners import make_runner

    options = GradeOptions(reference=reference, unsafe_no_sandbox=unsafe_no_sandbox)
    prepare_sandbox(assignment, options)
    secrets = secrets or fresh_secrets(fresh)
    verdicts = known_verdicts(assignment)
    if on_start:
        on_start(gradings_needed(verdicts, len(secrets), margin))
    runner = make_runner(unsafe_no_sandbox, tuple(assignment.sandbox_packages))
    module = load_reference(assignment, resolve_reference(reference, assignment))
    verification = verify_known(
        assignment, verdicts, secrets, runner, module, options.limits(assignment), margin, on_grading=on_grading
    )
    verification.solution_failures = _solution_failures(assignment, runner)
    limits = options.limits(assignment)
    verification.drawn_failures = drawn_failures(assignment, verdicts, runner, module, secrets[0], limits)
    if mutants:  # the tests tested: each question's mutants under the first secret
        verification.mutation = mutation_scores(assignment, runner, module, secrets[0], options.limits(assignment))
    return verification


DRAWS = 4  # students whose values a correct known version is graded with


def drawn_failures(
    assignment: Assignment,
    verdicts: dict[str, dict[str, str]],
    runner: Runner,
    reference: ModuleType,
    secret: str,
    limits: Limits | None = None,
) -> list[str]:
    """A notebook of one's own, checked as students will have it: the first known version expected
    to pass everything (known/correct.py for a master's), its parameters lines given the values
    drawn for each of ``DRAWS`` students, graded as that student; one line for each question that
    does not pass (the values drawn included, so the range can be fixed). None without parameters."""
    import hashlib
    import tempfile

    from .own_values import student_values, value_list, with_values
    from .submissions import Submission

    passing = [file for file, expected in verdicts.items() if set(expected.values()) <= PASSING]
    correct = [file for file in passing if file.endswith(".py")]
    if not assignment.parameters or not correct:
        return []
    code = (assignment.folder / "known" / correct[0]).read_text(encoding="utf-8")
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for number in range(1, DRAWS + 1):
            student = f"verify-{number}"
            values = student_values(assignment, student)
            path = Path(scratch) / f"{student}.py"
            path.write_text(with_values(code, values), encoding="utf-8")
            sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
            submission = Submission(student=student, path=path, sha256=sha256)
            report = grade_submission(assignment, submission, runner, reference, limits, secret)
            for question in report.questions:
                if question.status not in PASSING:
                    checks = [line[2:] for line in question.feedback.splitlines() if line.startswith("- ")]
                    failures.append(
                        f"{correct[0]} with the values drawn for {student} ({value_list(values)}): {question.id} "
                        f"{question.status}: {(checks[0] if checks else question.feedback)[:200]}"
                    )
    return failures


def _solution_failures(assignment: Assignment, runner: Runner) -> list[str]:
    """Each public test of the source notebook (solutions in place) that fails, run in ``runner``:
    a solution that fails one passes every comparison with itself, and fails every correct student."""
    from .authoring.master import read_master
    from .authoring.solution import solution_failures
    from .errors import AssignmentError

    master_path = master_of(assignment.folder)
    try:
        master = read_master(master_path) if master_path is not None and master_path.is_file() else None
    except AssignmentError:
        master = None  # named by the source notebook's own cells instead
    results = solution_failures(assignment.notebook_path, runner, master)
    return [result.message for result in results if not result.passed]


def verify_known(
    assignment: Assignment,
    verdicts: dict[str, dict[str, str]],
    secrets: list[str],
    runner: Runner,
    reference: ModuleType,
    limits: Limits | None = None,
    margin: float = 4.0,
    on_grading: Callable[[str], None] | None = None,
    feedback: dict[str, dict[str, FeedbackRule]] | None = None,
) -> Verification:
    """Grade every known submission of ``verdicts`` (``known_verdicts``) under each secret (and, for
    those expected to pass, with every tolerance divided by ``margin``); return every verdict that
    differs from the expected one, and every feedback that breaks its rule (``feedback``, by default
    the assignment's ``known_feedback``)."""
    known = assignment.folder / "known"
    feedback = known_feedback(assignment) if feedback is None else feedback
    sentences = known_sentences(assignment)
    values = known_values(assignment)  # the known versions are written with the template's values
    gradings = 0
    disagreements: list[Disagreement] = []
    alike: list[Alike] = []
    faults: dict[tuple[str, str, str], TestFault] = {}
    for file, expected in verdicts.items():
        (submission,) = find_submissions([known / file]).submissions
        for secret in secrets:
            for factor in _margins(expected, margin):
                seen: dict[str, list[str]] = {}
                with stricter(factor):
                    report = grade_submission(
                        assignment, submission, runner, reference, limits, secret, mistakes_seen=seen, values=values
                    )
                gradings += 1
                faults |= {(f.question, f.test, f.error): f for f in report.test_faults}
                disagreements += _differences(file, expected, report, secret, factor)
                disagreements += _broken_rules(file, feedback.get(file, {}), report, secret, factor)
                if file in sentences:
                    disagreements += _unnamed(file, sentences, expected, report, secret)
                    alike += [
                        Alike(file=file, other=other, question=question, secret=secret)
                        for question, files in seen.items()
                        for other in files
                        if other != file and file in files and sentences.get(other) != sentences[file]
                    ]
                if on_grading:
                    on_grading(file)
    unlisted = sorted(
        path.name
        for path in known.iterdir()
        if path.suffix in {".py", ".ipynb"} and path.is_file() and path.name not in verdicts
    )
    return Verification(
        assignment=assignment.name,
        files=list(verdicts),
        secrets=secrets,
        margin=margin,
        gradings=gradings,
        disagreements=disagreements,
        unlisted=unlisted,
        alike=alike,
        test_faults=list(faults.values()),
        places=_places(assignment, verdicts),
        verdicts_from=f"the master notebook {master}"
        if (master := master_of(assignment.folder))
        else "known/verdicts.toml",
    )


def _places(assignment: Assignment, verdicts: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each known file's place in the master notebook it was written from (the solution for correct.py)."""
    master = master_of(assignment.folder)
    if master is None:
        return {}
    places = {file: master_place(assignment.folder / "known" / file) for file in verdicts}
    named = {file: place for file, place in places.items() if place is not None}
    if "correct.py" in verdicts:
        named.setdefault("correct.py", f"{master}: the solution (its ### BEGIN SOLUTION cells)")
    return named


def _unnamed(
    file: str, sentences: dict[str, str], expected: dict[str, str], report: Report, secret: str
) -> list[Disagreement]:
    """Each question a known mistake gets wrong whose feedback does not open with its sentence."""
    sentence = sentences[file]
    found = []
    for result in report.questions:
        if expected.get(result.id, "passed") in PASSING or not result.tests or result.feedback.startswith(sentence):
            continue
        found.append(
            Disagreement(
                file=file,
                question=result.id,
                expected="its mistake named first",
                got="another named" if result.feedback.split("\n")[0] in sentences.values() else "none named",
                secret=secret,
                feedback=result.feedback,
                kind="mistake",
            )
        )
    return found


def _differences(file: str, expected: dict[str, str], report: Report, secret: str, margin: float) -> list[Disagreement]:
    got = {question.id: question for question in report.questions}
    found = []
    for question, verdict in expected.items():
        result = got.get(question)
        status = result.status if result else "not graded"
        if status != verdict:
            feedback = result.feedback if result else "; ".join(report.errors)
            found.append(
                Disagreement(
                    file=file,
                    question=question,
                    expected=verdict,
                    got=status,
                    secret=secret,
                    feedback=feedback,
                    margin=margin,
                )
            )
    return found


def _broken_rules(
    file: str, rules: dict[str, FeedbackRule], report: Report, secret: str, margin: float
) -> list[Disagreement]:
    """Each phrase a question's feedback should say and does not, or should never say and does."""
    got = {question.id: question.feedback for question in report.questions}
    found = []
    for question, rule in rules.items():
        feedback = got.get(question, "")
        problems = [
            (f'feedback saying "{phrase}"', "feedback without it") for phrase in rule.says if phrase not in feedback
        ]
        problems += [
            (f'feedback never saying "{phrase}"', "feedback saying it") for phrase in rule.never if phrase in feedback
        ]
        found += [
            Disagreement(
                file=file,
                question=question,
                expected=expected,
                got=wrong,
                secret=secret,
                feedback=feedback,
                margin=margin,
                kind="feedback",
            )
            for expected, wrong in problems
        ]
    return found
