"""Each submission's code fingerprint, computed once when it is graded and kept in the gradebook,
keyed by the file's sha256 (students who hand in the same file share one row).

The fingerprint is copydetect's: its tokenizer (``filter_code``: names become V, F, O, strings S,
whitespace and comments dropped) and its k-grams of the filtered code (k = its noise threshold, 25;
with its default guarantee threshold the winnowing window is 1, so every k-gram is a fingerprint).
copydetect hashes the k-grams with Python's ``hash()``, which changes from one process to the next;
kept hashes must not, so each k-gram is hashed here by a fixed 64-bit function instead. Which
k-grams are fingerprints does not depend on the hash with a window of 1, so the shares computed
from these are copydetect's (two different k-grams colliding in 64 bits aside)."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from django.db import transaction

from autograder.submissions import Unreadable, extract

if TYPE_CHECKING:
    from autograder.assignment import Assignment as AssignmentSpec
    from gradebook import models
    from gradebook.book import Gradebook

logger = logging.getLogger("gradewright.jobs")
K = 25  # copydetect's default noise threshold: the shortest run of filtered code counted as shared
# The fingerprinting scheme: kept with each row; a row of another scheme is fingerprinted again.
SCHEME = 1
# Code past this many characters is left out (a hand-in may be 5 MB: tokenizing it would take minutes
# and its fingerprint 40 MB); a notebook's code is a few thousand characters.
MAX_CODE = 50_000
_MULTIPLIER = np.uint64(0x100000001B3)  # FNV's 64-bit prime: odd, so the rolling hash loses no bits


@dataclass
class Code:
    """One file's code as copydetect sees it: every k-gram's hash of the filtered text, in order (the
    k-gram at position i starts at filtered character i), and the raw text (for highlighting)."""

    hashes: np.ndarray  # int64
    filtered_length: int
    unreadable: str = ""  # why the file could not be read (then the rest is empty)
    text: str | None = None
    packed: bytes = b""  # the raw text as kept, unpacked only for the pairs highlighted
    # copydetect's offsets of the filtered code back into the raw text (to highlight in the raw), as
    # the tokenizer gave them when fingerprinting, or as kept (int32 pairs, zlib), unpacked only for
    # the pairs highlighted; neither for a row kept before they were (the tokenizer runs again then).
    known_offsets: np.ndarray | None = None
    packed_offsets: bytes | None = None

    @property
    def raw(self) -> str:
        if self.text is None:
            self.text = zlib.decompress(self.packed).decode("utf-8") if self.packed else ""
        return self.text

    @property
    def offsets(self) -> np.ndarray | None:
        if self.known_offsets is None and self.packed_offsets is not None:
            flat = np.frombuffer(zlib.decompress(self.packed_offsets), dtype="<i4")
            self.known_offsets = flat.astype(np.int64).reshape(-1, 2)
        return self.known_offsets


def code_of(path: Path) -> str:
    """The code a submission (notebook or .py) holds, its cells joined; raises Unreadable."""
    text = "\n\n".join(cell.source for cell in extract(path).cells)
    # copydetect reads its files with universal newlines: the same text here.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def copydetect_utils() -> ModuleType:
    """copydetect's ``utils`` (its tokenizer, its copied slices, its highlighting): all this package
    uses of it. Loaded without running copydetect's package ``__init__`` where that is not imported
    yet: the ``__init__`` imports its detector and with it matplotlib.pyplot, 0.6 s of every fresh
    process that fingerprints a file or highlights a pair, for plots never drawn here. A later
    ``import copydetect`` (the tests', the benchmark's) runs the ``__init__`` then and finds these
    modules loaded: it shares them."""
    found = sys.modules.get("copydetect.utils")
    if found is not None:
        return found
    with _LOADING:
        if "copydetect" in sys.modules:  # the package is imported already (or is being loaded here)
            import copydetect.utils

            return copydetect.utils
        package = importlib.util.find_spec("copydetect")  # found, not run
        if package is None or package.submodule_search_locations is None:
            import copydetect.utils  # as Python imports it: its ImportError where it is missing

            return copydetect.utils
        # A stand-in for the package (its path, not its __init__) while utils and the winnowing
        # module it imports load beside it; gone after, so the real package is imported as usual.
        sys.modules["copydetect"] = importlib.util.module_from_spec(package)
        try:
            import copydetect.utils
        finally:
            del sys.modules["copydetect"]
        return copydetect.utils


_LOADING = threading.Lock()


def filtered(raw: str) -> tuple[str, np.ndarray]:
    """copydetect's tokenized, filtered code, and its offsets back into the raw text."""
    text, offsets = copydetect_utils().filter_code(raw, "code.py", "python")
    return text, offsets


def kgram_hashes(text: str, k: int = K) -> np.ndarray:
    """A fixed 64-bit hash of every k-gram of ``text``: a polynomial rolling hash of the code
    points, mixed by splitmix64's finaliser so nearby k-grams spread over all 64 bits."""
    count = len(text) - k + 1
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    hashed = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(k):  # k vectorised steps, whatever the length
            hashed = hashed * _MULTIPLIER + points[offset : offset + count] + np.uint64(1)
        hashed ^= hashed >> np.uint64(30)
        hashed *= np.uint64(0xBF58476D1CE4E5B9)
        hashed ^= hashed >> np.uint64(27)
        hashed *= np.uint64(0x94D049BB133111EB)
        hashed ^= hashed >> np.uint64(31)
    return hashed.view(np.int64)


