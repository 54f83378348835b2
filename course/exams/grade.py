"""``course exam grade``: scores, feedback per student, and an item analysis (CSV and a chart)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from untrusted import spreadsheet
from untrusted.text import for_markdown

from ..errors import Problem
from ..private_files import private_text, write_private
from ..wording import plural, shown_score
from .csvfiles import ExamError, problem, read_rows
from .stats import GroupStatistics, difficulty, group_analysis, point_biserial, write_groups
from .variants import ExamKey, Variant, VariantQuestion, Written


class OpenMark(BaseModel):
    """An open question's mark, given by hand: 0 to 1 point, like each check question."""

    score: float
    comment: str = ""


OPEN_POINTS = 1.0  # what an open question is worth, as much as a check question


class StudentResult(BaseModel):
    student_id: str
    name: str
    answers: dict[int, str | None]  # position -> letter, None when unanswered
    correct: int
    answered: int
    automatic: int
    by_hand: int
    marks: dict[int, OpenMark] = {}  # position -> the open question's mark, when given
    # The check questions' points, right and possible, where an exam's zones weigh them (else their counts).
    earned: float | None = None
    worth: float | None = None

    @property
    def marked(self) -> float:
        return sum(mark.score for mark in self.marks.values())

    @property
    def score(self) -> float:
        return (self.correct if self.earned is None else self.earned) + self.marked

    @property
    def max_score(self) -> float:
        return (self.automatic if self.worth is None else self.worth) + OPEN_POINTS * self.by_hand


class ExamGradeResult(BaseModel):
    graded: int
    problems: list[Problem] = []
    results: list[StudentResult] = []


def grade_exam(
    exam: Path, responses: Path, out: Path, marks: dict[tuple[str, str], OpenMark] | None = None
) -> ExamGradeResult:
    """Grade the answer sheets; ``marks`` are the open questions' marks given by hand, by (student id,
    question id), and count in the score."""
    key = load_key(exam)
    marks = marks or {}
    positions = len(key.variants[0].questions)
    columns = [f"q{n}" for n in range(1, positions + 1)]
    _, rows = read_rows(responses, ["student_id", *columns])
    variants = {variant.student.student_id: variant for variant in key.variants}
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    results: list[StudentResult] = []
    for row_number, row in rows:
        student_id = row["student_id"]
        if student_id not in variants:
            problems.append(
                problem(responses, row_number, f"student_id {student_id!r} has no variant in this exam; row skipped")
            )
            continue
        if student_id in seen:
            problems.append(
                problem(
                    responses,
                    row_number,
                    f"student_id {student_id!r} already answered on row {seen[student_id]}; row skipped",
                )
            )
            continue
        seen[student_id] = row_number
        result = _grade_row(key, variants[student_id], row, responses, row_number, problems)
        result.marks = {
            question.position: marks[(student_id, question.question)]
            for question in variants[student_id].questions
            if question.kind == "open" and (student_id, question.question) in marks
        }
        results.append(result)
    for student_id in variants:
        if student_id not in seen:
            problems.append(
                Problem(file=str(responses), where="rows", what=f"no answers for {student_id!r}", severity="warning")
            )
    if not out.parent.is_dir():
        raise ExamError(f"{out}: cannot write here: the folder {out.parent} does not exist")
    out.mkdir(exist_ok=True)
    _write_scores(out / "scores.csv", results)
    (out / "feedback").mkdir(exist_ok=True)
    for result in results:
        write_private(out / "feedback" / f"{result.student_id}.md", _feedback(key, variants[result.student_id], result))
    items = item_analysis(key, results)
    _write_items(out / "items.csv", items)
    groups = group_analysis(items, {result.student_id: automatic_total(result) for result in results})
    if groups:
        write_groups(out / "groups.csv", groups)
    _chart(out / "items.png", items, groups)
    return ExamGradeResult(graded=len(results), problems=problems, results=results)


