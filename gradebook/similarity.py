"""Code similarity over each student's latest submission of an assignment, with copydetect (a
maintained, offline implementation of winnowing, as MOSS uses), the released notebook's starter code
excluded as boilerplate. A report for the instructor's judgement, never a penalty."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.submissions import Unreadable, extract

from .book import Gradebook
from .grades import latest_submissions

DEFAULT_THRESHOLD = 0.5  # the share of a file's code found in the other's, from which a pair is listed


class SimilarPair(BaseModel):
    first: str  # student ids
    second: str
    first_share: float  # the share of the first's code found in the second's
    second_share: float
    first_html: str  # the code, HTML-escaped, the shared regions highlighted
    second_html: str


class SimilarityReport(BaseModel):
    assignment: str
    compared: int
    unreadable: list[str] = []
    pairs: list[SimilarPair] = []


def _code(path: Path) -> str | None:
    try:
        return "\n\n".join(cell.source for cell in extract(path).cells)
    except Unreadable:
        return None


def similarity(book: Gradebook, spec: AssignmentSpec, threshold: float = DEFAULT_THRESHOLD) -> SimilarityReport:
    """Pairs of students whose latest submissions share more than ``threshold`` of their code."""
    from copydetect import CopyDetector

    from autograder.release import release

    latest = book.run(lambda: latest_submissions(book, spec.name))
    report = SimilarityReport(assignment=spec.name, compared=0)
    with tempfile.TemporaryDirectory() as folder:
        submitted, starter = Path(folder) / "submitted", Path(folder) / "starter"
        submitted.mkdir()
        starter.mkdir()
        students = {}
        for number, (student_id, submission) in enumerate(sorted(latest.items())):
            code = _code(Path(submission.file))
            if code is None:
                report.unreadable.append(student_id)
                continue
            # Files named by number: a student's name never reaches a path.
            path = submitted / f"{number:05d}.py"
            path.write_text(code, encoding="utf-8")
            students[str(path)] = student_id
        report.compared = len(students)
        released = release(spec, Path(folder) / "released")
        (starter / "starter.py").write_text(_code(released) or "", encoding="utf-8")
        if len(students) < 2:
            return report
        detector = CopyDetector(test_dirs=[str(submitted)], boilerplate_dirs=[str(starter)], extensions=["py"],
                                display_t=threshold, autoopen=False, silent=True, out_file=os.devnull)  # fmt: skip
        detector.run()
        for share_1, share_2, file_1, file_2, html_1, html_2, _ in detector.get_copied_code_list():
            report.pairs.append(SimilarPair(
                first=students[str(file_1)], second=students[str(file_2)], first_share=float(share_1),
                second_share=float(share_2), first_html=html_1, second_html=html_2,
            ))  # fmt: skip
    report.pairs.sort(key=lambda pair: -max(pair.first_share, pair.second_share))
    return report


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
