"""Answer groups for hand grading: a question's answers gathered so that a grader marks a group once.

First the answers that are the same once case, spacing, punctuation and contractions are set aside
("don't" is "do not"); then, among written answers, the near-duplicates (a typo, sentences in another
order) whose similarity (``similarity``) reaches ``threshold`` and whose words differ only by
misspellings (``Words.differ_by_typos``): two answers whose differing words are not misspellings of
each other ("the seeds stay the same" against "the seeds changed"), or are two words either the
rubric, the question or the class uses ("casual" against "causal", "not" against "no"), are never
merged, however alike their letters. Each group of exact duplicates, largest first, joins the group
whose representative it is most like, if both hold: a group is never chained through a string of
answers each a little further from where it began. Code answers group
by their graded outcome (the failing checks, the named mistake) and by their code with comments and
layout set aside, and never by likeness: two programs a character apart may do different things.

Why rapidfuzz's word-sorted edit similarity and not TF-IDF cosine or MinHash: measured on the
benchmark's class (benchmarks/answer_groups.py), TF-IDF weighs a typo's letters as the rarest, so
most telling, in the class, and a bag of n-grams scores an answer one sentence short (one rubric
item, one point less) as alike as a misspelt copy; the edit similarity keeps every misspelt,
reworded or reordered copy above every pair of distinct answers. rapidfuzz (MIT, compiled, already
installed with nbgrader) compares a class's answers in milliseconds. The ``threshold`` is the
grader's to move; the default is the one the benchmark chose (docs/explanation/answer-groups.md).

No database write and no web here: ``assignment_answers`` reads a question's answers, and
``group_answers`` gathers any answers (an exam's open answers too). An empty answer (blank, or the
notebook's starter text: gradebook.marking.empty_answers) is never grouped: it has nothing to mark."""

from __future__ import annotations

import difflib
import io
import re
import tokenize
import unicodedata
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from gradebook.errors import BadEdit

if TYPE_CHECKING:
    from autograder.assignment import Assignment as AssignmentSpec
    from autograder.assignment import Question
    from gradebook.book import Gradebook

DEFAULT_THRESHOLD = 0.9  # benchmarks/answer_groups.py: the lowest with no wrong mark is 0.88; one step above it
_NOT_WORD = re.compile(r"[^\w]+")
_CONTRACTIONS = [  # the longer forms first: "can't" before "n't"
    (re.compile(r"\bcan't\b"), "cannot"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"\b(it|that|there|here|what|who|he|she|where)'s\b"), r"\1 is"),
    (re.compile(r"\blet's\b"), "let us"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'m\b"), " am"),
    (re.compile(r"'d\b"), " would"),
    (re.compile(r"'s\b"), "s"),  # the possessive: "the model's" is "the models", one word
]
# Words an answer may have that its group's representative has not (and the other way), and still be
# the same answer: articles, and the fillers students put before a sentence ("I think", "basically").
FILLERS = frozenset({"a", "an", "the", "i", "think", "basically", "well", "so", "just", "actually"})
# Two different words of these are never a misspelling of each other: "not" against "no".
NEGATIONS = frozenset({"no", "not", "nor", "never", "none", "nothing", "cannot", "without", "neither", "nobody"})
KNOWN_FROM = 3  # a word in this many of a class's answers is a word, not a misspelling


@dataclass(frozen=True)
class Answer:
    """One answer to group: ``key`` names it for the caller (a student id); ``text`` None is an
    answer with no text to compare (on a paper sheet): a group of its own. ``outcome`` marks a code
    answer: its graded outcome (failing checks, named mistake), the same for all of its group."""

    key: str
    text: str | None
    outcome: tuple[str, ...] | None = None


@dataclass
class AnswerGroup:
    """The answers marked at once: ``members`` in their given order, the representative first."""

    representative: str
    members: list[str] = field(default_factory=list)
    exact: bool = True  # every member is the representative's text, once normalised

    def __len__(self) -> int:
        return len(self.members)


