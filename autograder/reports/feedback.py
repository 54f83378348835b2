"""``<student>.feedback.txt``: the report in words, for the student to read."""

from __future__ import annotations

from pathlib import Path

from course.wording import plural, shown_score
from untrusted.text import printable

from .model import HandMark, LatePenalty, Report
from .names import report_stem

MARKS = {"passed": "+", "partial": "~", "failed": "x", "error": "!", "timeout": "!", "manual": "?", "not_graded": "-"}


def text(report: Report) -> str:
    lines = [
        f"{report.assignment}: feedback for {report.student}",
        f"Score: {shown_score(report.score)} / {shown_score(report.max_score)}",
    ]
    if report.late and report.late.percent:
        lines += late_lines(report, report.late)
    lines.append("")
    for question in report.questions:
        mark = MARKS[question.status]
        status: str = question.status
        if question.mark:
            status = "score set by hand" if question.mark.override else "marked by hand"
            mark = "+" if question.score >= question.max_score else "x" if question.score == 0 else "~"
        lines.append(
            f"[{mark}] {question.id}: {shown_score(question.score)} / {shown_score(question.max_score)} ({status})"
        )
        if question.mark:
            lines += mark_lines(question.mark)
        else:
            lines += [f"    {line}" for line in question.feedback.splitlines()]
        lines.append("")
    if report.errors:
        lines.append("Problems running your submission:")
        lines += [f"  - {error}" for error in report.errors]
        lines.append("")
    if report.output:
        lines += ["What your notebook printed while it ran (first 64 KiB):", report.output.rstrip(), ""]
    lines.append(f"Graded {report.graded_at} by grader {report.grader_version} (reference: {report.reference}).")
    return "\n".join(lines) + "\n"


def late_lines(report: Report, late: LatePenalty) -> list[str]:
    """The report's late penalty, ``late``, apart from the earned score."""
    units = plural(late.units_late, late.unit)
    why = "after the last day late work is accepted" if late.after_late_until else f"{units} late"
    return [
        f"Late penalty: -{shown_score(late.points)} ({late.percent:g}%: submitted {late.submitted_at}, due {late.due}, {why})",
        f"Final score: {shown_score(report.final_score)} / {shown_score(report.max_score)}",
    ]


def mark_lines(mark: HandMark) -> list[str]:
    lines = [f"    {line}" for line in mark.rubric] + [f"    {line}" for line in mark.comment.splitlines()]
    if mark.answer_changed:
        lines.append("    (answer changed since marked: this mark was given for an earlier submission)")
    return lines


def write(report: Report, folder: Path) -> Path:
    path = folder / f"{report_stem(report.student)}.feedback.txt"
    # Everything a student controls (names, messages, what the notebook printed) is shown, never acted on.
    path.write_text(printable(text(report), keep_newlines=True), encoding="utf-8")
    return path
