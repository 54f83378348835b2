"""Benchmark: code similarity, the old all-pairs path against the indexed one, side by side in one run.

    python benchmarks/similarity.py [--sizes 200 2000] [--old-up-to 200] [--seed 30]
        [--compare-with /path/to/another/checkout] [--keep DIR]

Synthetic courses of sequences-and-attention built from its known submissions, with realistic
variation: each student's functions are drawn from different known submissions (so two students
rarely share a whole solution), their local names renamed, the functions reordered, and lines of
their own added here and there (a print, a temporary, an assert: what students add), and about 2% of
the class planted copies of another student (renamed, reordered, a line or two added).

For each size it times, on an SQLite gradebook:
- recording: fingerprinting each submission as it is graded (what grading now adds per submission);
- the indexed path: ``gradebook.similarity.report.similarity`` (the kept fingerprints, the index, the
  candidates' shares, the highlights), and the same with no kept fingerprints (a gradebook graded
  before they were kept: fingerprinted on first use);
- one new submission against the rest: ``similar_to``;
- the old path (copydetect's CopyDetector over every latest submission, all pairs, as
  ``autograder similarity`` did) up to --old-up-to students; beyond it, estimated from its growth
  (quadratic: n(n-1)/2 comparisons), and both reports' pairs compared where both ran.

The class's report and one new submission are timed in a fresh process each (``--measure``): the
report's second run in it (the first pays for the imports) and one new submission's first call in
it (what ``autograder similarity --student`` pays, bar Python's start) and its second. With
--compare-with, the same is timed with another checkout's code (e.g. main's worktree) on the same
gradebook, one after the other, and the two reports compared: the same pairs, shares within 1e-12,
the same highlighting. --keep DIR keeps each size's gradebook there and reuses it on the next run
(building 2,000 fingerprints every file: a minute or more). The load average is printed with
each size.
Prints the figures as Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ASSIGNMENT = "sequences-and-attention"
KNOWN = ROOT / "assignments" / ASSIGNMENT / "known"
EXTRA_LINES = [
    "print({name}.shape)",
    "{name} = {name}.copy()",
    "assert {name} is not None",
    "tmp = len({name}) + {n}",
    "# {n}: checked by hand",
    "{name} = np.asarray({name}, dtype=float)",
    "debug = {n} * {n2}",
    "if {name} is None:\n{pad}    return None",
    "print('step', {n}, {name}[:{n2}])",
    "{name}_{n} = np.zeros(({n}, {n2}))",
]


def functions(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """A known submission's lines before its first function, and its top-level functions' sources."""
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines()
    found = [
        (node.name, "\n".join(lines[node.lineno - 1 : node.end_lineno]))
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    ]
    first = min((node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)), default=len(lines) + 1)
    return "\n".join(lines[: first - 1]), found


def known_parts() -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The known submissions' headers, each function's variants by name, the functions' order."""
    headers, variants, order = [], {}, []
    for path in sorted(KNOWN.glob("*.py")):
        try:
            header, found = functions(path)
        except SyntaxError:
            continue
        headers.append(header)
        for name, source in found:
            if name not in variants:
                order.append(name)
            variants.setdefault(name, []).append(source)
    return headers, variants, order


def renamed(source: str, rng: random.Random) -> str:
    """Local names changed as a student would (copydetect's tokenizer sees through it)."""
    names = sorted({n for n in re.findall(r"\b([a-z_][a-z0-9_]*)\s*=", source) if len(n) > 1})
    for name in names:
        if rng.random() < 0.6:
            source = re.sub(
                rf"\b{name}\b", rng.choice(["my_", "the_", "tmp_", ""]) + name + rng.choice(["", "2", "_v"]), source
            )
    return source


WRAPPERS = [
    "({name})",
    "np.asarray({name})",
    "{name} * 1",
    "1.0 * {name}",
    "({name} + 0)",
    "{name}[...]",
    "np.array({name}, copy=False)",
    "float({name})",
]


def reworded(line: str, rng: random.Random) -> str:
    """One name of the line written another way, as students write the same thing differently."""
    names = [
        m
        for m in re.finditer(r"(?<![.\w])([A-Za-z_]\w*)\b(?!\s*[=(])", line)
        if m.group(1)
        not in {
            "def",
            "return",
            "for",
            "in",
            "if",
            "not",
            "None",
            "is",
            "and",
            "or",
            "True",
            "False",
            "np",
            "range",
            "import",
            "else",
            "elif",
            "lambda",
        }
    ]
    if not names or line.lstrip().startswith(("def ", "for ", "import ", "from ")):
        return line
    chosen = rng.choice(names)
    return line[: chosen.start()] + rng.choice(WRAPPERS).format(name=chosen.group(1)) + line[chosen.end() :]