def load_key(exam: Path) -> ExamKey:
    path = exam / "key.json"
    try:
        return ExamKey.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExamError(f"{path}: no such file; is {exam} a folder made by `course exam build`?") from None
    except (ValidationError, ValueError) as exc:
        raise ExamError(f"{path}: not an exam key ({str(exc).splitlines()[0]})") from None


def _grade_row(
    key: ExamKey, variant: Variant, row: dict[str, str], path: Path, row_number: int, problems: list[Problem]
) -> StudentResult:
    answers: dict[int, str | None] = {}
    correct = answered = automatic = by_hand = 0
    earned = worth = 0.0
    for question in variant.questions:
        value = row.get(f"q{question.position}", "").strip()
        if question.kind == "open":
            by_hand += 1
            answers[question.position] = None
            continue
        automatic += 1
        worth += question.points
        written = key.questions[question.question].written
        if written is not None:
            # What the student wrote, as the staff or the scanning service entered it; "?" is unreadable.
            if value and _judged(written, value) is None:
                problems.append(
                    problem(
                        path,
                        row_number,
                        f"q{question.position}: {value!r} is {'marked unreadable' if value == UNREADABLE else 'not a number'} "
                        f"({variant.student.student_id}'s answer); counted wrong",
                        severity="warning",
                    )
                )
        else:
            value = value.upper()
            if value and value not in question.letters:
                letters = "".join(question.letters)
                problems.append(
                    problem(
                        path,
                        row_number,
                        f"q{question.position}: {value!r} is not an answer on {variant.student.student_id}'s variant (one of {letters}); counted as unanswered",
                    )
                )
                value = ""
        answers[question.position] = value or None
        right = is_right(key, question, answers[question.position])  # the one rule, a letter or a written value
        answered += bool(value)
        correct += right
        earned += question.points if right else 0.0
    weighed = any(question.points != 1 for question in variant.questions)
    return StudentResult(
        earned=earned if weighed else None,
        worth=worth if weighed else None,
        student_id=variant.student.student_id,
        name=variant.student.name,
        answers=answers,
        correct=correct,
        answered=answered,
        automatic=automatic,
        by_hand=by_hand,
    )


UNREADABLE = "?"  # what the staff or a scanning service enter for a written answer no one can read


def _judged(written: Written, value: str) -> bool | None:
    """A written answer right or wrong by its question's tolerance; None when it cannot be read."""
    return None if value == UNREADABLE else written.judge(value)


def is_right(key: ExamKey, question: VariantQuestion, answer: str | None) -> bool:
    """Whether a student's answer to a question graded automatically is right: the letter of the
    right option, or a written value within the question's tolerance (the one rule)."""
    if answer is None:
        return False
    written = key.questions[question.question].written
    if written is not None:
        return bool(_judged(written, answer))
    return answer == key.correct_letter(question)


class ItemStatistics(BaseModel):
    question: str
    lesson: str
    kind: str
    students: int
    answered: int
    correct: int
    difficulty: float | None
    discrimination: float | None
    chosen: list[int]  # per option, in the check's display order
    unanswered: int
    correct_option: int | None  # 1-based, in display order
    # Where the question came from: the generated question a drawn variant is of (and its values),
    # the zone's entry it is one alternative of; and each student's hit, for a group's statistics.
    source: str | None = None
    variant: str | None = None
    alternatives: str | None = None
    hits: dict[str, int] = Field(default_factory=dict, exclude=True)


def automatic_total(result: StudentResult) -> float:
    """A student's total on the check questions (their points, where zones weigh them), which an
    item's discrimination is measured against."""
    return result.correct if result.earned is None else result.earned