def normalised(text: str) -> str:
    """The text with case, spacing, punctuation and contractions set aside (Unicode's compatible
    forms alike): "It's NOT random!" is "it is not random"."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    for contraction, expanded in _CONTRACTIONS:
        text = contraction.sub(expanded, text)
    return " ".join(_NOT_WORD.sub(" ", text).split())


def _typo_budget(first: str, second: str) -> int:
    """How many edits (a letter dropped, added, changed, or two swapped) a misspelling may cost: none
    in a word of three letters or fewer (but two letters swapped), one up to seven, two beyond."""
    shorter = min(len(first), len(second))
    if shorter <= 3:
        return 1 if sorted(first) == sorted(second) else 0
    return 1 if shorter <= 7 else 2


@dataclass(frozen=True)
class Words:
    """What tells a misspelling from another word in one question's answers: ``known``, the words
    of the rubric and the question, and those in ``KNOWN_FROM`` or more of the class's answers."""

    known: frozenset[str] = frozenset()

    @classmethod
    def of(cls, texts: Iterable[str], vocabulary: Iterable[str] = ()) -> Words:
        """The known words of a class's normalised answers ``texts`` and of ``vocabulary`` (the
        rubric's and the question's text, as written)."""
        counts: dict[str, int] = {}
        for text in texts:
            for word in set(text.split()):
                counts[word] = counts.get(word, 0) + 1
        given = {word for text in vocabulary for word in normalised(text).split()}
        return cls(frozenset({w for w, n in counts.items() if n >= KNOWN_FROM} | (given - FILLERS)))

    def misspelt(self, first: str, second: str) -> bool:
        """Whether two different words can be one word misspelt: close by their edit distance for
        their length, no digit changed, not two negations, and not both words the class knows."""
        if any(c.isdigit() for c in first + second):
            return False
        if first in NEGATIONS and second in NEGATIONS:
            return False
        if first in self.known and second in self.known:
            return False
        return OSA.distance(first, second, score_cutoff=2) <= _typo_budget(first, second)

    def differ_by_typos(self, first: str, second: str) -> bool:
        """Whether two answers (as written) say the same words in the same order, but for
        misspellings, fillers, and their sentences' order: their words aligned (difflib), each word
        of one replaced by a misspelling of it in the other, none added or left out but an article
        or a filler; first as a whole, then sentence by sentence, each with its likeliest match."""
        if self._aligned(normalised(first).split(), normalised(second).split()):
            return True
        ones, others = sentences(first), sentences(second)
        if len(ones) != len(others) or len(ones) < 2:
            return False
        left = list(others)
        for sentence in ones:
            match = max(left, key=lambda other: fuzz.ratio(" ".join(sentence), " ".join(other)))
            if not self._aligned(sentence, match):
                return False
            left.remove(match)
        return True

    def _aligned(self, first: list[str], second: list[str]) -> bool:
        blocks = difflib.SequenceMatcher(None, first, second, autojunk=False).get_opcodes()
        for kind, i1, i2, j1, j2 in blocks:
            if kind == "equal":
                continue
            ones = [word for word in first[i1:i2] if word not in FILLERS]
            others = [word for word in second[j1:j2] if word not in FILLERS]
            if len(ones) != len(others) or not all(map(self.misspelt, ones, others)):
                return False
        return True


def sentences(text: str) -> list[list[str]]:
    """An answer's sentences (or clauses after a semicolon or a colon), each as its normalised words."""
    return [words for part in re.split(r"[.;:!?\n]+", text) if (words := normalised(part).split())]


