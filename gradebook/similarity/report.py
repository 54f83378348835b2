"""Code similarity over each student's latest submission of an assignment: copydetect's shares
(winnowing, as MOSS does; offline), the released notebook's starter code left out. A report for the
instructor's judgement, never a penalty.

Sub-quadratic: every graded file is fingerprinted once, when it is recorded (``fingerprints``), and
only pairs that may be listed are compared. An inverted index (fingerprint -> the submissions holding
it; ``_Entries``, one stable sort) names those candidate pairs by prefix filtering (``_prefix``): a
pair is listed when one shares more than the threshold of its code with the other, so the other must
hold one of its rarest fingerprints, the fewest without which the rest covers at most the threshold.
Only those (rare ones, mostly) are looked up. In a class of up to ``SMALL_CLASS`` no fingerprint is
left out, and no pair copydetect lists is missed; in a larger one, a fingerprint that more than
``common_limit`` hold names no pair (the course's idiom, MOSS's rule), which keeps the candidates
linear in the class's size. A candidate pair's shares are then computed exactly as copydetect
computes them (its ``compare_files``, every fingerprint of both counted), each share from one side
(``_Index``: the positions of one's k-grams that the other holds, one gather for a submission and
all its partners at once, the characters they cover a running sum), and the matched fragments
paired only for the pairs listed (``gradebook.similarity.fragments``; in the raw code, by the offsets the
tokenizer gave when the file was fingerprinted, kept with its fingerprint).

One new submission against the rest (``similar_to``) needs no index: every other's kept k-grams are
looked up among its fingerprints at once, and only those that may be listed are compared."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.errors import AutograderError
from autograder.own_values import assigned_values
from course.private_files import write_private
from course.wording import plural
from gradebook.errors import GradebookError, LeaseLost, NotFound
from gradebook.own_values import Owners

from .fingerprints import Code, K, filtered, fingerprints, starter
from .fragments import FRAGMENT_COLOURS, Fragment, Side, colour, fragments, sides

if TYPE_CHECKING:
    from gradebook import models
    from gradebook.book import Gradebook

DEFAULT_THRESHOLD = 0.5  # the share of a file's code found in the other's, from which a pair is listed
# A fingerprint held by more than common_limit(n) submissions of a class over SMALL_CLASS is the
# course's idiom, not one student's copy of another's (MOSS's -m, 10 by default, for classes of a
# hundred or two): it names no candidate pair, though a candidate's shares count it. Each
# fingerprint then names at most limit * (limit - 1) / 2 pairs, which keeps the candidates linear
# in the class. 50 (was 20): code that 50 of 2,000 hold (2.5%) is still rare, a solution passed
# round a group, and the one-sided comparison affords it (benchmark at 2,000: 370 of copydetect's
# 417 pairs listed, 245 with 20, in about 1.5 times the time; docs/benchmarks.md).
SMALL_CLASS = 100
COMMON_FLOOR = 50
COMMON_SHARE = 0.005
STALE = timedelta(minutes=10)  # a run whose worker said nothing for this long is run again

Progress = Callable[[int, int], None]  # (pairs compared, of how many)
Pause = Callable[[], None]  # called between a report's steps


def common_limit(students: int) -> int:
    """The most submissions a fingerprint may be in and still name candidate pairs."""
    if students <= SMALL_CLASS:
        return students
    return max(COMMON_FLOOR, int(COMMON_SHARE * students))


class SimilarPair(BaseModel):
    first: str  # student ids
    second: str
    first_share: float  # the share of the first's code found in the second's
    second_share: float
    # Both codes as handed in (never marked up: the page escapes them) and their matched fragments;
    # empty where not asked for (``similar_to`` without ``highlight``) and in reports made before.
    first_code: str = ""
    second_code: str = ""
    fragments: list[Fragment] = []


class NotTheirValues(BaseModel):
    """A latest submission of a notebook of one's own (autograder.own_values) whose values are not
    the ones drawn for its student: a classmate's notebook, or the template or an edited one."""

    student: str
    # The classmate whose values it holds; None when it holds no one's in the class.
    holds: str | None = None


class SimilarityReport(BaseModel):
    assignment: str
    threshold: float = DEFAULT_THRESHOLD
    compared: int  # submissions
    candidates: int = 0  # pairs that share a fingerprint, compared
    all_pairs: int = 0  # pairs there are
    unreadable: list[str] = []
    pairs: list[SimilarPair] = []
    computed_at: str = ""  # ISO time
    # An assignment with values drawn per student: each submission that holds values not its student's.
    values: list[NotTheirValues] = []