def item_analysis(key: ExamKey, results: list[StudentResult]) -> list[ItemStatistics]:
    variants = {variant.student.student_id: variant for variant in key.variants}
    totals = {result.student_id: automatic_total(result) for result in results}
    statistics = []
    on_a_variant = {q.question for variant in key.variants for q in variant.questions}
    for question_id, bank in key.questions.items():
        if question_id not in on_a_variant:
            continue
        hits, scores, chosen, unanswered, students = [], [], [0] * len(bank.options), 0, 0
        by_student: dict[str, int] = {}
        alternatives = None
        for result in results:
            placed = next((q for q in variants[result.student_id].questions if q.question == question_id), None)
            if placed is None:
                continue
            students += 1
            alternatives = alternatives or placed.alternatives
            if bank.kind == "open":
                continue
            letter = result.answers.get(placed.position)
            if letter is None:
                unanswered += 1
            elif bank.kind == "choice":
                option = placed.letters[letter]
                chosen[[choice.option for choice in bank.options].index(option)] += 1
            hits.append(int(is_right(key, placed, letter)))
            scores.append(totals[result.student_id])
            by_student[result.student_id] = hits[-1]
        correct_option = next((n for n, choice in enumerate(bank.options, start=1) if choice.correct), None)
        statistics.append(
            ItemStatistics(
                question=question_id,
                lesson=bank.lesson,
                kind=bank.kind,
                students=students,
                answered=students - unanswered if bank.kind != "open" else 0,
                correct=sum(hits),
                difficulty=difficulty(hits),
                discrimination=point_biserial(hits, scores),
                chosen=chosen,
                unanswered=unanswered,
                correct_option=correct_option,
                source=bank.source,
                variant=bank.variant,
                alternatives=alternatives,
                hits=by_student,
            )
        )
    return statistics


def _write_scores(path: Path, results: list[StudentResult]) -> None:
    with private_text(path, newline="") as handle:
        writer = spreadsheet.writer(handle, lineterminator="\n")
        writer.writerow(
            [
                "student_id",
                "name",
                "correct",
                "answered",
                "questions",
                "percent",
                "graded_by_hand",
                "marked",
                "score",
                "max_score",
            ]
        )
        for r in sorted(results, key=lambda r: r.student_id):
            right, possible = (r.correct, r.automatic) if r.worth is None else (automatic_total(r), r.worth)
            percent = f"{100 * right / possible:.1f}" if possible else ""
            writer.writerow(
                [
                    r.student_id,
                    r.name,
                    r.correct,
                    r.answered,
                    r.automatic,
                    percent,
                    r.by_hand,
                    shown_score(r.marked),
                    shown_score(r.score),
                    shown_score(r.max_score),
                ]
            )


def _write_items(path: Path, items: list[ItemStatistics]) -> None:
    width = max((len(item.chosen) for item in items), default=0)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = spreadsheet.writer(handle, lineterminator="\n")
        writer.writerow(
            [
                "question",
                "kind",
                "students",
                "answered",
                "correct",
                "difficulty",
                "discrimination",
                "correct_option",
                *(f"chose_{n}" for n in range(1, width + 1)),
                "unanswered",
                "source",
                "variant",
                "alternatives",
            ]
        )
        for item in items:
            writer.writerow(
                [
                    item.question,
                    item.kind,
                    item.students,
                    item.answered if item.kind != "open" else "",
                    item.correct if item.kind != "open" else "",
                    _number(item.difficulty),
                    _number(item.discrimination),
                    item.correct_option or "",
                    *(item.chosen + [""] * (width - len(item.chosen))),
                    item.unanswered if item.kind != "open" else "",
                    item.source or "",
                    item.variant or "",
                    item.alternatives or "",
                ]
            )


def item_labels(questions: list[str]) -> list[str]:
    """Each question's label in items.png: its number in items.csv and its id, which are unique
    (a check's number alone repeats across lessons)."""
    return [f"{number}. {question}" for number, question in enumerate(questions, start=1)]