def _bag(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts


def differing_words(representative: str, text: str) -> list[tuple[str, bool]]:
    """``text`` as written, cut into its words and what lies between them, each piece with whether
    it is a word the ``representative`` has not (as many times): what a grader reads highlighted in
    a group's member."""
    left = _bag(normalised(representative))
    pieces: list[tuple[str, bool]] = []
    for piece in re.split(r"(\w[\w'\u2019]*)", text):
        if not piece:
            continue
        words = normalised(piece).split() if re.match(r"\w", piece) else []
        differs = False
        for word in words:
            if left.get(word, 0) > 0:
                left[word] -= 1
            else:
                differs = True
        pieces.append((piece, differs))
    return pieces


def normalised_code(code: str) -> str:
    """Python code as its tokens, without comments or layout (the text itself where it does not
    tokenize: a half-written answer)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        kept = [
            token.string
            for token in tokens
            if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER) and token.string.strip()
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return " ".join(code.split())
    return " ".join(kept)


def similarity(first: str, second: str) -> float:
    """How alike two normalised answers are, 0 to 1: the Indel similarity of their words in sorted
    order (rapidfuzz's token_sort_ratio), so a typo or a swapped word costs a few letters, sentences
    in another order nothing, and a sentence more or less its share of the answer."""
    return fuzz.token_sort_ratio(first, second) / 100


def group_answers(
    answers: Iterable[Answer],
    threshold: float = DEFAULT_THRESHOLD,
    vocabulary: Iterable[str] = (),
    apart: Collection[str] = frozenset(),
) -> list[AnswerGroup]:
    """The answers in groups, largest first (then in the answers' order); ``threshold`` in 0..1 (1:
    identical answers only, once normalised); ``vocabulary``: the rubric's and the question's texts,
    whose words are never taken for misspellings; ``apart``: the keys of answers a grader split out,
    each a group of its own."""
    if not 0 <= threshold <= 1:
        raise BadEdit(f"a similarity threshold is between 0 and 1, not {threshold:g}")
    exact: dict[tuple, list[Answer]] = {}
    for number, answer in enumerate(answers):
        if answer.text is None or answer.key in apart:
            key: tuple = ("none", number)
        elif answer.outcome is not None:
            key = ("code", answer.outcome, normalised_code(answer.text))
        else:
            key = ("text", normalised(answer.text))
        exact.setdefault(key, []).append(answer)
    by_size = sorted(exact, key=lambda k: -len(exact[k]))  # stable: ties in the answers' order
    compared = {key for key in by_size if key[0] == "text" and threshold < 1}
    words = Words.of((key[1] for key in exact for _ in exact[key] if key[0] == "text"), vocabulary)
    written = {key: exact[key][0].text or "" for key in compared}  # as the first of them wrote it
    leaders: list[tuple] = []  # the written groups' representatives, largest first
    joined: dict[tuple, list[tuple]] = {}
    for key in by_size:
        best, best_score = None, threshold
        if key in compared:
            for leader in leaders:
                score = similarity(key[1], leader[1])
                if score >= best_score and words.differ_by_typos(written[key], written[leader]):
                    best, best_score = leader, score
        if best is None:
            joined[key] = [key]
            if key in compared:
                leaders.append(key)
        else:
            joined[best].append(key)
    first = {key: n for n, key in enumerate(exact)}  # where each exact group's first answer came
    clusters = sorted(
        joined.values(), key=lambda keys: (-sum(len(exact[k]) for k in keys), min(first[k] for k in keys))
    )
    return [
        AnswerGroup(
            representative=exact[keys[0]][0].key,
            members=[answer.key for key in keys for answer in exact[key]],
            exact=len(keys) == 1,
        )
        for keys in clusters
    ]


def outcome_of(tests: list[dict]) -> tuple[str, ...]:
    """A hand-graded code answer's graded outcome from its result's checks: the checks not passed,
    and the mistake a check named, if any."""
    failed = sorted(str(test.get("name", "")) for test in tests if test.get("status") != "passed")
    mistakes = sorted({str(test["mistake"]) for test in tests if test.get("mistake")})
    return (*failed, *(f"mistake: {name}" for name in mistakes))


@dataclass(frozen=True)
class MarkedAnswer:
    """A question's answer on a student's latest submission."""

    submission_id: int
    student_id: str
    answer: Answer
    empty: bool = False  # nothing to read (gradebook.marking.empty_answers): never grouped


def assignment_answers(
    book: Gradebook, spec: AssignmentSpec, question_id: str, starters: Collection[str] = frozenset()
) -> list[MarkedAnswer]:
    """Each student's answer, in the submission that counts (gradebook.grades.counted_rows), to the hand-graded question ``question_id``, in the order they
    were handed in (two queries); its ``Answer`` keyed by the student's id, with its graded outcome
    where the question names functions (code marked by hand), and whether it is empty (blank, or
    one of the question's ``starters``: empty_answers.is_empty_answer)."""
    from gradebook.grades import counted_rows
    from gradebook.models import Result

    from .empty_answers import is_empty_answer

    question = next((q for q in spec.questions if q.id == question_id and q.manual), None)
    if question is None:
        raise BadEdit(f"{spec.name}: no question {question_id!r} graded by hand")
    code = bool(question.functions)  # a question graded by hand that names functions: code answers

    def read() -> list[MarkedAnswer]:
        latest = counted_rows(book, spec).select_related("student").order_by("id")
        results = {
            submission_id: (answers, tests)
            for submission_id, answers, tests in book.objects(Result)
            .filter(submission__in=latest.values("id"), question_id=question_id)
            .values_list("submission_id", "answers", "tests")
        }
        found = []
        for submission in latest:
            answers, tests = results.get(submission.id, ({}, []))
            text = "\n\n".join(text for _, text in sorted((answers or {}).items()))
            outcome = outcome_of(tests or []) if code else None
            answer = Answer(key=submission.student.student_id, text=text, outcome=outcome)
            empty = is_empty_answer(answers, starters)
            found.append(MarkedAnswer(submission.id, submission.student.student_id, answer, empty))
        return found

    return book.run(read)


def vocabulary_of(question: Question) -> list[str]:
    """The texts whose words a question's groups never take for misspellings: its title and its
    rubric's items (the page's groups and ``autograder marks groups`` alike)."""
    return [question.title, *(item.text for item in question.rubric)]


def assignment_groups(
    book: Gradebook,
    spec: AssignmentSpec,
    question_id: str,
    threshold: float = DEFAULT_THRESHOLD,
    starters: Collection[str] | None = None,
) -> list[AnswerGroup]:
    """The groups of a hand-graded question's latest answers, each member a student's id; the empty
    answers left out (the marking list gives them 0). ``starters``: the question's starter texts
    (None: read from the notebook released now, empty_answers.starter_texts)."""
    if starters is None:
        from .empty_answers import starter_texts

        starters = starter_texts(spec).get(question_id, frozenset())
    found = assignment_answers(book, spec, question_id, starters)
    question = next(q for q in spec.questions if q.id == question_id)  # assignment_answers checked it is one
    return group_answers([each.answer for each in found if not each.empty], threshold, vocabulary_of(question))
