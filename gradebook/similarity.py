"""Code similarity over each student's latest submission of an assignment: copydetect's shares
(winnowing, as MOSS does; offline), the released notebook's starter code left out. A report for the
instructor's judgement, never a penalty.

Sub-quadratic: every graded file is fingerprinted once, when it is recorded (``fingerprints``), and
only pairs that share a fingerprint are compared. An inverted index (fingerprint -> the submissions
holding it) names those candidate pairs; a fingerprint held by more than ``common_limit(n)``
submissions of the class is left out of the index, as MOSS does: a passage that common is the
course's idiom, not one student's copy of another's. A candidate pair's shares are then computed
exactly as copydetect computes them (its ``compare_files``, every fingerprint of both counted; here on
arrays, many pairs at once), and the shared regions highlighted only for the pairs above the threshold. So a pair
is missed only when everything two students share is also in more than ``common_limit`` other
submissions: never in a class of up to ``SMALL_CLASS`` students, where every pair copydetect lists is
listed, with its shares."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.errors import AutograderError

from .errors import GradebookError, NotFound
from .fingerprints import Code, K, filtered, fingerprints, starter

if TYPE_CHECKING:
    from . import models
    from .book import Gradebook

DEFAULT_THRESHOLD = 0.5  # the share of a file's code found in the other's, from which a pair is listed
# In a class of up to SMALL_CLASS, every pair that shares a fingerprint is compared (at most 4,950
# pairs: seconds), so the pairs are exactly copydetect's. In a larger one, a fingerprint held by more
# than COMMON_FLOOR submissions (MOSS's default, its -m 10), or by more than COMMON_SHARE of a class
# over 2,000, names no pair: each fingerprint then names at most limit * (limit - 1) / 2 pairs,
# whatever the class's size, which is what keeps the candidates sub-quadratic.
SMALL_CLASS = 100
COMMON_FLOOR = 10
COMMON_SHARE = 0.005
STALE = timedelta(minutes=10)  # a run whose worker said nothing for this long is run again

Progress = Callable[[int, int], None]  # (pairs compared, of how many)


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
    first_html: str  # the code, HTML-escaped, the shared regions highlighted
    second_html: str


class SimilarityReport(BaseModel):
    assignment: str
    threshold: float = DEFAULT_THRESHOLD
    compared: int  # submissions
    candidates: int = 0  # pairs that share a fingerprint, compared
    all_pairs: int = 0  # pairs there are
    unreadable: list[str] = []
    pairs: list[SimilarPair] = []
    computed_at: str = ""  # ISO time


@dataclass
class _Fingerprint:
    """One submission's fingerprints with the starter code's left out, as copydetect's
    ``get_document_fingerprints`` leaves them (built from the kept hashes, not from the file)."""

    code: Code
    hashes: np.ndarray  # the fingerprints left, in order ...
    positions: np.ndarray  # ... and where each starts in the filtered code
    distinct: np.ndarray  # the distinct fingerprints, sorted: the index's entries
    coverage: float  # copydetect's token coverage: the filtered characters the fingerprints cover
    offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))  # filled in to highlight


def _prepared(code: Code, boilerplate: np.ndarray) -> _Fingerprint:
    hashes, idx = code.hashes, np.arange(len(code.hashes))
    if len(boilerplate) > 0:
        # As copydetect's get_document_fingerprints leaves the boilerplate out, quirk included: with
        # assume_unique on hashes that repeat, intersect1d also names every occurrence of a repeated
        # k-gram but its last, and those go too. Kept, so the shares stay copydetect's.
        _, overlap_idx, _ = np.intersect1d(hashes, boilerplate, return_indices=True, assume_unique=True)
        idx, hashes = np.delete(idx, overlap_idx), np.delete(hashes, overlap_idx)
    covered = np.zeros(code.filtered_length, dtype=bool)  # copydetect's get_token_coverage, vectorised
    for offset in range(K):
        covered[idx + offset] = True
    return _Fingerprint(code=code, hashes=hashes, positions=idx, distinct=np.unique(hashes),
                        coverage=float(np.sum(covered)))  # fmt: skip


def _held(mine: _Fingerprint, theirs: _Fingerprint) -> np.ndarray:
    """Where my fingerprints that the other also holds start (copydetect's find_fingerprint_overlap)."""
    if len(theirs.distinct) == 0:
        return mine.positions[:0]
    at = np.minimum(np.searchsorted(theirs.distinct, mine.hashes), len(theirs.distinct) - 1)
    return mine.positions[theirs.distinct[at] == mine.hashes]


def _shares(first: _Fingerprint, second: _Fingerprint, highlight: bool = False) -> tuple[float, float, Any]:
    """copydetect's ``compare_files``, on arrays: each one's share of its code found in the other's,
    and (to highlight) the shared slices of each raw code."""
    from copydetect.utils import get_copied_slices

    slices_1 = get_copied_slices(_held(first, second), K)
    if len(slices_1[0]) == 0:
        return 0.0, 0.0, (np.array([]), np.array([]))
    slices_2 = get_copied_slices(_held(second, first), K)
    share_1 = np.sum(slices_1[1] - slices_1[0]) / first.coverage if first.code.filtered_length > 0 else 0
    share_2 = np.sum(slices_2[1] - slices_2[0]) / second.coverage if second.code.filtered_length > 0 else 0
    if highlight:
        for one, slices in ((first, slices_1), (second, slices_2)):
            if len(one.offsets) > 0:  # filtered positions back to the raw code's, as compare_files does
                slices += one.offsets[:, 1][
                    np.clip(np.searchsorted(one.offsets[:, 0], slices), 0, one.offsets.shape[0] - 1)
                ]
    return float(share_1), float(share_2), (slices_1, slices_2)


def candidate_pairs(distinct: list[np.ndarray], limit: int) -> np.ndarray:
    """The pairs (i < j, one a row) of submissions that share a fingerprint held by at most ``limit``
    submissions: the inverted index, as sorted arrays (fingerprint, submission) grouped by fingerprint."""
    count = len(distinct)
    if count < 2:
        return np.zeros((0, 2), dtype=np.int64)
    owners = np.concatenate([np.full(len(d), number, dtype=np.int64) for number, d in enumerate(distinct)])
    values = np.concatenate(distinct)
    order = np.lexsort((owners, values))
    values, owners = values[order], owners[order]
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    sizes = np.diff(np.concatenate([starts, [len(values)]]))
    found: list[np.ndarray] = []
    for size in np.unique(sizes[(sizes >= 2) & (sizes <= limit)]).tolist():
        groups = starts[sizes == size]
        members = owners[groups[:, None] + np.arange(size)]  # one row per fingerprint, its owners ascending
        left, right = np.triu_indices(size, 1)
        found.append(np.unique(members[:, left].ravel() * count + members[:, right].ravel()))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    keys = np.unique(np.concatenate(found))
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
    """``_shares`` of one submission with many others at once (what a class's report spends its time
    on): each fingerprint as its rank among the class's, and a table of the one submission's ranks,
    so that which fingerprints the others hold is one lookup per fingerprint, no sort and no search."""

    def __init__(self, prints: list[_Fingerprint]):
        self.prints = prints
        every = np.unique(np.concatenate([p.distinct for p in prints])) if prints else np.zeros(0, dtype=np.int64)
        self.kept = [np.searchsorted(every, p.hashes) for p in prints]  # in position order
        self.distinct = [np.searchsorted(every, p.distinct) for p in prints]
        self.table = np.zeros(len(every), dtype=bool)

    def shares(self, mine: int, others: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """My share of my code found in each other's, and each other's share of theirs found in mine."""
        count, me = len(others), self.prints[mine]
        self.table[self.distinct[mine]] = True
        try:
            # Their side: the positions of their fingerprints that I hold.
            pair = np.repeat(np.arange(count), [len(self.kept[j]) for j in others])
            held = self.table[np.concatenate([self.kept[j] for j in others])]
            positions = np.concatenate([self.prints[j].positions for j in others])
            theirs = _slice_lengths(pair[held], positions[held], count)
            # My side: which of my fingerprints each holds ...
            pair = np.repeat(np.arange(count), [len(self.distinct[j]) for j in others])
            ranks = np.concatenate([self.distinct[j] for j in others])
            shared = self.table[ranks]
            pair, ranks = pair[shared], ranks[shared]
        finally:
            self.table[self.distinct[mine]] = False
        # ... and where those start in my code (a fingerprint may start at several places).
        order = np.argsort(self.kept[mine], kind="stable")
        by_rank = self.kept[mine][order]
        low, high = np.searchsorted(by_rank, ranks, "left"), np.searchsorted(by_rank, ranks, "right")
        times = high - low
        within = np.arange(times.sum()) - np.repeat(np.cumsum(times) - times, times)
        positions = me.positions[order[np.repeat(low, times) + within]]
        pair = np.repeat(pair, times)
        ordered = np.lexsort((positions, pair))
        mine_lengths = _slice_lengths(pair[ordered], positions[ordered], count)
        coverage = np.array([self.prints[j].coverage for j in others])
        with np.errstate(divide="ignore", invalid="ignore"):  # an empty code shares nothing
            share_mine = mine_lengths / me.coverage if me.coverage > 0 else np.zeros(count)
            share_theirs = np.where(coverage > 0, theirs / coverage, 0.0)
        return share_mine, share_theirs


def _highlighted(first: _Fingerprint, second: _Fingerprint) -> tuple[str, str]:
    """Both codes, HTML-escaped, the shared regions in copydetect's highlighting spans."""
    from copydetect.utils import highlight_overlap

    for one in (first, second):
        if len(one.offsets) == 0 and one.code.raw:
            one.offsets = filtered(one.code.raw)[1]
    _, _, (slices_1, slices_2) = _shares(first, second, highlight=True)
    html_1, _ = highlight_overlap(first.code.raw, slices_1, "<span class='highlight-red'>", "</span>", escape_html=True)
    html_2, _ = highlight_overlap(second.code.raw, slices_2, "<span class='highlight-green'>", "</span>",
                                  escape_html=True)  # fmt: skip
    return str(html_1), str(html_2)


def _pair(first: tuple[str, _Fingerprint, float], second: tuple[str, _Fingerprint, float]) -> SimilarPair:
    if (second[2], first[0]) > (first[2], second[0]):  # the one with more of their code shared first
        first, second = second, first
    html_1, html_2 = _highlighted(first[1], second[1])
    return SimilarPair(first=first[0], second=second[0], first_share=first[2], second_share=second[2],
                       first_html=html_1, second_html=html_2)  # fmt: skip


def _class(book: Gradebook, spec: AssignmentSpec) -> tuple[SimilarityReport, list[str], list[Code], np.ndarray]:
    """The latest submissions' kept fingerprints (the unreadable left out, named) and the starter's."""
    from .grades import latest_submissions

    latest = book.run(lambda: latest_submissions(book, spec.name))
    codes = fingerprints(book, {s.sha256: s.file for s in latest.values()})
    report = SimilarityReport(assignment=spec.name, compared=0, computed_at=datetime.now(UTC).isoformat())
    students, kept = [], []
    for student_id, submission in sorted(latest.items()):
        code = codes[submission.sha256]
        if code.unreadable:
            report.unreadable.append(student_id)
        else:
            students.append(student_id)
            kept.append(code)
    report.compared = len(students)
    report.all_pairs = len(students) * (len(students) - 1) // 2
    return report, students, kept, np.unique(starter(book, spec).hashes)


def similarity(
    book: Gradebook, spec: AssignmentSpec, threshold: float = DEFAULT_THRESHOLD, progress: Progress | None = None
) -> SimilarityReport:
    """Pairs of students whose latest submissions share more than ``threshold`` of their code."""
    report, students, codes, boilerplate = _class(book, spec)
    report.threshold = threshold
    prints = [_prepared(code, boilerplate) for code in codes]
    pairs = candidate_pairs([p.distinct for p in prints], common_limit(len(prints)))
    report.candidates = len(pairs)
    index = _Index(prints)
    firsts = pairs[:, 0]
    bounds: list[int] = []
    if len(pairs):
        bounds = np.flatnonzero(np.concatenate([[True], firsts[1:] != firsts[:-1], [True]])).tolist()
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):  # each submission with its later candidates
        i, others = int(firsts[start]), pairs[start:end, 1].tolist()
        shares_i, shares_j = index.shares(i, others)
        for j, share_i, share_j in zip(others, shares_i.tolist(), shares_j.tolist(), strict=True):
            if share_i > threshold or share_j > threshold:
                report.pairs.append(_pair((students[i], prints[i], share_i), (students[j], prints[j], share_j)))
        if progress is not None:
            progress(end, len(pairs))
    report.pairs.sort(key=lambda pair: (-max(pair.first_share, pair.second_share), pair.first, pair.second))
    return report


def compare(
    book: Gradebook,
    spec: AssignmentSpec,
    threshold: float = DEFAULT_THRESHOLD,
    student: str | None = None,
    progress: Progress | None = None,
) -> SimilarityReport:
    """``autograder similarity``: the class's report, computed and kept for the page (``run_now``,
    by whoever runs the command); with ``student``, that student's latest submission against the
    rest (``similar_to``, not kept). A threshold over 1 is 1."""
    from .book import who

    threshold = min(threshold, 1.0)
    if student:
        return similar_to(book, spec, student, threshold)
    return run_now(book, spec, threshold, who(), progress)


def similar_to(
    book: Gradebook, spec: AssignmentSpec, student_id: str, threshold: float = DEFAULT_THRESHOLD
) -> SimilarityReport:
    """One student's latest submission against every other's (a new hand-in against the rest): only
    the submissions that share one of its fingerprints are compared."""
    report, students, codes, boilerplate = _class(book, spec)
    report.threshold = threshold
    if student_id not in students:
        raise NotFound(f"{student_id}: no readable submission of {spec.name} in the gradebook")
    mine = students.index(student_id)
    target = _prepared(codes[mine], boilerplate)
    others = [number for number in range(len(codes)) if number != mine]
    candidates: list[int] = []
    if others and len(target.distinct):
        # The index, for one: every other's fingerprints looked up among mine at once.
        owner = np.repeat(np.array(others), [len(codes[number].hashes) for number in others])
        values = np.concatenate([codes[number].hashes for number in others])
        at = np.minimum(np.searchsorted(target.distinct, values), len(target.distinct) - 1)
        held = target.distinct[at] == values
        keys = np.unique(owner[held] * len(target.distinct) + at[held])  # (other, my fingerprint), once each
        holders = np.bincount(keys % len(target.distinct), minlength=len(target.distinct))  # how many others hold it
        rare = (holders + 1) <= common_limit(len(codes))  # held by how many submissions, mine included
        candidates = np.unique(keys[rare[keys % len(target.distinct)]] // len(target.distinct)).tolist()
    report.candidates = len(candidates)
    for number in candidates:
        other = _prepared(codes[number], boilerplate)
        share_mine, share_other, _ = _shares(target, other)
        if share_mine > threshold or share_other > threshold:
            report.pairs.append(_pair((student_id, target, share_mine), (students[number], other, share_other)))
    report.pairs.sort(key=lambda pair: -max(pair.first_share, pair.second_share))
    return report


# Runs: queued from the page, computed by a worker (or by the command), kept with their report.
def queue_run(book: Gradebook, assignment: str, threshold: float, requested_by: str = "") -> models.SimilarityRun:
    """Queue a report of the assignment (the one queued or running already, if any)."""
    from .models import SimilarityRun

    def queue() -> models.SimilarityRun:
        pending = _pending(book, assignment)
        if pending is not None:
            return pending
        return book.objects(SimilarityRun).create(assignment=assignment, threshold=threshold,
                                                  requested_at=datetime.now(UTC), requested_by=requested_by)  # fmt: skip

    return book.run(queue)


def _pending(book: Gradebook, assignment: str) -> models.SimilarityRun | None:
    from .models import SimilarityRun

    runs = book.objects(SimilarityRun).filter(
        assignment=assignment, state__in=[SimilarityRun.QUEUED, SimilarityRun.RUNNING]
    )
    return runs.order_by("id").first()


def runs_of(book: Gradebook, assignment: str) -> tuple[models.SimilarityRun | None, models.SimilarityRun | None]:
    """The assignment's last finished run (done or failed) and the one queued or running, if any:
    what the page shows, read from the gradebook, never computed."""
    from .models import SimilarityRun

    def read() -> tuple[models.SimilarityRun | None, models.SimilarityRun | None]:
        finished = book.objects(SimilarityRun).filter(assignment=assignment,
                                                     state__in=[SimilarityRun.DONE, SimilarityRun.FAILED])  # fmt: skip
        return finished.order_by("-finished_at", "-id").first(), _pending(book, assignment)

    return book.run(read)


def report_of_run(run: models.SimilarityRun) -> SimilarityReport | None:
    return None if run.report is None else SimilarityReport.model_validate(run.report)


def _compute(
    book: Gradebook, spec: AssignmentSpec, run: models.SimilarityRun, progress: Progress | None
) -> SimilarityReport:
    from .models import SimilarityRun

    last = [0.0]

    def said(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 0.5 or done == total:  # a write a half-second at most, for the page
            book.objects(SimilarityRun).filter(id=run.id).update(done=done, total=total, heartbeat_at=datetime.now(UTC))
            last[0] = time.monotonic()
        if progress is not None:
            progress(done, total)

    try:
        report = similarity(book, spec, run.threshold, said)
    except BaseException as exc:
        # Stopped too (Ctrl-C, a worker's SIGTERM): the page says so, and a new report may be asked for.
        said_why = str(exc) if isinstance(exc, GradebookError) else "stopped before it was done"
        book.objects(SimilarityRun).filter(id=run.id).update(state=SimilarityRun.FAILED, error=said_why,
                                                             finished_at=datetime.now(UTC))  # fmt: skip
        raise
    book.objects(SimilarityRun).filter(id=run.id).update(
        state=SimilarityRun.DONE, report=report.model_dump(mode="json"), finished_at=datetime.now(UTC),
        done=report.candidates, total=report.candidates,
    )  # fmt: skip
    return report


def run_now(
    book: Gradebook,
    spec: AssignmentSpec,
    threshold: float = DEFAULT_THRESHOLD,
    requested_by: str = "",
    progress: Progress | None = None,
) -> SimilarityReport:
    """Compute the assignment's report here (``autograder similarity``) and keep it for the page."""
    from .models import SimilarityRun

    now = datetime.now(UTC)
    run = book.run(lambda: book.objects(SimilarityRun).create(
        assignment=spec.name, threshold=threshold, state=SimilarityRun.RUNNING, requested_at=now,
        requested_by=requested_by, started_at=now, heartbeat_at=now, worker="command line",
    ))  # fmt: skip
    return _compute(book, spec, run, progress)


def work_on_queued(book: Gradebook, spec_of: Callable[[str], AssignmentSpec], worker: str) -> bool:
    """Claim the oldest queued run (or one whose worker went silent) and compute it: what a worker
    does when no hand-in waits. False when there was none. An assignment that cannot be read ends
    its run as failed, with why."""
    from django.db.models import Q

    from .models import SimilarityRun

    now = datetime.now(UTC)
    waiting = book.objects(SimilarityRun).filter(
        Q(state=SimilarityRun.QUEUED) | Q(state=SimilarityRun.RUNNING, heartbeat_at__lt=now - STALE)
    )
    for run in waiting.order_by("id")[:5]:
        # Claimed by the one worker whose update finds it as it was read.
        claimed = (
            book.objects(SimilarityRun)
            .filter(id=run.id, state=run.state, heartbeat_at=run.heartbeat_at)
            .update(state=SimilarityRun.RUNNING, worker=worker, started_at=now, heartbeat_at=now, done=0, total=0)
        )
        if not claimed:
            continue
        run.refresh_from_db(using=book.alias)
        try:
            spec = spec_of(run.assignment)
        except (AutograderError, GradebookError) as exc:  # the course folder's: the run says why
            book.objects(SimilarityRun).filter(id=run.id).update(state=SimilarityRun.FAILED, error=str(exc),
                                                                 finished_at=datetime.now(UTC))  # fmt: skip
            return True
        try:
            _compute(book, spec, run, None)
        except GradebookError:
            pass  # recorded on the run
        return True
    return False


def write_html(report: SimilarityReport, out: Path) -> Path:
    """The pairs side by side, the shared code highlighted (the code is escaped: it never runs)."""
    from html import escape

    parts = [
        "<!doctype html><meta charset='utf-8'><title>Similarity</title><style>"
        "pre{white-space:pre-wrap;font-size:12px}.highlight-red{background:#fcc}.highlight-green{background:#cfc}"
        "td{vertical-align:top;width:50%}</style>",
        f"<h1>{escape(report.assignment)}: {len(report.pairs)} pairs</h1>",
    ]
    for pair in report.pairs:
        parts.append(
            f"<h2>{escape(pair.first)} ({pair.first_share:.0%}) and {escape(pair.second)} ({pair.second_share:.0%})</h2>"
            f"<table><tr><td><pre>{pair.first_html}</pre></td><td><pre>{pair.second_html}</pre></td></tr></table>"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts), encoding="utf-8")
    return out