def with_own_lines(source: str, rng: random.Random, rate: float) -> str:
    """Lines of the student's own after some lines of the function's body, and some expressions written
    their own way."""
    out = []
    lines = source.splitlines()
    for number, line in enumerate(lines):
        out.append(reworded(line, rng) if number > 0 and rng.random() < rate else line)
        body = number > 0 and line.strip() and not line.strip().startswith(("return", "#"))
        if body and rng.random() < rate:
            pad = line[: len(line) - len(line.lstrip())]
            names = re.findall(r"\b([a-z_][a-z0-9_]*)\s*=", line) or ["x"]
            extra = rng.choice(EXTRA_LINES).format(
                name=rng.choice(names), n=rng.randrange(1, 99), n2=rng.randrange(1, 9), pad=pad
            )
            out.extend(pad + part if index == 0 else part for index, part in enumerate(extra.split("\n")))
    return "\n".join(out)


def course_of(size: int, seed: int, rate: float = 0.6, planted: dict[str, str] | None = None) -> dict[str, str]:
    """{student: code} for a synthetic class of ``size``; ``planted`` is told each planted copy's source."""
    rng = random.Random(seed)
    headers, variants, order = known_parts()
    students: dict[str, str] = {}
    for number in range(size):
        student = f"student{number:05d}"
        if number > 10 and rng.random() < 0.02:  # a planted copy of someone before
            source = rng.choice(list(students))
            if planted is not None:
                planted[student] = source
            first, *rest = students[source].split("\n\n\n")
            rng.shuffle(rest)  # its functions in another order
            students[student] = with_own_lines(renamed("\n\n\n".join([first, *rest]), rng), rng, 0.03)
            continue
        parts = [renamed(with_own_lines(rng.choice(variants[name]), rng, rate), rng) for name in order]
        rng.shuffle(parts)
        students[student] = rng.choice(headers) + "\n\n" + "\n\n\n".join(parts) + "\n"
    return students


def recorded_gradebook(folder: Path, students: dict[str, str], spec) -> tuple[Path, float]:
    """An SQLite gradebook with each student's submission recorded as grading records it (which
    fingerprints it); and the time fingerprinting the files takes, in all."""
    import hashlib

    from autograder.reports.model import Report
    from gradebook.book import Gradebook
    from gradebook.grading import record_report
    from gradebook.similarity.fingerprints import fingerprint_file

    files = folder / "files"
    files.mkdir(parents=True)
    fingerprinting = 0.0
    with Gradebook.open(folder / "gradebook.db") as book:
        row = book.run(lambda: book.sync_assignment(spec))
        for student, code in students.items():
            path = files / f"{student}.py"
            path.write_text(code)
            start = time.perf_counter()
            fingerprint_file(path)
            fingerprinting += time.perf_counter() - start
            report = Report(
                student=student,
                assignment=spec.name,
                score=0,
                max_score=spec.max_score,
                questions=[],
                submission=str(path),
                sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                reference="numpy",
                sandbox="benchmark",
                graded_at=datetime.now(UTC).isoformat(),
                grader_version="benchmark",
            )
            book.run(lambda report=report: record_report(book, row, report))
    return folder / "gradebook.db", fingerprinting


