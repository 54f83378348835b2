"""What a question's feedback says, in the one order every reader sees it.

The feedback of a question (``QuestionResult.feedback``) is plain text that the feedback file, the
Gradescope results, the site's submission page, JupyterLab's panel and ``autograder submit`` all
show; it is written here and only here, and read back into its parts (``parts``) by the faces that
lay it out as a page. Its order:

1. what went wrong in this answer, first: a known mistake's sentence when the answers match one
   (mistakes.py), a function it uses that went wrong (grading.with_dependencies), then
2. how many checks passed and what the failing ones have in common ("the 7 that fail show: wrong
   values in the weights"), then
3. the failing checks, each kind of failure once, what went wrong before the rule the check holds
   ("- Wrong values in ... Checked: Scores are divided by sqrt(d_k)."), the others of its kind
   folded ("and 6 more checks fail the same way").

Nothing here adds a value a check did not already put in its message: a check's message never holds
a hidden input or an expected value (testing.py), so neither does the feedback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from course.wording import plural

if TYPE_CHECKING:  # for the annotations only: importing autograder.reports at run time runs its
    # __init__, whose Gradescope writer imports this module back (a circle Python cannot finish)
    from .reports.model import TestOutcome

CHECK = "- "  # a failing check's line
FOLDED = "  "  # the line under it that counts the others of its kind
# Messages that start with one of these name what they judge up to its first " of " (testing.py's
# helpers: "Wrong values in the weights of a causal mask: ..."): that part is their kind.
_KINDS = ("Wrong values in ", "Found NaN or infinity in ", "Wrong shape for ", "Expected ")


def kind(message: str) -> str:
    """What a failing check's message says went wrong, less what it was checked on: the same for
    every check that failed the same way ("Found NaN or infinity in softmax")."""
    text = message.strip().rstrip(".")
    if text.startswith(_KINDS):
        text = text.split(":")[0].split(" of ")[0].split(", but")[0]
    return re.sub(r"\s*\([^()]*\)", "", text)  # positional_encoding(10, 16) is positional_encoding


def same_way(message: str) -> str:
    """Checks that failed the same way, whatever the sizes in their messages."""
    return re.sub(r"\d+(\.\d+)?", "#", kind(message))


def _lower_first(text: str) -> str:
    """``text`` to follow a colon: its first word lowercased when it is an ordinary word."""
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first[:1].isupper() and first[1:].islower() else text


def checks_feedback(tests: Sequence[TestOutcome]) -> str:
    """A question's checks, some failing: how many passed, what the failing ones have in common,
    then each kind of failure once with the count of the others folded under it."""
    failing = [test for test in tests if test.status != "passed"]
    passed = len(tests) - len(failing)
    groups: dict[str, list[TestOutcome]] = {}
    for test in failing:
        groups.setdefault(same_way(test.message or test.description), []).append(test)
    summary = f"{passed} of {plural(len(tests), 'check')} passed"
    kinds = {kind(test.message or test.description) for test in failing}
    if len(kinds) == 1:
        (common,) = kinds
        who = "the one that fails shows" if len(failing) == 1 else f"the {len(failing)} that fail show"
        summary += f"; {who}: {_lower_first(common.removeprefix('Found '))}"
    lines = [f"{summary}."]
    for same in groups.values():
        head = same[0]
        lines.append(f"{CHECK}{head.message} Checked: {head.description}".strip())
        if len(same) > 1:
            others = len(same) - 1
            lines.append(f"{FOLDED}And {plural(others, 'more check')} fail{'' if others > 1 else 's'} the same way.")
    return "\n".join(lines)


def lead_with(sentence: str, feedback: str) -> str:
    """``feedback`` opened by ``sentence`` (what went wrong, before everything else)."""
    return f"{sentence}\n{feedback}" if feedback else sentence


def parts(feedback: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``feedback`` read back for a page: its opening paragraphs, then each failing check with the
    line folded under it (empty when none)."""
    lead: list[str] = []
    checks: list[tuple[str, str]] = []
    for line in feedback.splitlines():
        if line.startswith(CHECK):
            checks.append((line[len(CHECK) :], ""))
        elif line.startswith(FOLDED) and checks and line.strip():
            text, folded = checks[-1]
            checks[-1] = (text, f"{folded} {line.strip()}".strip())
        elif line.strip():
            lead.append(line.strip())
    return lead, checks
