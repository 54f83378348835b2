"""An assignment's ``known/verdicts.toml``: each known submission's expected verdict per question,
its feedback rules and, for a known mistake, the sentence that names it.

``["file.py"]`` then ``question = "verdict"`` for each question; beside them, ``mistake = "..."``
(the sentence a student making that mistake reads first: mistakes.py); and ``["file.py".feedback]``
then ``question = { says = ["..."], never = ["..."] }`` (phrases the question's feedback must hold,
and must never hold). Read by ``autograder verify`` (verify.py) and by the grader (mistakes.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from .assignment import Assignment
from .errors import AssignmentError
from .reports.model import Status

VERDICTS_FILE = "verdicts.toml"
FEEDBACK_KEY = "feedback"  # ["file.py".feedback]: that file's feedback rules, beside its verdicts
MISTAKE_KEY = "mistake"  # ["file.py"] mistake = "...": the sentence naming that file's mistake
PASSING = {"passed", "manual"}  # a submission expected to earn everything it can automatically


class FeedbackRule(BaseModel):
    """What a known submission's feedback on one question must say, and must never say
    (``["file.py".feedback]`` in verdicts.toml): feedback held to the cause, not only the verdict."""

    model_config = {"extra": "forbid"}
    says: list[str] = []
    never: list[str] = []


def known_verdicts(assignment: Assignment) -> dict[str, dict[str, str]]:
    """``known/verdicts.toml``: each known file's expected verdict per question, checked against the
    assignment (its files exist, its questions are the assignment's, its verdicts are verdicts)."""
    return _known(assignment)[0]


def known_feedback(assignment: Assignment) -> dict[str, dict[str, FeedbackRule]]:
    """``known/verdicts.toml``'s feedback rules: for a file, ``["file.py".feedback]`` then
    ``question = { says = ["..."], never = ["..."] }``."""
    return _known(assignment)[1]


def known_sentences(assignment: Assignment) -> dict[str, str]:
    """``known/verdicts.toml``'s known mistakes: for a file, ``mistake = "sentence"`` beside its
    verdicts, the sentence that names its mistake (see mistakes.py)."""
    return _known(assignment)[2]


def _known(
    assignment: Assignment,
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, FeedbackRule]], dict[str, str]]:
    known = assignment.folder / "known"
    path = known / VERDICTS_FILE
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AssignmentError(
            f"{path}: not found; list each known submission's expected verdict per question there "
            '(["correct.py"] then mean = "passed")'
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AssignmentError(f"{path}: {exc}") from None
    questions = {question.id for question in assignment.questions}
    statuses = set(get_args(Status))
    verdicts: dict[str, dict[str, str]] = {}
    feedback: dict[str, dict[str, FeedbackRule]] = {}
    sentences: dict[str, str] = {}
    for file, expected in table.items():
        if not isinstance(expected, dict):
            raise AssignmentError(f'{path}: [{file!r}] should be a table of question = "verdict"')
        expected = dict(expected)
        rules = expected.pop(FEEDBACK_KEY, {})
        feedback[file] = _feedback_rules(path, file, rules, questions)
        if MISTAKE_KEY in expected:
            sentences[file] = _sentence(path, file, expected.pop(MISTAKE_KEY))
        if not expected:
            raise AssignmentError(f"{path}: [{file!r}] lists no verdict")
        if not (known / file).is_file() or "/" in file or file.startswith("."):
            raise AssignmentError(f"{path}: [{file!r}]: no such file in {known}")
        for question, verdict in expected.items():
            if question not in questions:
                raise AssignmentError(
                    f"{path}: [{file!r}] {question}: no such question (its questions: {', '.join(sorted(questions))})"
                )
            if verdict not in statuses:
                raise AssignmentError(
                    f"{path}: [{file!r}] {question} = {verdict!r} is not a verdict (one of "
                    f"{', '.join(sorted(statuses))})"
                )
        verdicts[file] = {str(question): str(verdict) for question, verdict in expected.items()}
    if not verdicts:
        raise AssignmentError(f"{path}: lists no known submission")
    return verdicts, feedback, sentences


def _sentence(path: Path, file: str, sentence: Any) -> str:
    if not isinstance(sentence, str) or not sentence.strip() or "\n" in sentence.strip():
        raise AssignmentError(
            f'{path}: [{file!r}] {MISTAKE_KEY}: should be one sentence naming the mistake (mistake = "...")'
        )
    return " ".join(sentence.split())


def _feedback_rules(path: Path, file: str, rules: Any, questions: set[str]) -> dict[str, FeedbackRule]:
    where = f"{path}: [{file!r}.{FEEDBACK_KEY}]"
    if not isinstance(rules, dict):
        raise AssignmentError(f"{where} should be a table of question = {{ says = [...], never = [...] }}")
    found = {}
    for question, rule in rules.items():
        if question not in questions:
            raise AssignmentError(
                f"{where} {question}: no such question (its questions: {', '.join(sorted(questions))})"
            )
        try:
            found[question] = FeedbackRule.model_validate(rule)
        except ValidationError as exc:
            problem = exc.errors()[0]
            raise AssignmentError(
                f"{where} {question}: {'.'.join(map(str, problem['loc'])) or 'the rule'}: {problem['msg']} "
                '(a rule is { says = ["..."], never = ["..."] })'
            ) from None
    return found
