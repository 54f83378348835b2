"""Item-writing checks: the habits of multiple-choice questions that let a test-wise student find the
answer without knowing it. They are warnings for ``course validate``, never errors: a question can
have a good reason for any of them.

- the correct option markedly longer than every distractor (at least 1.3 times the longest, and 15
  characters more): the longest option is the safe guess;
- "all of the above" or "none of the above" as an option;
- the correct option alone repeating a word of the stem (a "clang" association);
- a negative stem ("not", "except", "never", "least") without emphasis.
"""

from __future__ import annotations

import re

from .errors import Problem
from .models import Check, Lesson
from .wording import plural

LONGER_RATIO, LONGER_BY = 1.3, 15
ABOVE = re.compile(r"\b(all|none|both|neither) of (the )?(above|these)\b", re.IGNORECASE)
NEGATIVE = re.compile(r"\b(not|except|never|least|false|incorrect)\b", re.IGNORECASE)
WORD = re.compile(r"[A-Za-z][A-Za-z'-]{4,}")
COMMON = {
    "which",
    "there",
    "their",
    "these",
    "those",
    "about",
    "would",
    "could",
    "should",
    "every",
    "other",
    "where",
    "while",
    "after",
    "before",
    "because",
    "being",
    "what",
    "model",
    "makes",
    "using",
    "value",
    "values",
    "position",
    "positions",
}


def item_writing_warnings(file: str, lesson: Lesson) -> list[Problem]:
    problems = []
    for number, check in enumerate(lesson.checks, start=1):
        where = f"check {number}"
        problems += [Problem(file=file, where=where, what=what, severity="warning") for what in warnings_of(check)]
    return problems


def warnings_of(check: Check) -> list[str]:
    texts = [option.text.plain().strip() for option in check.options]
    key = next(text for text, option in zip(texts, check.options, strict=True) if option.correct)
    distractors = [text for text, option in zip(texts, check.options, strict=True) if not option.correct]
    found = []
    longest = max(len(text) for text in distractors)
    if len(key) >= LONGER_RATIO * longest and len(key) - longest >= LONGER_BY:
        found.append(
            f"the correct option is much longer than every other ({plural(len(key), 'character')} against at most "
            f"{longest}): a test-wise student picks the longest; shorten it or lengthen the distractors"
        )
    for text in texts:
        if ABOVE.search(text):
            found.append(f"option {text[:40]!r} refers to the others ('of the above'); write an option of its own")
    stem = check.stem.plain()
    stem_words = _words(stem)
    clang = (_words(key) & stem_words) - set().union(*(_words(text) for text in distractors))
    if clang:
        found.append(
            f"only the correct option repeats the stem's word{'s' if len(clang) > 1 else ''} "
            f"{', '.join(sorted(clang))}: a student can match it without knowing the answer"
        )
    negative = NEGATIVE.search(stem)
    if negative and not _emphasised(check, negative.group(0)):
        found.append(f"a negative stem ({negative.group(0)!r}) without emphasis: write it in bold or capitals")
    return found


def _words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text)} - COMMON


def _emphasised(check: Check, word: str) -> bool:
    if word.isupper() and len(word) > 1:
        return True
    return any((run.bold or run.italic) and word.lower() in run.text.lower() for run in check.stem.root)