@dataclass
class _Fingerprint:
    """One submission's fingerprints with the starter code's left out, as copydetect's
    ``get_document_fingerprints`` leaves them (built from the kept hashes, not from the file)."""

    code: Code
    hashes: np.ndarray  # the fingerprints left, in order ...
    positions: np.ndarray  # ... and where each starts in the filtered code
    distinct: np.ndarray  # the distinct fingerprints, sorted: the index's entries
    coverage: float  # copydetect's token coverage: the filtered characters the fingerprints cover
    offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))  # filled in to pair fragments


def _prepared(code: Code, boilerplate: np.ndarray) -> _Fingerprint:
    hashes, idx = code.hashes, np.arange(len(code.hashes))
    if len(boilerplate) > 0:
        # As copydetect's get_document_fingerprints leaves the boilerplate out, quirk included: with
        # assume_unique on hashes that repeat, intersect1d also names every occurrence of a repeated
        # k-gram but its last, and those go too. Kept, so the shares stay copydetect's.
        _, overlap_idx, _ = np.intersect1d(hashes, boilerplate, return_indices=True, assume_unique=True)
        idx, hashes = np.delete(idx, overlap_idx), np.delete(hashes, overlap_idx)
    return _Fingerprint(code=code, hashes=hashes, positions=idx, distinct=_distinct(hashes), coverage=_covered(idx))


def _distinct(values: np.ndarray) -> np.ndarray:
    """np.unique's values (sorted, once each), by a sort: several times faster than np.unique on
    this numpy (2.x, which hashes first)."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


def _covered(positions: np.ndarray) -> float:
    """The characters that k-grams starting at ``positions`` (ascending) cover: copydetect's
    get_token_coverage (the union of [p, p + K)), without marking each character."""
    if len(positions) == 0:
        return 0.0
    return float(np.minimum(np.diff(positions), K).sum() + K)


def _held(mine: _Fingerprint, theirs: _Fingerprint) -> np.ndarray:
    """Where my fingerprints that the other also holds start (copydetect's find_fingerprint_overlap)."""
    if len(theirs.distinct) == 0:
        return mine.positions[:0]
    at = np.minimum(np.searchsorted(theirs.distinct, mine.hashes), len(theirs.distinct) - 1)
    return mine.positions[theirs.distinct[at] == mine.hashes]


def _shares(first: _Fingerprint, second: _Fingerprint) -> tuple[float, float]:
    """copydetect's ``compare_files``, on arrays: each one's share of its code found in the other's.
    The shares' characters are ``_covered`` of the held positions (the sum of get_copied_slices'
    lengths, without making them)."""
    held_1 = _held(first, second)
    if len(held_1) == 0:
        return 0.0, 0.0
    held_2 = _held(second, first)
    share_1 = _covered(held_1) / first.coverage if first.code.filtered_length > 0 else 0
    share_2 = _covered(held_2) / second.coverage if second.code.filtered_length > 0 else 0
    return float(share_1), float(share_2)


def _prefix(print_: _Fingerprint, rarity: np.ndarray, threshold: float) -> np.ndarray:
    """Where in ``distinct`` are the fewest of the submission's fingerprints, rarest first, without which what is left of its
    code covers at most ``threshold`` of it: another submission that holds none of them shares at
    most ``threshold`` of this one's code (its shared slices lie within what is left), so a pair is
    listed for this one's share only if the other holds one of these (prefix filtering, as in
    similarity joins; exact, whatever the class's size). ``rarity``: how many submissions hold each
    of its distinct fingerprints."""
    count = len(print_.distinct)
    if count == 0:
        return np.zeros(0, dtype=np.intp)
    order = np.lexsort((print_.distinct, rarity))  # rarest first; ties by value, so the same each run
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count)
    position_rank = rank[np.searchsorted(print_.distinct, print_.hashes)]  # each position's fingerprint's rank
    limit = threshold * print_.coverage
    low, high = 0, count  # the fewest m whose removal leaves at most the limit (what is left falls as m grows)
    while low < high:
        middle = (low + high) // 2
        if _covered(print_.positions[position_rank >= middle]) <= limit:
            high = middle
        else:
            low = middle + 1
    return order[:low]


