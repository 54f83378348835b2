"""A similar pair's matched fragments, as Dolos defines them, and the code cut into pieces to show them.

Each k-gram the two files share gives a match at its positions in both (every occurrence on one
side with every occurrence on the other); matches on the same diagonal whose k-grams touch or
overlap are merged into one run, so a run is one stretch of filtered code found unchanged in both
(a k-gram that occurs twice on one side makes a second run, never a jump within one). Runs are then
laid as tiles, longest first, none on code of either side another tile already holds (the rest of a
run that overlaps goes back as shorter runs), as greedy string tiling does: each stretch of either
file is paired with at most one stretch of the other, so a block copied once and repeated in one file
is paired once. Each tile becomes a fragment: its range in both raw texts (copydetect's offsets map
the filtered code back) and the lines it spans, numbered by their place in the first file.

Pure functions of the kept fingerprints: nothing here reads a file or the gradebook."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from .fingerprints import K

# A k-gram found m times in one file and n in the other makes m * n matches: past this many, it is
# repetition (a generated table, a line pasted a hundred times), shown as no fragment. The shares
# still count it; this bounds the work a hostile file can ask for.
MOST_MATCHES = 256
CONTEXT = 3  # lines of unshared code shown around each region; the rest folded, as MOSS trims it
# The fragments' colours, cycled (site.css's .frag-0 to .frag-5 are these): light, so the code's
# dark text keeps well over WCAG AA's 4.5:1 on each; far enough apart to tell neighbours apart.
FRAGMENT_COLOURS = ("#ffe08a", "#b6e3ff", "#c8f0c0", "#ffc9de", "#e2d4ff", "#ffd6a5")


class Span(BaseModel):
    """One side of a fragment: the raw code's characters [start, end) and the lines they span (from 1)."""

    start: int
    end: int
    first_line: int
    last_line: int


class Fragment(BaseModel):
    """A stretch of the first file's code found in the second's: the two regions, paired."""

    first: Span
    second: Span


@dataclass
class Side:
    """One file as fingerprinted: its k-grams' hashes and where each starts in the filtered code
    (the starter's left out), copydetect's offsets back into the raw text, and the raw text."""

    hashes: np.ndarray
    positions: np.ndarray
    offsets: np.ndarray
    raw: str
    filtered_length: int