def _chart(path: Path, items: list[ItemStatistics], groups: list[GroupStatistics]) -> None:
    """items.png: each question's difficulty and discrimination; a generated question once, over all
    its variants (a class draws hundreds: items.csv and groups.csv hold each)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    choice = [item for item in items if item.kind != "open" and not item.source]
    drawn = [group for group in groups if group.level == "question"]
    labels = item_labels([item.question for item in choice])
    labels += [f"{group.name} ({plural(group.members, 'variant')})" for group in drawn]
    bars = [(item.difficulty, item.discrimination) for item in choice]
    bars += [(group.difficulty, group.discrimination) for group in drawn]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, max(3, 0.35 * len(bars) + 1)), sharey=True)
    positions = range(len(bars))
    left.barh(positions, [share or 0 for share, _ in bars], color="#4c72b0")
    left.set_xlim(0, 1)
    left.set_xlabel("difficulty (share correct)")
    left.set_yticks(list(positions), labels)  # once: the right-hand chart shares them
    right.barh(positions, [separation or 0 for _, separation in bars], color="#dd8452")
    right.set_xlim(-1, 1)
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel("discrimination (point-biserial)")
    figure.suptitle("Item analysis")
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)


def score_of(result: StudentResult) -> str:
    """A student's exam score as every face shows it (``3 of 5``: the check questions right plus
    the open questions' marks so far, of all their points): the feedback, the student's page, the
    staff's attempts and scores.csv's numbers, rounded by the one rule (shown_score)."""
    return f"{shown_score(result.score)} of {shown_score(result.max_score)}"


def score_summary(result: StudentResult) -> str:
    """The score, stated once, as the feedback file and the online exam's page both state it:
    ``Score: 3 of 5: 3 of 4 questions right; 1 open question graded by hand, not marked yet.``"""
    summary = f"Score: {score_of(result)}"
    if not result.by_hand:
        return summary + "."
    right = f"{result.correct} of {plural(result.automatic, 'question')} right"
    waiting = result.by_hand - len(result.marks)
    open_part = f"{plural(result.by_hand, 'open question')} graded by hand"
    if result.marks:
        so_far = " so far" if waiting else ""
        open_part += f" ({shown_score(result.marked)} of {shown_score(OPEN_POINTS * len(result.marks))}{so_far})"
    if waiting:
        open_part += f", {waiting} not marked yet" if result.marks else ", not marked yet"
    return f"{summary}: {right}; {open_part}."


def points_of(key: ExamKey, variant: Variant, result: StudentResult) -> dict[int, tuple[float | None, float]]:
    """Each question's points, earned and possible, by position: a check question's (its zone's
    weight) when right, an open question's mark (None while not marked). They add up to the score."""
    points: dict[int, tuple[float | None, float]] = {}
    for question in variant.questions:
        if question.kind == "open":
            mark = result.marks.get(question.position)
            points[question.position] = (mark.score if mark else None, OPEN_POINTS)
        else:
            right = is_right(key, question, result.answers.get(question.position))
            points[question.position] = (question.points if right else 0.0, question.points)
    return points


def shown_summary(key: ExamKey, variant: Variant, result: StudentResult, withheld: dict[int, str]) -> str:
    """The score of the questions whose results the student is shown, said to be of those only, and
    when the others are (``withheld``: a question's position and when, as ``shown when the staff
    publish them``): ``Score on the questions shown: 2 of 3 (results shown for 3 of 5 questions; 2
    more shown when the staff publish them).`` Never a total that implies more. Nothing withheld: the
    score itself (score_summary)."""
    if not withheld:
        return score_summary(result)
    points = points_of(key, variant, result)
    shown = [position for position in points if position not in withheld]
    later: dict[str, int] = {}
    for position in sorted(withheld):
        later[withheld[position]] = later.get(withheld[position], 0) + 1
    rest = "; ".join(f"{count} more {when}" for when, count in later.items())
    if not shown:
        return f"No question's results are shown yet ({rest})."
    earned = sum(points[position][0] or 0.0 for position in shown)
    possible = sum(points[position][1] for position in shown)
    waiting = sum(points[position][0] is None for position in shown)
    unmarked = f", {plural(waiting, 'open question')} not marked yet" if waiting else ""
    return (
        f"Score on the questions shown: {shown_score(earned)} of {shown_score(possible)}{unmarked} "
        f"(results shown for {len(shown)} of {plural(len(points), 'question')}; {rest})."
    )