def old_path(students: dict[str, str], starter_code: str, threshold: float) -> tuple[float, set]:
    """copydetect's CopyDetector over every latest submission, all pairs: what similarity did."""
    from copydetect import CopyDetector

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        submitted, starter = Path(folder) / "submitted", Path(folder) / "starter"
        submitted.mkdir()
        starter.mkdir()
        names = {}
        for number, (student, code) in enumerate(sorted(students.items())):
            (submitted / f"{number:05d}.py").write_text(code, encoding="utf-8")
            names[str(submitted / f"{number:05d}.py")] = student
        (starter / "starter.py").write_text(starter_code, encoding="utf-8")
        detector = CopyDetector(
            test_dirs=[str(submitted)],
            boilerplate_dirs=[str(starter)],
            extensions=["py"],
            display_t=threshold,
            autoopen=False,
            silent=True,
            out_file=os.devnull,
        )
        detector.run()
        pairs = {
            frozenset((names[str(f1)], names[str(f2)])) for _, _, f1, f2, _, _, _ in detector.get_copied_code_list()
        }
    return time.perf_counter() - start, pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400, 1000, 2000])
    parser.add_argument("--old-up-to", type=int, default=400, help="run the old path up to this class size")
    parser.add_argument(
        "--exact-up-to",
        type=int,
        default=0,
        help="also run the report without the common limit (every pair copydetect lists) up to this size",
    )
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument(
        "--compare-with", type=Path, metavar="CHECKOUT", help="also time this checkout's code on the same gradebooks"
    )
    parser.add_argument(
        "--compare-floor",
        type=int,
        metavar="N",
        help="with --compare-with, also time this code with COMMON_FLOOR = N (the other's) and compare that "
        "report with the other's (the same pairs, whatever the limit: the comparison alone changed)",
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the built gradebooks here; reuse them")
    parser.add_argument("--measure", nargs=3, metavar=("CODE_ROOT", "GRADEBOOK", "STUDENT"), help=argparse.SUPPRESS)
    parser.add_argument("--floor", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        return _measure(*args.measure, threshold=args.threshold, floor=args.floor)

    from service.settings import configure

    with tempfile.TemporaryDirectory() as state:
        configure(ROOT, state=Path(state))  # Django, for the gradebook's models
        return _run(args)


def _measure(code_root: str, gradebook: str, student: str, threshold: float, floor: int | None) -> int:
    """In a fresh process, with ``code_root``'s code: one new submission's first call and second,
    the class's report twice (the second timed); the report as JSON on stdout. ``floor``: its
    COMMON_FLOOR instead."""
    sys.path.insert(0, code_root)
    for name in [name for name in sys.modules if name.split(".")[0] in {"gradebook", "service", "autograder"}]:
        del sys.modules[name]
    import gradebook.similarity.report as module
    from autograder.assignment import course_assignment
    from course.folder import find_course
    from gradebook.book import Gradebook
    from gradebook.similarity.report import similar_to, similarity
    from service.settings import configure

    if floor is not None:
        module.COMMON_FLOOR = floor
    with tempfile.TemporaryDirectory() as state:
        configure(Path(code_root), state=Path(state))
        spec = course_assignment(find_course(Path(code_root)), ASSIGNMENT)
        with Gradebook.open(Path(gradebook)) as book:
            times = {}
            start = time.perf_counter()
            similar_to(book, spec, student, threshold)
            times["single_first"] = time.perf_counter() - start
            start = time.perf_counter()
            one = similar_to(book, spec, student, threshold)
            times["single"] = time.perf_counter() - start
            similarity(book, spec, threshold)
            start = time.perf_counter()
            report = similarity(book, spec, threshold)
            times["indexed"] = time.perf_counter() - start
    # The pair's shown code: its fragments (an older checkout's: its highlighted HTML).
    shown = [p.model_dump(mode="json", include={"first_html", "second_html", "fragments"}) for p in report.pairs]
    pairs = [[p.first, p.second, p.first_share, p.second_share, s] for p, s in zip(report.pairs, shown, strict=True)]
    print(json.dumps({**times, "candidates": report.candidates, "single_candidates": one.candidates, "pairs": pairs}))
    return 0


def _measured(code_root: Path, gradebook: Path, student: str, threshold: float, floor: int | None = None) -> dict:
    """``_measure`` in a process of its own, with ``code_root``'s code first on the path."""
    done = subprocess.run(
        [sys.executable, __file__, "--threshold", str(threshold), "--measure", str(code_root), str(gradebook), student]
        + ([] if floor is None else ["--floor", str(floor)]),
        capture_output=True,
        text=True,
        check=True,
        cwd=code_root,
        env={**os.environ, "PYTHONPATH": str(code_root)},
    )
    return json.loads(done.stdout.splitlines()[-1])


def _same(ours: list, theirs: list) -> bool:
    """The same pairs in the same order, the same fragments, the shares within 1e-12."""
    return len(ours) == len(theirs) and all(
        a[:2] == b[:2] and abs(a[2] - b[2]) <= 1e-12 and abs(a[3] - b[3]) <= 1e-12 and a[4:] == b[4:]
        for a, b in zip(ours, theirs, strict=True)
    )


def _run(args: argparse.Namespace) -> int:
    from autograder.assignment import course_assignment
    from autograder.release import release
    from course.folder import find_course
    from gradebook.book import Gradebook
    from gradebook.models import Fingerprint, Submission
    from gradebook.similarity.fingerprints import code_of
    from gradebook.similarity.report import similarity

    spec = course_assignment(find_course(ROOT), ASSIGNMENT)
    rows = []
    old_times: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        starter_code = code_of(release(spec, Path(scratch) / "released"))
        sizes = sorted(set(args.sizes) | ({100} if args.old_up_to >= 100 else set()))
        for size in sizes:
            planted: dict[str, str] = {}
            students = course_of(size, args.seed, planted=planted)
            copies = {frozenset(pair) for pair in planted.items()}
            folder = (args.keep or Path(scratch)) / str(size)
            kept = folder / "gradebook.db"
            if args.keep and kept.is_file() and (folder / "fingerprinting").is_file():
                gradebook, fingerprinting = kept, float((folder / "fingerprinting").read_text())
            else:
                shutil.rmtree(folder, ignore_errors=True)
                gradebook, fingerprinting = recorded_gradebook(folder, students, spec)
                (folder / "fingerprinting").write_text(str(fingerprinting))
            load = os.getloadavg()
            with Gradebook.open(gradebook) as book:
                similarity(book, spec, args.threshold)  # the starter's fingerprint kept (once per assignment)
            student = f"student{size - 1:05d}"
            measured = _measured(ROOT, gradebook, student, args.threshold)
            other = _measured(args.compare_with, gradebook, student, args.threshold) if args.compare_with else None
            alike = measured
            if other is not None and args.compare_floor is not None:
                alike = _measured(ROOT, gradebook, student, args.threshold, args.compare_floor)
            with Gradebook.open(gradebook) as book:
                exact = None
                if size <= args.exact_up_to:
                    import gradebook.similarity.report as indexed_module

                    start = time.perf_counter()
                    with _no_common_limit(indexed_module):
                        whole = similarity(book, spec, args.threshold)
                    exact = (
                        time.perf_counter() - start,
                        {frozenset((p.first, p.second)) for p in whole.pairs},
                        whole.candidates,
                    )
                shas = list(book.objects(Submission).values_list("sha256", flat=True))
                book.objects(Fingerprint).filter(sha256__in=shas).delete()  # as if graded before they were kept
                start = time.perf_counter()
                similarity(book, spec, args.threshold)
                first_use = time.perf_counter() - start
            ours = {frozenset(p[:2]) for p in measured["pairs"]}
            row = {
                "size": size,
                "load": f"{load[0]:.1f} to {os.getloadavg()[0]:.1f}",
                "fingerprint_ms": 1000 * fingerprinting / size,
                "indexed": measured["indexed"],
                "first_use": first_use,
                "single": measured["single"],
                "single_first": measured["single_first"],
                "single_candidates": measured["single_candidates"],
                "candidates": measured["candidates"],
                "all_pairs": size * (size - 1) // 2,
                "pairs": len(measured["pairs"]),
                "planted": len(copies),
                "planted_found": len(copies & ours),
            }
            if other is not None:
                row.update(
                    other=other,
                    alike=alike,
                    same_as_other=_same(alike["pairs"], other["pairs"]),
                    other_pairs=len(other["pairs"]),
                )
            if exact is not None:
                row.update(
                    exact_seconds=exact[0],
                    exact_pairs=len(exact[1]),
                    exact_found=len(exact[1] & ours),
                    exact_candidates=exact[2],
                )
            if size <= args.old_up_to:
                old, theirs = old_path(students, starter_code, args.threshold)
                old_times[size] = old
                row.update(
                    old=old, same=theirs == ours, theirs=len(theirs), missed=_why_missed(theirs - ours, students)
                )
            rows.append(row)
            print({k: v for k, v in row.items() if k not in {"other", "alike"}}, file=sys.stderr, flush=True)
    _markdown(rows, old_times, args)
    return 0


class _no_common_limit:
    """The report with no fingerprint left out of the index (every pair copydetect lists, by the
    prefix filter alone): what the common limit costs in pairs, and saves in time."""

    def __init__(self, module):
        self.module, self.saved = module, module.common_limit

    def __enter__(self):
        self.module.common_limit = lambda students: students

    def __exit__(self, *_):
        self.module.common_limit = self.saved


def _why_missed(missed: set, students: dict[str, str]) -> list[str]:
    """For each pair the old path listed and the index did not: how many submissions hold the rarest
    fingerprint the two share (over the common limit: what the index leaves out)."""
    import numpy as np

    from gradebook.similarity.fingerprints import fingerprint
    from gradebook.similarity.report import _prepared

    if not missed:
        return []
    prints = {s: _prepared(fingerprint(code), np.zeros(0, dtype=np.int64)).distinct for s, code in students.items()}
    values, counts = np.unique(np.concatenate(list(prints.values())), return_counts=True)
    said = []
    for pair in sorted(missed, key=sorted):
        first, second = sorted(pair)
        shared = np.intersect1d(prints[first], prints[second])
        rarest = int(counts[np.searchsorted(values, shared)].min()) if len(shared) else 0
        said.append(f"{first}-{second}: rarest shared fingerprint in {rarest} submissions")
    return said


def _markdown(rows: list[dict], old_times: dict[int, float], args: argparse.Namespace) -> None:
    measured = sorted(old_times)
    if len(measured) >= 2:  # old path: a n(n-1)/2 fit through its largest measured size
        largest = measured[-1]
        per_pair = old_times[largest] / (largest * (largest - 1) / 2)
    else:
        per_pair = None
    print(f"Threshold {args.threshold:.0%}, seed {args.seed}.\n")
    print(
        "| students | old all-pairs (s) | indexed (s) | old / indexed | indexed, no kept fingerprints (s) "
        "| pairs compared (of all) | pairs listed | same pairs as old | one new vs the rest (s) | its candidates "
        "| fingerprinting at grading (ms each) | planted copies listed | copydetect's pairs listed (no limit: s, candidates) "
        "| one new: first call in a fresh process (s) | load average |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        size = row["size"]
        if "old" in row:
            old, same = f"{row['old']:.1f}", "yes" if row["same"] else f"no ({row['theirs']} vs {row['pairs']})"
        elif per_pair is not None:
            old, same = f"~{per_pair * size * (size - 1) / 2:.0f} (estimated)", "not run"
        else:
            old, same = "not run", "not run"
        ratio = row["old"] if "old" in row else per_pair * size * (size - 1) / 2 if per_pair else None
        times = f"{ratio / row['indexed']:.0f}x" if ratio else "-"
        print(
            f"| {size:,} | {old} | {row['indexed']:.2f} | {times} "
            f"| {row['first_use']:.2f} | {row['candidates']:,} ({row['all_pairs']:,}) | {row['pairs']} | {same} "
            f"| {row['single']:.2f} | {row['single_candidates']} | {row['fingerprint_ms']:.1f} "
            f"| {row['planted_found']} of {row['planted']} | {_exact(row)} | {row['single_first']:.2f} | {row['load']} |"
        )
    if any("other" in row for row in rows):
        floor = "" if args.compare_floor is None else f", this code also with COMMON_FLOOR = {args.compare_floor}"
        print(f"\nSide by side with {args.compare_with} (its code, the same gradebooks, one after the other{floor}):\n")
        print(
            "| students | report: this (s) | this, the other's floor (s) | report: other (s) | other / this, same floor "
            "| candidates: this, same floor, other | pairs: this, same floor, other | same floor: same report "
            "| one new, second call: this, other (s) | one new, first call: this, other (s) |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in rows:
            if "other" not in row:
                continue
            other, alike = row["other"], row["alike"]
            same = "yes" if row["same_as_other"] else "no"
            print(
                f"| {row['size']:,} | {row['indexed']:.2f} | {alike['indexed']:.2f} | {other['indexed']:.2f} "
                f"| {other['indexed'] / alike['indexed']:.1f}x "
                f"| {row['candidates']:,}, {alike['candidates']:,}, {other['candidates']:,} "
                f"| {row['pairs']}, {len(alike['pairs'])}, {row['other_pairs']} | {same} "
                f"| {row['single']:.2f}, {other['single']:.2f} | {row['single_first']:.2f}, {other['single_first']:.2f} |"
            )
    for row in rows:
        if row.get("missed"):
            print(f"\nMissed at {row['size']:,}: " + "; ".join(row["missed"]))


def _exact(row: dict) -> str:
    if "exact_pairs" not in row:
        return "not run"
    return (
        f"{row['exact_found']} of {row['exact_pairs']} ({row['exact_seconds']:.1f} s, "
        f"{row['exact_candidates']:,} candidates)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