def matches(first: Side, second: Side) -> tuple[np.ndarray, np.ndarray]:
    """Every shared k-gram's positions in both files: (first's, second's), one entry per match."""
    order = np.argsort(first.hashes, kind="stable")
    ordered = first.hashes[order]
    low = np.searchsorted(ordered, second.hashes, "left")
    mine = np.searchsorted(ordered, second.hashes, "right") - low  # each of the second's k-grams in the first
    theirs_sorted = np.sort(second.hashes)
    theirs = np.searchsorted(theirs_sorted, second.hashes, "right") - np.searchsorted(
        theirs_sorted, second.hashes, "left"
    )
    keep = (mine > 0) & (mine * theirs <= MOST_MATCHES)
    counts = mine[keep]
    at_second = np.repeat(np.flatnonzero(keep), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    at_first = order[np.repeat(low[keep], counts) + within]
    return first.positions[at_first], second.positions[at_second]


def runs(at_first: np.ndarray, at_second: np.ndarray, k: int = K) -> list[tuple[int, int, int]]:
    """Matches merged into runs: (first's start, second's start, k-grams from there), merged where
    they lie on one diagonal and their k-grams touch or overlap (the code between is the same too)."""
    if len(at_first) == 0:
        return []
    diagonal = at_second - at_first
    order = np.lexsort((at_first, diagonal))
    diagonal, starts_at = diagonal[order], at_first[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (diagonal[1:] != diagonal[:-1]) | (starts_at[1:] - starts_at[:-1] >= k)
    begins = np.flatnonzero(new)
    ends = np.append(begins[1:], len(order)) - 1
    first = starts_at[begins]
    return list(
        zip(first.tolist(), (first + diagonal[begins]).tolist(), (starts_at[ends] - first + 1).tolist(), strict=True)
    )


def tiles(found: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The runs laid longest first, each k-gram position of either side in one tile at most (ties by
    position in the first, then the second: the same tiles each time). A run partly covered already
    goes back as the stretches of it still free on both sides."""
    if not found:
        return []
    size_1 = max(a + n for a, _, n in found)
    size_2 = max(b + n for _, b, n in found)
    taken_1, taken_2 = np.zeros(size_1, dtype=bool), np.zeros(size_2, dtype=bool)
    waiting = [(-n, a, b) for a, b, n in found]
    heapq.heapify(waiting)
    laid = []
    while waiting:
        longest, a, b = heapq.heappop(waiting)
        n = -longest
        free = ~taken_1[a : a + n] & ~taken_2[b : b + n]
        if free.all():
            taken_1[a : a + n] = taken_2[b : b + n] = True
            laid.append((a, b, n))
            continue
        edges = np.flatnonzero(np.diff(np.concatenate([[False], free, [False]]).astype(np.int8)))
        for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            heapq.heappush(waiting, (start - end, a + start, b + start))
    return sorted(laid)


def of_code(first: str, second: str) -> list[Fragment]:
    """The fragments of two codes fingerprinted now, every k-gram kept (no starter's left out)."""
    from .fingerprints import fingerprint

    def side(raw: str) -> Side:
        code = fingerprint(raw)
        offsets = code.offsets if code.offsets is not None else np.zeros((0, 2), dtype=np.int64)
        return Side(code.hashes, np.arange(len(code.hashes)), offsets, code.raw, code.filtered_length)

    return fragments(side(first), side(second))


def raw_positions(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Filtered positions to the raw text's, by copydetect's offsets as its compare_files maps them
    (its shift held monotone: copydetect records a class name's shift wrongly)."""
    if len(offsets) == 0:
        return positions
    shift = np.maximum.accumulate(offsets[:, 1])
    return positions + shift[np.clip(np.searchsorted(offsets[:, 0], positions), 0, len(offsets) - 1)]


def fragments(first: Side, second: Side, k: int = K) -> list[Fragment]:
    """The pair's fragments, in the order of the first file's code."""
    laid = tiles(runs(*matches(first, second), k=k))
    ranges = []
    for side, at in ((first, 0), (second, 1)):
        starts = np.array([tile[at] for tile in laid], dtype=np.int64)
        ends = starts + np.array([tile[2] for tile in laid], dtype=np.int64) - 1 + k  # filtered, exclusive
        raw_starts = raw_positions(side.offsets, starts)
        # The end: where the code after the region's last token starts (its whole last name, then).
        raw_ends = np.where(
            ends >= side.filtered_length,
            len(side.raw),
            raw_positions(side.offsets, np.minimum(ends, side.filtered_length)),
        )
        ranges.append(_trimmed(side.raw, raw_starts.tolist(), raw_ends.tolist()))
    found = []
    for one, other in zip(ranges[0], ranges[1], strict=True):
        if one is not None and other is not None:
            found.append(Fragment(first=_span(first.raw, *one), second=_span(second.raw, *other)))
    return found


def _trimmed(raw: str, starts: list[int], ends: list[int]) -> list[tuple[int, int] | None]:
    """Each region within the raw text, in whole lines where it spans several (as MOSS shows them: a
    k-gram may begin on a line's last bracket that merely matches), no whitespace at its edges nor
    comment lines at its end, none over the one before it (tiles' k-grams are apart, but their last
    k - 1 characters may reach into the next tile)."""
    order = sorted(range(len(starts)), key=lambda n: (starts[n], ends[n]))
    trimmed: list[tuple[int, int] | None] = [None] * len(starts)
    reached = 0
    for n in order:
        start, end = _stripped(raw, max(0, starts[n], reached), min(len(raw), ends[n]))
        if "\n" in raw[start:end]:
            if raw[raw.rfind("\n", 0, start) + 1 : start].strip():  # begins within a line
                start = raw.index("\n", start) + 1
            line_end = raw.find("\n", end)
            if raw[end : len(raw) if line_end < 0 else line_end].strip():  # ends within a line
                end = raw.rfind("\n", start, end) + 1 or start
            start, end = _stripped(raw, start, end)
            # Ends before the comments after its last token (the tokenizer drops them, so the next
            # token's start, where the region ends, lies after them).
            while "\n" in raw[start:end] and raw[raw.rfind("\n", start, end) + 1 : end].lstrip().startswith("#"):
                start, end = _stripped(raw, start, raw.rfind("\n", start, end))
        if start < end:
            trimmed[n] = (start, end)
            reached = end
    return trimmed


def _stripped(raw: str, start: int, end: int) -> tuple[int, int]:
    while start < end and raw[start].isspace():
        start += 1
    while end > start and raw[end - 1].isspace():
        end -= 1
    return start, end


def _span(raw: str, start: int, end: int) -> Span:
    return Span(
        start=start, end=end, first_line=raw.count("\n", 0, start) + 1, last_line=raw.count("\n", 0, end - 1) + 1
    )


@dataclass
class Piece:
    """A piece of one side's code as shown: a region of fragment ``fragment`` (from 1), or code of none."""

    text: str
    fragment: int = 0

    @property
    def colour(self) -> int:
        return colour(self.fragment)


def colour(fragment: int) -> int:
    """Fragment n's colour class (from 1: .frag-0 ...), the same on both sides and in the list."""
    return (fragment - 1) % len(FRAGMENT_COLOURS)


@dataclass
class Block:
    """Consecutive pieces shown together, or (``folded``) unshared lines far from any region."""

    pieces: list[Piece]
    folded: bool = False
    first_line: int = 0
    last_line: int = 0


def blocks(raw: str, regions: list[tuple[int, int, int]], context: int = CONTEXT) -> list[Block]:
    """One side's code cut into blocks: its regions (start, end, fragment number; apart, in order)
    with ``context`` lines of code around each, and the unshared lines beyond folded."""
    shown: list[Block] = [Block(pieces=[])]
    at = 0
    for number, (start, end, fragment) in enumerate([*regions, (len(raw), len(raw), 0)]):
        gap = raw[at:start]
        lines = [n for n, char in enumerate(gap) if char == "\n"]
        # Kept: the rest of the line a region ends on and context lines after it; context lines and
        # the start of the line before the next region (none before the first, none after the last).
        head = lines[context] + 1 if number > 0 and len(lines) > context else (len(gap) if number > 0 else 0)
        tail = lines[-context - 1] + 1 if fragment and len(lines) > context else (0 if fragment else len(gap))
        if gap[head:tail].count("\n") > 1:
            shown[-1].pieces.append(Piece(gap[:head]))
            first_line, last_line = raw.count("\n", 0, at + head) + 1, raw.count("\n", 0, at + tail - 1) + 1
            shown.append(Block([Piece(gap[head:tail])], folded=True, first_line=first_line, last_line=last_line))
            shown.append(Block(pieces=[Piece(gap[tail:])]))
        else:
            shown[-1].pieces.append(Piece(gap))
        if fragment:
            shown[-1].pieces.append(Piece(raw[start:end], fragment))
        at = end
    for block in shown:
        block.pieces = [piece for piece in block.pieces if piece.text]
    return [block for block in shown if block.pieces]


def sides(code_1: str, code_2: str, found: list[Fragment]) -> tuple[list[Block], list[Block]]:
    """Both sides' blocks: fragment n's regions numbered n on both."""
    numbered = list(enumerate(found, start=1))
    first = [(f.first.start, f.first.end, n) for n, f in numbered]
    second = sorted((f.second.start, f.second.end, n) for n, f in numbered)
    return blocks(code_1, first), blocks(code_2, second)