def fingerprint(raw: str) -> Code:
    raw = raw[:MAX_CODE]
    text, offsets = filtered(raw)
    return Code(hashes=kgram_hashes(text), filtered_length=len(text), text=raw, known_offsets=offsets)


def fingerprint_file(path: Path) -> Code:
    try:
        return fingerprint(code_of(path))
    except Unreadable as exc:
        return Code(hashes=np.zeros(0, dtype=np.int64), filtered_length=0, unreadable=str(exc) or "unreadable", text="")


def _row(sha256: str, code: Code) -> models.Fingerprint:
    from gradebook.models import Fingerprint

    return Fingerprint(
        sha256=sha256,
        scheme=SCHEME,
        hashes=code.hashes.astype("<i8").tobytes(),
        filtered_length=code.filtered_length,
        code=zlib.compress(code.raw.encode("utf-8")),
        unreadable=code.unreadable,
        offsets=_packed_offsets(code.offsets),
    )


def _packed_offsets(offsets: np.ndarray | None) -> bytes | None:
    # Positions within MAX_CODE characters (or copydetect's -1): int32 holds them.
    return None if offsets is None else zlib.compress(np.asarray(offsets, dtype="<i4").tobytes())


def _code(row: models.Fingerprint) -> Code:
    return Code(
        hashes=_hashes(row.hashes),
        filtered_length=row.filtered_length,
        unreadable=row.unreadable,
        packed=bytes(row.code),
        packed_offsets=None if row.offsets is None else bytes(row.offsets),
    )


def _hashes(kept: bytes | memoryview) -> np.ndarray:
    """A row's hashes, read in place (no copy: 24 MB at 2,000 students; a copy only where int64
    is not little-endian). Read-only: nothing changes a Code's hashes."""
    return np.frombuffer(kept, dtype="<i8").astype(np.int64, copy=False)


def remember(book: Gradebook, sha256: str, path: Path) -> None:
    """Fingerprint a graded file, once per file (milliseconds): what recording a report does."""
    from gradebook.models import Fingerprint

    if book.objects(Fingerprint).filter(sha256=sha256, scheme=SCHEME).exists():
        return
    # Similarity never costs a grade: whatever the tokenizer or the row's write raises is logged and
    # left (in a savepoint: the grade's transaction goes on); a report fingerprints the file again.
    try:
        row = _row(sha256, fingerprint_file(path))
        with transaction.atomic(using=book.alias):
            book.objects(Fingerprint).filter(sha256=sha256).delete()  # another scheme's
            # ignore_conflicts: two workers recording the same file at once keep one row, and neither fails.
            book.objects(Fingerprint).bulk_create([row], ignore_conflicts=True)
    except Exception:
        logger.exception("%s: could not be fingerprinted for similarity; its grade is recorded all the same", path)


def fingerprints(book: Gradebook, files: dict[str, str], pause: Callable[[], None] | None = None) -> dict[str, Code]:
    """The kept fingerprints of ``files`` (sha256 -> the path it was graded from); a file graded
    before fingerprints were kept (or under another scheme) is fingerprinted now, and kept.
    ``pause`` is called between files fingerprinted now (tens of milliseconds each)."""
    from gradebook.models import Fingerprint

    found: dict[str, Code] = {}
    shas = list(files)
    for start in range(0, len(shas), 500):  # a bounded IN (...) list
        rows = book.objects(Fingerprint).filter(sha256__in=shas[start : start + 500], scheme=SCHEME)
        for sha256, hashes, length, unreadable, code, offsets in rows.values_list(
            "sha256", "hashes", "filtered_length", "unreadable", "code", "offsets"
        ):  # plain rows: no model instance per submission
            found[sha256] = Code(
                hashes=_hashes(hashes),
                filtered_length=length,
                unreadable=unreadable,
                packed=bytes(code),
                packed_offsets=None if offsets is None else bytes(offsets),
            )
        if pause is not None:
            pause()
    missing = [sha for sha in shas if sha not in found]
    if missing:
        new = {}
        for sha in missing:
            new[sha] = fingerprint_file(Path(files[sha]))
            if pause is not None:
                pause()
        book.run(lambda: _store(book, new))
        found.update(new)
    return found


def _store(book: Gradebook, codes: dict[str, Code]) -> None:
    from gradebook.models import Fingerprint

    book.objects(Fingerprint).filter(sha256__in=list(codes)).exclude(scheme=SCHEME).delete()
    book.objects(Fingerprint).bulk_create([_row(sha, code) for sha, code in codes.items()], ignore_conflicts=True)


def starter(book: Gradebook, spec: AssignmentSpec) -> Code:
    """The released notebook's code, fingerprinted once per version of the source notebook (releasing
    imports nbgrader, seconds) and kept like a submission's, under a key of its own."""
    import tempfile

    from gradebook.models import Fingerprint

    source = Path(spec.notebook_path).read_bytes()
    key = hashlib.sha256(b"starter\0" + source).hexdigest()
    row = book.objects(Fingerprint).filter(sha256=key, scheme=SCHEME).first()
    if row is not None:
        return _code(row)
    # Imported only now: it imports nbgrader and nbformat (jsonschema's grammars: seconds), which a
    # kept starter's fingerprint (every report but an assignment's first) never needs.
    from autograder.release import release

    with tempfile.TemporaryDirectory() as folder:
        released = release(spec, Path(folder))
        code = fingerprint_file(released)
    book.run(lambda: _store(book, {key: code}))
    return code
