"""Benchmark: generated questions for a class of 2,000, drawn, exported, put on an exam and graded.

    python benchmarks/generated_variants.py [--students 2000] [--variants 4]

Four steps, each timed (CPU time of this process) and checked:

- draw: each of the question bank's generated questions for every student (twice for one in ten,
  which must give the same variant), with how many distinct variants the class gets;
- answer: every student's typed answer to each numeric and short-answer variant judged by
  ``Variant.is_right`` (their own answer must be right; the answer of the next student, where it
  differs, wrong: a copied answer does not pass);
- export: the bank with ``--variants`` in every format, and back through ``course import checks``
  where the format has an importer (the second export must equal the first);
- exam: a paper exam of two zones (a generated question, alternatives, points) built for every
  student, each sheet answered (right where the student's index and the question agree, so every
  score is known), and graded: every score must be the expected one.

Prints a Markdown table for docs/explanation/performance.md.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course.catalog import load_catalog  # noqa: E402
from course.exams import build_exam, grade_exam  # noqa: E402
from course.exams.variants import ExamKey  # noqa: E402
from course.exports import EXPORTERS, export_checks  # noqa: E402
from course.generated import draw  # noqa: E402
from course.imports import import_checks  # noqa: E402

BANK = ROOT / "lesson_data" / "module-10-question-bank.lesson.json"
Q = "module-10-question-bank"
DEFINITION = f"""title = "Benchmark exam"
[[zones]]
title = "Scaling"
choose = 2
points = 2
questions = ["{Q}-scale-factor-known-mistake", "{Q}-check-1",
             {{ alternatives = ["{Q}-check-2", "{Q}-check-3"] }}]
[[zones]]
title = "Attention"
choose = 3
questions = ["{Q}-check-4", "{Q}-check-5", "{Q}-check-6", "{Q}-check-7", "{Q}-check-8"]
"""
IMPORTABLE = {"qti12", "qti21", "moodle", "gift", "json"}
SUFFIX = {"qti12": "zip", "qti21": "zip", "moodle": "xml", "gift": "gift", "json": "json"}


def timed(step):
    start = time.process_time()
    result = step()
    return time.process_time() - start, result


def draw_all(students: list[str]) -> dict[str, int]:
    [lesson] = load_catalog([BANK]).lessons
    distinct: dict[str, int] = {}
    for question in lesson.generated:
        seen = set()
        for n, student in enumerate(students):
            variant = draw(question, student)
            if n % 10 == 0:
                assert draw(question, student) == variant, f"{question.id}: not the same for {student}"
            seen.add(repr([variant.stem.plain(), variant.answer]))
        distinct[question.id] = len(seen)
    return distinct


def answer_all(students: list[str]) -> tuple[int, int]:
    """Each student's own answer (right) and the next student's (wrong where it differs by more than
    the tolerance): how many were judged, and how many copied answers were caught."""
    [lesson] = load_catalog([BANK]).lessons
    judged = caught = 0
    for question in (q for q in lesson.generated if q.kind != "multiple-choice"):
        variants = [draw(question, student) for student in students]
        for mine, next_one in zip(variants, variants[1:] + variants[:1], strict=True):
            assert mine.is_right(_typed(mine.answer)), (question.id, mine.answer)
            copied = mine.is_right(_typed(next_one.answer))
            if isinstance(mine.answer, float) and isinstance(next_one.answer, float):
                apart = abs(mine.answer - next_one.answer) > 2 * (mine.tolerance.absolute + 1e-6)
            else:
                apart = "".join(str(mine.answer).split()) != "".join(str(next_one.answer).split())
            assert not (apart and copied), (question.id, mine.answer, next_one.answer)
            judged += 2
            caught += apart
    return judged, caught


def _typed(answer: float | str | None) -> str:
    return f"{answer:.6f}" if isinstance(answer, float) else str(answer)


def export_all(folder: Path, variants: int) -> dict[str, float]:
    times = {}
    for fmt in sorted(EXPORTERS):
        out = folder / f"bank.{SUFFIX.get(fmt, 'tar.gz')}"
        spent, _ = timed(lambda fmt=fmt, out=out: export_checks([BANK], fmt, out, variants=variants))
        if fmt in IMPORTABLE:
            back = folder / f"{fmt}.lesson.json"
            more, _ = timed(lambda out=out, back=back: import_checks(out, back))
            again = folder / f"again.{SUFFIX[fmt]}"
            more_again, _ = timed(
                lambda fmt=fmt, back=back, again=again: export_checks([back], fmt, again, variants=variants)
            )
            assert again.read_bytes() == out.read_bytes(), f"{fmt}: export, import, export differs"
            spent += more + more_again
        times[fmt] = spent
    return times


def exam(folder: Path, students: list[str]) -> tuple[float, float, int]:
    roster = folder / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"{s},{s},{s}@example.org\n" for s in students))
    definition = folder / "exam.toml"
    definition.write_text(DEFINITION)
    built, _ = timed(lambda: build_exam(roster, folder / "exam", seed=11, lessons=[BANK], definition=definition))
    key = ExamKey.model_validate_json((folder / "exam" / "key.json").read_text())
    expected, rows = {}, []
    for n, variant in enumerate(key.variants):
        row, score = [variant.student.student_id], 0.0
        for question in variant.questions:
            right = key.correct_letter(question)
            if (n + question.position) % 3:
                row.append(right)
                score += question.points
            else:
                row.append(next(letter for letter in question.letters if letter != right))
        rows.append(row)
        expected[variant.student.student_id] = score
    responses = folder / "responses.csv"
    with responses.open("w", newline="") as handle:
        csv.writer(handle).writerows([["student_id", *(f"q{n}" for n in range(1, 6))], *rows])
    graded, result = timed(lambda: grade_exam(folder / "exam", responses, folder / "results"))
    wrong = [r.student_id for r in result.results if r.score != expected[r.student_id]]
    assert not wrong, f"{len(wrong)} scores differ from the expected ones, {wrong[:3]} first"
    variants = len({q for q in key.questions if "~" in q})
    return built, graded, variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2000)
    parser.add_argument("--variants", type=int, default=4)
    args = parser.parse_args()
    students = [f"student-{n:05}" for n in range(args.students)]
    drawing, distinct = timed(lambda: draw_all(students))
    answering, (judged, caught) = timed(lambda: answer_all(students))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        exporting, times = timed(lambda: export_all(folder, args.variants))
        _, (built, graded, variants) = timed(lambda: exam(folder, students))
    print(f"| step ({args.students} students) | CPU s | checked |")
    print("| --- | --- | --- |")
    kinds = ", ".join(f"{name} {count}" for name, count in distinct.items())
    print(f"| draw every generated question | {drawing:.2f} | same variant again; distinct variants: {kinds} |")
    print(f"| judge typed answers | {answering:.2f} | {judged} answers: each own right, {caught} copied ones wrong |")
    formats = ", ".join(f"{fmt} {spent:.2f}" for fmt, spent in times.items())
    print(f"| export --variants {args.variants} (and import, export) | {exporting:.2f} | {formats} |")
    print(f"| build a zoned exam | {built:.2f} | {variants} drawn variants on the sheets |")
    print(f"| grade every sheet | {graded:.2f} | every score the expected one |")


if __name__ == "__main__":
    main()