@dataclass
class _Entries:
    """The index's entries: the class's fingerprints, each as its rank among them (ascending), with
    the submissions holding it (``owners[first[r] : first[r] + held_by[r]]``, ascending), and each
    submission's distinct fingerprints as ranks (``ranks``). One stable sort of every submission's
    distinct fingerprints (np.unique, over 3 million at 2,000 students, is several times slower)."""

    owners: np.ndarray
    first: np.ndarray
    held_by: np.ndarray
    ranks: list[np.ndarray]

    @classmethod
    def of(cls, prints: list[_Fingerprint]) -> _Entries:
        lengths = [len(p.distinct) for p in prints]
        owners = np.repeat(np.arange(len(prints), dtype=np.int64), lengths)
        values = np.concatenate([p.distinct for p in prints]) if prints else np.zeros(0, dtype=np.int64)
        order = np.argsort(values, kind="stable")  # by value, then (stable) by submission
        values, owners = values[order], owners[order]
        new = np.concatenate([[True], values[1:] != values[:-1]]) if len(values) else np.zeros(0, dtype=bool)
        first = np.flatnonzero(new)
        rank = np.empty(len(values), dtype=np.intp)
        rank[order] = np.cumsum(new) - 1
        return cls(
            owners=owners,
            first=first,
            held_by=np.diff(np.append(first, len(values))),
            ranks=np.split(rank, np.cumsum(lengths)[:-1]) if prints else [],
        )