def _feedback(
    key: ExamKey, variant: Variant, result: StudentResult, heading: bool = True, withheld: dict[int, str] | None = None
) -> str:
    withheld = withheld or {}
    lines = [f"# {key.title}: feedback for {for_markdown(result.name)} ({for_markdown(result.student_id)})", ""]
    lines = [*lines, shown_summary(key, variant, result, withheld), ""] if heading else []
    for question in variant.questions:
        bank = key.questions[question.question]
        lines += [f"## {question.position}. {bank.stem}", ""]
        if question.position in withheld:  # their own answer, and nothing of its result or the key
            letter = result.answers.get(question.position)
            given = (
                "Graded by hand."
                if question.kind == "open"
                else f"Your answer: **{for_markdown(letter)}**."
                if letter
                else "Not answered."
            )
            lines += [f"{given} Its results are {withheld[question.position]}.", ""]
            continue
        if question.kind == "open":
            mark = result.marks.get(question.position)
            if mark is None:
                lines += ["Graded by hand; not marked yet.", ""]
            else:
                lines += [f"Marked by hand: {shown_score(mark.score)} of {shown_score(OPEN_POINTS)}.", ""]
                lines += [for_markdown(mark.comment), ""] if mark.comment else []
            continue
        if bank.written is not None:
            lines += [*_written_feedback(bank.written, result.answers.get(question.position)), ""]
            continue
        texts = {choice.option: choice for choice in bank.options}
        right = key.correct_letter(question)
        letter = result.answers.get(question.position)
        if letter is None:
            lines.append("Not answered.")
        elif letter == right:
            lines.append(f"Your answer, **{letter}**, is correct: {texts[question.letters[letter]].text}")
        else:
            chosen = texts[question.letters[letter]]
            lines.append(f"Your answer, **{letter}**: {chosen.text}")
            lines.append("")
            lines.append(f"Not correct. {chosen.tempting or ''}".rstrip())
        if letter != right:
            lines += ["", f"The correct answer is **{right}**: {texts[question.letters[right]].text}"]
        lines.append("")
    return "\n".join(lines)


def _written_feedback(written: Written, value: str | None) -> list[str]:
    """A written answer's feedback: what the student wrote, right, wrong or unreadable, and the
    answer with the question's own explanation where it was not right."""
    right = None if value is None else _judged(written, value)
    answer = f"The answer is **{for_markdown(written.shown())}**"
    answer += f" ({for_markdown(written.expected())})." if written.expected() else "."
    if value is None:
        lines = ["Not answered.", "", answer]
    elif right:
        return [f"Your answer, **{for_markdown(value)}**, is correct."]
    elif value == UNREADABLE:
        lines = ["Your answer could not be read: counted wrong.", "", answer]
    elif right is None:
        lines = [f"Your answer, **{for_markdown(value)}**, is not a number: counted wrong.", "", answer]
    else:
        lines = [f"Your answer, **{for_markdown(value)}**: not correct.", "", answer]
    return lines + (["", written.feedback] if written.feedback else [])


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def grade_sheet(key: ExamKey, variant: Variant, answers: dict[int, str], source: Path) -> StudentResult:
    """One answer sheet (position -> letter) graded as ``grade_exam`` grades a row of the responses:
    the online exams' path (service/exams/sessions.py) calls this, so both grade identically."""
    row = {f"q{position}": letter for position, letter in answers.items()}
    return _grade_row(key, variant, row, source, 1, [])


def feedback_markdown(
    key: ExamKey, variant: Variant, result: StudentResult, heading: bool = True, withheld: dict[int, str] | None = None
) -> str:
    """The student's feedback, as ``grade_exam`` writes it to feedback/<student>.md; without
    ``heading`` (the title and the score: a page states them itself), its questions alone; the
    questions ``withheld`` (by position, with when they are shown: shown_summary) give the student's
    own answer and nothing of their results."""
    return _feedback(key, variant, result, heading, withheld)