def candidate_pairs(
    prints: list[_Fingerprint], threshold: float, pause: Pause | None = None, entries: _Entries | None = None
) -> np.ndarray:
    """The pairs (i < j, one a row, in order) that may be listed at ``threshold``: one holds a
    fingerprint of the other's prefix (``_prefix``) that at most ``common_limit`` hold. In a class of
    up to SMALL_CLASS, every pair copydetect lists is among them; each is then compared exactly.
    The index: ``entries`` (made here if not given)."""
    count = len(prints)
    if count < 2:
        return np.zeros((0, 2), dtype=np.int64)
    if entries is None:
        entries = _Entries.of(prints)
    owners, first, held_by = entries.owners, entries.first, entries.held_by
    limit = common_limit(count)
    if pause is not None:
        pause()
    found: list[np.ndarray] = []
    for start in range(0, count, 100):  # a hundred submissions' prefixes at a time: bounded memory, pauses
        mine, chosen = [], []
        for number in range(start, min(start + 100, count)):
            ranks = entries.ranks[number]
            prefix = ranks[_prefix(prints[number], held_by[ranks], threshold)]
            prefix = prefix[held_by[prefix] <= limit]
            chosen.append(prefix)
            mine.append(np.full(len(prefix), number, dtype=np.int64))
        if pause is not None:
            pause()
        at = np.concatenate(chosen)
        times = held_by[at]
        me = np.repeat(np.concatenate(mine), times)
        other = owners[
            np.repeat(first[at], times) + np.arange(times.sum()) - np.repeat(np.cumsum(times) - times, times)
        ]
        keep = me != other
        found.append(_distinct(np.minimum(me, other)[keep] * count + np.maximum(me, other)[keep]))
    keys = _distinct(np.concatenate(found))
    return np.stack([keys // count, keys % count], axis=1)


def _slice_lengths(pair: np.ndarray, positions: np.ndarray, count: int) -> np.ndarray:
    """For each of ``count`` pairs, the filtered characters in copied slices, from the held positions
    (ascending within each pair, the pairs in order): copydetect's get_copied_slices, summed."""
    if len(pair) == 0:
        return np.zeros(count)
    # A slice ends where the next held position is another pair's or more than K - 1 further on.
    ends = np.ones(len(pair), dtype=bool)
    ends[:-1] = (pair[1:] != pair[:-1]) | (positions[1:] - positions[:-1] > K - 1)
    starts = np.ones(len(pair), dtype=bool)
    starts[1:] = ends[:-1]
    return np.bincount(pair[starts], weights=positions[ends] - positions[starts] + K, minlength=count)


class _Index:
    """``_shares`` of many candidate pairs at once (what a class's report spends its time on), each
    share from one side only: the positions of one submission's k-grams that the other holds.

    Each fingerprint is its rank among the class's, and each submission's k-grams are kept as ranks
    at their positions (one flat array for the class; a rank no table holds where the starter's
    k-grams were left out, and K of it after each submission, so no slice runs on into the next).
    For one submission, a table of the ranks it holds; then, for every partner at once, which of the
    partner's positions it holds is one gather, and the characters their k-grams cover a running sum
    (``_covered``, summed by segment): no sort and no search. Each pair is listed twice, once with
    each of its two as the table's."""

    def __init__(self, prints: list[_Fingerprint], entries: _Entries, pause: Pause | None = None):
        self.prints = prints
        none = len(entries.first)  # the rank no submission holds
        self.table = np.zeros(none + 1, dtype=bool)
        self.distinct, rows = entries.ranks, []
        for number, p in enumerate(prints):
            row = np.full(len(p.code.hashes) + K, none, dtype=np.intp)
            row[p.positions] = self.distinct[number][np.searchsorted(p.distinct, p.hashes)]
            rows.append(row)
            if pause is not None and number % 100 == 99:
                pause()
        self.ends = np.cumsum([len(row) for row in rows], dtype=np.int64)
        self.starts = self.ends - np.array([len(row) for row in rows], dtype=np.int64)
        self.ranks = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
        self.coverage = np.array([p.coverage for p in prints])

    def covered(self, owner: int, partners: np.ndarray) -> np.ndarray:
        """For each partner, the characters of its filtered code in slices copied from the owner's
        (copydetect's get_copied_slices of its positions whose fingerprint the owner holds, summed)."""
        starts, ends = self.starts[partners], self.ends[partners]
        self.table[self.distinct[owner]] = True
        try:
            segments = [self.ranks[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
            held = np.flatnonzero(self.table[np.concatenate(segments)])
        finally:
            self.table[self.distinct[owner]] = False
        # _covered, by segment: each held position covers up to the next one, K at most (the last of
        # a segment: K, since the next segment's first lies more than K further on).
        reach = np.minimum(np.diff(held, append=held[-1] + K if len(held) else 0), K)
        total = np.concatenate([[0], np.cumsum(reach)])
        sizes = np.cumsum(ends - starts)
        cut = np.searchsorted(held, np.concatenate([[0], sizes]))
        return total[cut[1:]] - total[cut[:-1]]

    def shares(
        self, pairs: np.ndarray, progress: Progress | None = None, pause: Pause | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """For each pair (a row of ``pairs``), the share of the first's code found in the second's
        and of the second's found in the first's."""
        count = len(pairs)
        if count == 0:  # a class of one, or no pair above the threshold's candidates
            return np.zeros(0), np.zeros(0)
        covered = np.zeros(2 * count)  # the first's, then the second's
        owner = np.concatenate([pairs[:, 1], pairs[:, 0]])
        partner = np.concatenate([pairs[:, 0], pairs[:, 1]])
        order = np.argsort(owner, kind="stable")
        owners = owner[order]
        bounds = np.flatnonzero(np.concatenate([[True], owners[1:] != owners[:-1], [True]])).tolist()
        for start, end in zip(bounds[:-1], bounds[1:], strict=True):  # each submission with all its partners
            rows = order[start:end]
            covered[rows] = self.covered(int(owners[start]), partner[rows])
            if progress is not None:
                progress(end // 2, count)
            if pause is not None:
                pause()
        coverage = self.coverage[partner]
        with np.errstate(divide="ignore", invalid="ignore"):  # an empty code shares nothing
            shares = np.where(coverage > 0, covered / coverage, 0.0)
        return shares[:count], shares[count:]


def _paired(first: _Fingerprint, second: _Fingerprint) -> list[Fragment]:
    """The pair's matched fragments (``gradebook.similarity.fragments``), from the kept fingerprints."""
    for one in (first, second):
        if len(one.offsets) == 0 and one.code.raw:
            kept = one.code.offsets  # as the tokenizer gave them at grading; or the tokenizer again
            one.offsets = kept if kept is not None else filtered(one.code.raw)[1]
    left, right = (Side(p.hashes, p.positions, p.offsets, p.code.raw, p.code.filtered_length) for p in (first, second))
    return fragments(left, right)


def _pair(
    first: tuple[str, _Fingerprint, float], second: tuple[str, _Fingerprint, float], paired: bool = True
) -> SimilarPair:
    if (second[2], first[0]) > (first[2], second[0]):  # the one with more of their code shared first
        first, second = second, first
    if not paired:
        return SimilarPair(first=first[0], second=second[0], first_share=first[2], second_share=second[2])
    return SimilarPair(
        first=first[0],
        second=second[0],
        first_share=first[2],
        second_share=second[2],
        first_code=first[1].code.raw,
        second_code=second[1].code.raw,
        fragments=_paired(first[1], second[1]),
    )


def _class(
    book: Gradebook, spec: AssignmentSpec, pause: Pause | None = None
) -> tuple[SimilarityReport, list[str], list[Code], np.ndarray]:
    """The counted submissions' (gradebook.grades.counted_rows) kept fingerprints (the unreadable left out, named) and the starter's."""
    from gradebook.grades import counted_rows

    # Plain rows (one query): model instances of a class of 2,000 would be a tenth of a second.
    latest = book.run(lambda: list(counted_rows(book, spec).values_list("student__student_id", "sha256", "file")))
    codes = fingerprints(book, {sha256: file for _, sha256, file in latest}, pause)
    report = SimilarityReport(assignment=spec.name, compared=0, computed_at=datetime.now(UTC).isoformat())
    students, kept = [], []
    for student_id, sha256, _ in sorted(latest):
        code = codes[sha256]
        if code.unreadable:
            report.unreadable.append(student_id)
        else:
            students.append(student_id)
            kept.append(code)
    report.compared = len(students)
    report.all_pairs = len(students) * (len(students) - 1) // 2
    report.values = not_their_values(spec, students, kept, pause)
    return report, students, kept, np.unique(starter(book, spec).hashes)


def not_their_values(
    spec: AssignmentSpec, students: list[str], codes: list[Code], pause: Pause | None = None
) -> list[NotTheirValues]:
    """Each student whose code holds values not drawn for them (their notebook's parameters cell, as
    the grader reads it: autograder.own_values), with the classmate whose values they are, if any."""
    if not spec.parameters:
        return []
    owners = Owners(spec, students)
    found = []
    for number, (student, code) in enumerate(zip(students, codes, strict=True)):
        held = assigned_values([code.raw], spec.parameters)
        if held != owners.drawn[student]:
            found.append(NotTheirValues(student=student, holds=owners.of(held)))
        if pause is not None and number % 100 == 99:
            pause()
    return found


def similarity(
    book: Gradebook,
    spec: AssignmentSpec,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Progress | None = None,
    pause: Pause | None = None,
) -> SimilarityReport:
    """Pairs of students whose latest submissions share more than ``threshold`` of their code.
    ``pause`` is called between its steps, a few hundredths of a second apart (a worker grades the
    hand-ins queued meanwhile)."""
    report, students, codes, boilerplate = _class(book, spec, pause)
    report.threshold = threshold
    prints = []
    for number, code in enumerate(codes):
        prints.append(_prepared(code, boilerplate))
        if pause is not None and number % 100 == 99:
            pause()
    entries = _Entries.of(prints)
    pairs = candidate_pairs(prints, threshold, pause, entries)
    report.candidates = len(pairs)
    index = _Index(prints, entries, pause)
    first_shares, second_shares = index.shares(pairs, progress, pause)
    listed = np.flatnonzero((first_shares > threshold) | (second_shares > threshold))
    for i, j, share_i, share_j in zip(
        pairs[listed, 0].tolist(),
        pairs[listed, 1].tolist(),
        first_shares[listed].tolist(),
        second_shares[listed].tolist(),
        strict=True,
    ):
        report.pairs.append(_pair((students[i], prints[i], share_i), (students[j], prints[j], share_j)))
        if pause is not None:
            pause()
    report.pairs.sort(key=lambda pair: (-max(pair.first_share, pair.second_share), pair.first, pair.second))
    return report


def compare(
    book: Gradebook,
    spec: AssignmentSpec,
    threshold: float = DEFAULT_THRESHOLD,
    student: str | None = None,
    progress: Progress | None = None,
    highlight: bool = True,
) -> SimilarityReport:
    """``autograder similarity``: the class's report, computed and kept for the page (``run_now``,
    by whoever runs the command); with ``student``, that student's latest submission against the
    rest (``similar_to``, not kept; its pairs' fragments paired only with ``highlight``: what the
    command needs only to write HTML). A threshold over 1 is 1."""
    from gradebook.book import who

    threshold = min(threshold, 1.0)
    if student:
        return similar_to(book, spec, student, threshold, highlight)
    return run_now(book, spec, threshold, who(), progress)


def similar_to(
    book: Gradebook,
    spec: AssignmentSpec,
    student_id: str,
    threshold: float = DEFAULT_THRESHOLD,
    highlight: bool = True,
) -> SimilarityReport:
    """One student's latest submission against every other's (a new hand-in against the rest), with
    no index of the class: every other's fingerprints are looked up among this one's at once, and
    only the others that may be listed are compared, exactly (``_may_be_listed``): the pairs the
    class's report lists with it, and any other whose own share found in this one is above the
    threshold."""
    report, students, codes, boilerplate = _class(book, spec)
    report.threshold = threshold
    if student_id not in students:
        raise NotFound(f"{student_id}: no readable submission of {spec.name} in the gradebook")
    mine = students.index(student_id)
    target = _prepared(codes[mine], boilerplate)
    others = [number for number in range(len(codes)) if number != mine]
    candidates = [others[k] for k in _may_be_listed(target, [codes[n] for n in others], boilerplate, threshold)]
    report.candidates = len(candidates)
    for number in candidates:
        other = _prepared(codes[number], boilerplate)
        share_mine, share_other = _shares(target, other)
        if share_mine > threshold or share_other > threshold:
            report.pairs.append(
                _pair((student_id, target, share_mine), (students[number], other, share_other), highlight)
            )
    report.pairs.sort(key=lambda pair: -max(pair.first_share, pair.second_share))
    return report


def _may_be_listed(target: _Fingerprint, others: list[Code], boilerplate: np.ndarray, threshold: float) -> list[int]:
    """Which of ``others`` (as kept: every k-gram, the starter's not left out yet) may share more than
    ``threshold`` with the target either way.

    The target's share found in another's: above the threshold only if the other holds one of the
    target's prefix (``_prefix``; of those, as in the class's report, only the ones at most
    ``common_limit`` hold). Another's share found in the target's: at most the characters its
    k-grams that the target holds cover, over the least its own code can cover once the starter's
    k-grams (and, as copydetect drops them then, all but the last of each repeated one) are left
    out: each k-gram left covers at least its own first character, the last one K."""
    if not others or len(target.distinct) == 0:
        return []
    lengths = np.array([len(code.hashes) for code in others], dtype=np.int64)
    ends = np.cumsum(lengths)
    values = np.concatenate([code.hashes for code in others])
    found = _among(values, target.distinct)  # where in values the target's fingerprints are
    owner = np.searchsorted(ends, found, "right")
    at = np.searchsorted(target.distinct, values[found])
    # The target's side: its prefix, its rarity from how many others hold each fingerprint.
    keys = _distinct(owner * len(target.distinct) + at)  # (other, my fingerprint), once each
    holders = np.bincount(keys % len(target.distinct), minlength=len(target.distinct))
    prefix = np.zeros(len(target.distinct), dtype=bool)
    prefix[_prefix(target, holders + 1, threshold)] = True
    prefix &= holders + 1 <= common_limit(len(others) + 1)  # as the class's report: the course's idiom names no pair
    mine_side = _distinct(keys[prefix[keys % len(target.distinct)]] // len(target.distinct))
    # The other's side: an upper bound of its share, from what it holds of the target's.
    covered = _slice_lengths(owner, found - (ends - lengths)[owner], len(others))  # each k-gram's start
    removed: np.ndarray = np.zeros(len(others), dtype=np.int64)
    if len(boilerplate) > 0:
        removed = np.bincount(np.searchsorted(ends, _among(values, boilerplate), "right"), minlength=len(others))
        removed = removed + lengths - np.array([len(_distinct(code.hashes)) for code in others])  # repeats
    least = np.maximum(lengths - removed, 0) + (K - 1)
    their_side = np.flatnonzero(covered > threshold * least)
    return np.union1d(mine_side, their_side).tolist()


def _among(values: np.ndarray, sought: np.ndarray) -> np.ndarray:
    """Where in ``values`` are the (sorted, distinct) ``sought``: a table of their low 20 bits first
    (one lookup each, what most values stop at), then an exact search for the few that pass. Several
    times faster than a search of each of millions of values."""
    if len(values) == 0 or len(sought) == 0:
        return np.zeros(0, dtype=np.intp)
    table = np.zeros(1 << 20, dtype=bool)
    table[sought & 0xFFFFF] = True
    maybe = np.flatnonzero(table[values & 0xFFFFF])
    at = np.minimum(np.searchsorted(sought, values[maybe]), len(sought) - 1)
    return maybe[sought[at] == values[maybe]]


# Runs: queued from the page, computed by a worker (or by the command), kept with their report.
def queue_run(book: Gradebook, assignment: str, threshold: float, requested_by: str = "") -> models.SimilarityRun:
    """Queue a report of the assignment (the one queued or running already, if any)."""
    from gradebook.models import SimilarityRun

    def queue() -> models.SimilarityRun:
        pending = _pending(book, assignment)
        if pending is not None:
            return pending
        return book.objects(SimilarityRun).create(
            assignment=assignment, threshold=threshold, requested_at=datetime.now(UTC), requested_by=requested_by
        )

    return book.run(queue)


def _pending(book: Gradebook, assignment: str) -> models.SimilarityRun | None:
    from gradebook.models import SimilarityRun

    runs = book.objects(SimilarityRun).filter(
        assignment=assignment, state__in=[SimilarityRun.QUEUED, SimilarityRun.RUNNING]
    )
    return runs.order_by("id").first()


def runs_of(book: Gradebook, assignment: str) -> tuple[models.SimilarityRun | None, models.SimilarityRun | None]:
    """The assignment's last finished run (done or failed) and the one queued or running, if any:
    what the page shows, read from the gradebook, never computed."""
    from gradebook.models import SimilarityRun

    def read() -> tuple[models.SimilarityRun | None, models.SimilarityRun | None]:
        finished = book.objects(SimilarityRun).filter(
            assignment=assignment, state__in=[SimilarityRun.DONE, SimilarityRun.FAILED]
        )
        return finished.order_by("-finished_at", "-id").first(), _pending(book, assignment)

    return book.run(read)


def report_of_run(run: models.SimilarityRun) -> SimilarityReport | None:
    return None if run.report is None else SimilarityReport.model_validate(run.report)


def similarity_runs():
    """The similarity runs' lease (gradebook.leases): a run's worker renews it with each heartbeat;
    silent for ``STALE``, the run is another worker's to compute."""
    from gradebook.leases import LeaseRule
    from gradebook.models import SimilarityRun

    return LeaseRule(SimilarityRun, STALE, what="similarity run")


def _compute(
    book: Gradebook,
    spec: AssignmentSpec,
    run: models.SimilarityRun,
    progress: Progress | None,
    pause: Pause | None = None,
) -> SimilarityReport:
    from gradebook.models import SimilarityRun

    last = [0.0]
    rule = similarity_runs()

    def said(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 0.5 or done == total:  # a write a half-second at most, for the page
            # The heartbeat renews the lease, with the claim's token: a run another worker took stops here.
            if not rule.renew(run):
                raise LeaseLost(f"similarity run {run.id}: another worker took it over")
            book.objects(SimilarityRun).filter(id=run.id, lease=run.lease).update(
                done=done, total=total, heartbeat_at=datetime.now(UTC)
            )
            last[0] = time.monotonic()
        if progress is not None:
            progress(done, total)

    try:
        report = similarity(book, spec, run.threshold, said, pause)
    except BaseException as exc:
        # Stopped too (Ctrl-C, a worker's SIGTERM): the page says so, and a new report may be asked for.
        said_why = str(exc) if isinstance(exc, GradebookError) else "stopped before it was done"
        if not isinstance(exc, LeaseLost):
            rule.finish(run, state=SimilarityRun.FAILED, error=said_why, finished_at=datetime.now(UTC))
        raise
    rule.finish(
        run,
        state=SimilarityRun.DONE,
        report=report.model_dump(mode="json"),
        finished_at=datetime.now(UTC),
        done=report.candidates,
        total=report.candidates,
    )
    return report


def run_now(
    book: Gradebook,
    spec: AssignmentSpec,
    threshold: float = DEFAULT_THRESHOLD,
    requested_by: str = "",
    progress: Progress | None = None,
) -> SimilarityReport:
    """Compute the assignment's report here (``autograder similarity``) and keep it for the page."""
    from gradebook.models import SimilarityRun

    now = datetime.now(UTC)
    run = book.run(
        lambda: book.objects(SimilarityRun).create(
            assignment=spec.name,
            threshold=threshold,
            state=SimilarityRun.RUNNING,
            requested_at=now,
            requested_by=requested_by,
            started_at=now,
            heartbeat_at=now,
            worker="command line",
            **similarity_runs().new_lease(),
        )
    )
    return _compute(book, spec, run, progress)


def work_on_queued(
    book: Gradebook, spec_of: Callable[[str], AssignmentSpec], worker: str, pause: Pause | None = None
) -> bool:
    """Claim the oldest queued run (or one whose worker went silent) and compute it: what a worker
    does when no hand-in waits. False when there was none. An assignment that cannot be read ends
    its run as failed, with why. ``pause``: called between the report's steps (the worker grades
    the hand-ins queued meanwhile: they never wait for a report)."""
    from django.db.models import Q

    from gradebook.models import SimilarityRun

    now = datetime.now(UTC)
    waiting = book.objects(SimilarityRun).filter(
        Q(state=SimilarityRun.QUEUED)
        | Q(state=SimilarityRun.RUNNING, lease_expires_at__lt=now)
        | Q(state=SimilarityRun.RUNNING, lease_expires_at__isnull=True, heartbeat_at__lt=now - STALE)  # before leases
    )
    changes = {"state": SimilarityRun.RUNNING, "worker": worker, "started_at": now, "heartbeat_at": now}
    for run in similarity_runs().claim(waiting.order_by("id"), changes=lambda _: {**changes, "done": 0, "total": 0}):
        try:
            spec = spec_of(run.assignment)
        except (AutograderError, GradebookError) as exc:  # the course folder's: the run says why
            similarity_runs().finish(run, state=SimilarityRun.FAILED, error=str(exc), finished_at=datetime.now(UTC))
            return True
        try:
            _compute(book, spec, run, None, pause)
        except GradebookError:
            pass  # recorded on the run
        return True
    return False


def values_lines(report: SimilarityReport) -> list[str]:
    """One sentence per submission that holds values not its student's (the command and the HTML)."""
    return [
        f"{found.student}'s notebook holds {found.holds}'s values"
        if found.holds
        else f"{found.student}'s notebook holds values drawn for no one in the class (the template's, or edited)"
        for found in report.values
    ]


def write_html(report: SimilarityReport, out: Path) -> Path:
    """The pairs side by side, each fragment's two regions in one colour and linked to each other, as
    the staff's page shows them (the code is escaped: it never runs)."""
    from html import escape

    colours = "".join(f".frag-{n}{{background:{colour}}}" for n, colour in enumerate(FRAGMENT_COLOURS))
    parts = [
        "<!doctype html><meta charset='utf-8'><title>Similarity</title><style>"
        ".sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}"
        "pre{font-size:12px;overflow:auto;margin:0}a.frag{color:inherit;text-decoration:none}"
        f"details{{color:#555}}{colours}</style>",
        f"<h1>{escape(report.assignment)}: {plural(len(report.pairs), 'pair')}</h1>",
    ]
    if report.values:
        parts.append("<h2>Notebooks that hold values not drawn for their student</h2><ul>")
        parts += [f"<li>{escape(line)}</li>" for line in values_lines(report)]
        parts.append("</ul>")
    for number, pair in enumerate(report.pairs, start=1):
        first, second = sides(pair.first_code, pair.second_code, pair.fragments)
        parts.append(
            f"<h2>{escape(pair.first)} ({pair.first_share:.0%}) and {escape(pair.second)} ({pair.second_share:.0%})</h2><ol>"
        )
        for n, fragment in enumerate(pair.fragments, start=1):
            parts.append(
                f"<li class='frag-{colour(n)}'><a href='#p{number}-l-{n}'>lines "
                f"{fragment.first.first_line}–{fragment.first.last_line}</a> ↔ <a href='#p{number}-r-{n}'>lines "
                f"{fragment.second.first_line}–{fragment.second.last_line}</a></li>"
            )
        parts.append("</ol><div class='sides'>")
        for blocks, mine, theirs in ((first, "l", "r"), (second, "r", "l")):
            parts.append("<div>")
            for block in blocks:
                if block.folded:
                    parts.append(
                        f"<details><summary>lines {block.first_line}–{block.last_line}, not shared</summary>"
                        f"<pre>{escape(block.pieces[0].text)}</pre></details>"
                    )
                    continue
                parts.append("<pre>\n")  # the parser drops a newline straight after <pre>: this one
                for piece in block.pieces:
                    text = escape(piece.text)
                    if piece.fragment:
                        text = (
                            f"<a class='frag frag-{piece.colour}' id='p{number}-{mine}-{piece.fragment}' "
                            f"href='#p{number}-{theirs}-{piece.fragment}'>{text}</a>"
                        )
                    parts.append(text)
                parts.append("</pre>")
            parts.append("</div>")
        parts.append("</div>")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_private(out, "".join(parts))  # the students' own code, side by side
    return out
