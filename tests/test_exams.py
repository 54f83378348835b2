"""`course exam build` and `course exam grade`: variants, keys, grading, feedback, item analysis."""

from __future__ import annotations

import csv
import json
import math
import re

import pytest

from course.exams import build_exam, grade_exam
from course.exams.csvfiles import ExamError
from course.exams.stats import difficulty, point_biserial

from .conftest import LESSON_DATA

ROSTER = "student_id,name,email\n" + "".join(f"s{n:03d},Student {n},s{n}@example.org\n" for n in range(1, 7))


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER)
    return path


def _key(folder):
    return json.loads((folder / "key.json").read_text())


def _responses(tmp_path, rows, positions):
    path = tmp_path / "responses.csv"
    lines = ["student_id," + ",".join(f"q{n}" for n in range(1, positions + 1))] + [",".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _correct_letter(key, variant_question):
    bank = key["questions"][variant_question["question"]]
    correct = next(c["option"] for c in bank["options"] if c["correct"])
    return next(letter for letter, option in variant_question["letters"].items() if option == correct)


def _wrong_letter(key, variant_question):
    right = _correct_letter(key, variant_question)
    return next(letter for letter in variant_question["letters"] if letter != right)


def test_same_seed_same_variants_other_seed_other_variants(tmp_path, roster):
    first, second, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder, seed in ((first, 11), (second, 11), (other, 12)):
        build_exam(roster, folder, seed=seed, lessons=[LESSON_DATA])
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in second.iterdir())
    for path in first.iterdir():
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name
    orders = [[q["question"] for q in v["questions"]] for v in _key(first)["variants"]]
    assert len({tuple(order) for order in orders}) == len(orders)  # each student's own order
    assert [v["questions"] for v in _key(other)["variants"]] != [v["questions"] for v in _key(first)["variants"]]


def test_every_variant_maps_back_to_the_right_answers_through_the_key(tmp_path, roster):
    exam = tmp_path / "exam"
    result = build_exam(roster, exam, seed=3, questions=10, lessons=[LESSON_DATA])
    assert (result.students, result.questions) == (6, 10)
    key = _key(exam)
    from course.catalog import load_folder

    lessons = {lesson.slug: lesson for lesson in load_folder(LESSON_DATA).lessons}
    for variant in key["variants"]:
        assert len(variant["questions"]) == 10
        for question in variant["questions"]:
            slug, number = question["question"].rsplit("-check-", 1)
            check = lessons[slug].checks[int(number) - 1]
            assert sorted(question["letters"].values()) == list(range(len(check.options)))
            assert check.options[question["letters"][_correct_letter(key, question)]].correct
    rows = [[v["student"]["student_id"], *(_correct_letter(key, q) for q in v["questions"])] for v in key["variants"]]
    results = tmp_path / "results"
    assert grade_exam(exam, _responses(tmp_path, rows, 10), results).problems == []
    scores = list(csv.DictReader((results / "scores.csv").open()))
    assert {row["percent"] for row in scores} == {"100.0"} and len(scores) == 6


def test_generated_responses_get_their_known_scores_and_feedback(tmp_path, roster):
    exam = tmp_path / "exam"
    build_exam(roster, exam, seed=5, questions=8, lessons=[LESSON_DATA])
    key = _key(exam)
    rows, expected = [], {}
    for n, variant in enumerate(key["variants"]):
        answers = []
        for position, question in enumerate(variant["questions"]):
            if position < n:
                answers.append(_correct_letter(key, question))
            elif position == 7:
                answers.append("")  # the last question left blank
            else:
                answers.append(_wrong_letter(key, question).lower())
        rows.append([variant["student"]["student_id"], *answers])
        expected[variant["student"]["student_id"]] = (min(n, 7), 7 if n < 8 else 8)
    results = tmp_path / "results"
    grade_exam(exam, _responses(tmp_path, rows, 8), results)
    scores = {row["student_id"]: row for row in csv.DictReader((results / "scores.csv").open())}
    assert {sid: (int(r["correct"]), int(r["answered"])) for sid, r in scores.items()} == expected
    feedback = (results / "feedback" / "s001.md").read_text()
    first = key["variants"][0]["questions"][0]
    bank = key["questions"][first["question"]]
    chosen = bank["options"][[c["option"] for c in bank["options"]].index(first["letters"][_wrong_letter(key, first)])]
    assert chosen["tempting"] in feedback
    assert f"The correct answer is **{_correct_letter(key, first)}**" in feedback
    assert "Not answered." in feedback


def test_item_statistics_on_a_hand_computed_case():
    assert difficulty([1, 1, 0, 0]) == 0.5
    # p = 0.5, M1 = 2.5, M0 = 0.5, s = sqrt(1.25): (2.5 - 0.5) / 1.1180 * 0.5 = 0.8944
    assert math.isclose(point_biserial([1, 1, 0, 0], [3, 2, 1, 0]), 2 / math.sqrt(1.25) * 0.5)
    assert math.isclose(point_biserial([1, 1, 0, 0], [3, 2, 1, 0]), 0.894427, rel_tol=1e-5)
    assert point_biserial([1, 1, 1], [3, 2, 1]) is None  # everyone right: undefined
    assert point_biserial([1, 0], [2, 2]) is None  # no spread in the totals


def test_item_analysis_of_a_small_exam_by_hand(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"s{n},S{n},s{n}@x.org\n" for n in range(1, 5)))
    exam = tmp_path / "exam"
    lesson = LESSON_DATA / "from-sequences-to-attention.lesson.json"
    build_exam(roster, exam, lessons=[lesson], shuffle=False)  # one question, letters in display order: C is right
    rows = [["s1", "C"], ["s2", "C"], ["s3", "A"], ["s4", ""]]
    results = tmp_path / "results"
    grade_exam(exam, _responses(tmp_path, rows, 1), results)
    [item] = list(csv.DictReader((results / "items.csv").open()))
    # totals 1, 1, 0, 0 equal the item's own scores: p = 0.5, r_pb = (1 - 0) / 0.5 * 0.5 = 1
    assert (item["students"], item["answered"], item["correct"], item["difficulty"], item["discrimination"]) == (
        "4",
        "3",
        "2",
        "0.500",
        "1.000",
    )
    assert (
        item["correct_option"],
        item["chose_1"],
        item["chose_2"],
        item["chose_3"],
        item["chose_4"],
        item["unanswered"],
    ) == ("3", "1", "0", "2", "0", "1")
    assert (results / "items.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_open_questions_are_on_the_variant_and_graded_by_hand(tmp_path, roster):
    exam = tmp_path / "exam"
    build_exam(roster, exam, lessons=[LESSON_DATA], include_open=True, shuffle=False)
    markdown = (exam / "s001.md").read_text()
    assert "You are given a pretty attention map. What does it prove about the model's decision" in markdown
    assert markdown.count("in this question's box on the answer sheet; graded by hand") == 7
    key = _key(exam)
    rows = [
        [
            v["student"]["student_id"],
            *(_correct_letter(key, q) if q["kind"] == "choice" else "" for q in v["questions"]),
        ]
        for v in key["variants"]
    ]
    results = tmp_path / "results"
    grade_exam(exam, _responses(tmp_path, rows, len(key["variants"][0]["questions"])), results)
    scores = list(csv.DictReader((results / "scores.csv").open()))
    assert {(r["questions"], r["graded_by_hand"], r["percent"]) for r in scores} == {("15", "7", "100.0")}
    assert "Graded by hand; not marked yet." in (results / "feedback" / "s001.md").read_text()


def test_html_variant_is_standalone_with_mathml(tmp_path, roster):
    exam = tmp_path / "exam"
    build_exam(roster, exam, lessons=[LESSON_DATA], shuffle=False)
    page = (exam / "s002.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "<link" not in page
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML"' in page and "<msqrt>" in page
    assert "\\(" not in page
    assert "Student 2" in page


@pytest.mark.parametrize(
    "rows, problems",
    [
        ([["s001", "A"], ["s999", "B"]], ["row 3: student_id 's999' has no variant in this exam; row skipped"]),
        ([["s001", "E"]], ["row 2: q1: 'E' is not an answer on s001's variant (one of ABCD); counted as unanswered"]),
        (
            [["s001", "A"], ["s002", "B"], ["s001", "C"]],
            ["row 4: student_id 's001' already answered on row 2; row skipped"],
        ),
    ],
    ids=["unknown-student", "letter-not-on-variant", "duplicate-row"],
)
def test_bad_response_rows_are_reported_by_row_and_good_rows_graded(tmp_path, roster, rows, problems):
    exam = tmp_path / "exam"
    build_exam(roster, exam, questions=1, lessons=[LESSON_DATA])
    result = grade_exam(exam, _responses(tmp_path, rows, 1), tmp_path / "results")
    errors = [f"{p.where}: {p.what}" for p in result.problems if p.severity == "error"]
    assert errors == problems
    graded = {row["student_id"] for row in csv.DictReader((tmp_path / "results" / "scores.csv").open())}
    assert "s001" in graded


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the file is empty"),
        ("student_id,q1\ns001,A\n", "row 1: missing columns q2, q3"),
        ("name\nx\n", "row 1: missing columns student_id, q1, q2, q3"),
    ],
    ids=["empty", "missing-question-columns", "missing-id-column"],
)
def test_unusable_response_files_are_one_line_errors(tmp_path, roster, content, message):
    exam = tmp_path / "exam"
    build_exam(roster, exam, questions=3, lessons=[LESSON_DATA])
    responses = tmp_path / "responses.csv"
    responses.write_text(content)
    with pytest.raises(ExamError) as caught:
        grade_exam(exam, responses, tmp_path / "results")
    assert str(caught.value) == f"{responses}: {message}"


def test_roster_problems_are_reported_by_row(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\ns1,A,a@x\ns1,B,b@x\n,C,c@x\nx/y,D,d@x\ns2,E,e@x\n")
    result = course("exam", "build", "--roster", roster, "--out", tmp_path / "exam", "--lessons", LESSON_DATA)
    assert result.code == 2
    assert result.err.splitlines() == [
        f"{roster}: row 3: student_id 's1' repeats row 2; row skipped",
        f"{roster}: row 4: no student_id; row skipped",
        f"{roster}: row 5: student_id 'x/y' may only hold letters, digits, '.', '_' and '-'; row skipped",
    ]
    assert sorted(p.name for p in (tmp_path / "exam").glob("*.md")) == ["s1.md", "s2.md"]
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    result = course("exam", "build", "--roster", empty, "--out", tmp_path / "exam2")
    assert result.code == 2 and result.err == f"course: {empty}: the file is empty\n"


def test_exam_commands_end_to_end(course, tmp_path, roster):
    exam, results = tmp_path / "exam", tmp_path / "results"
    result = course(
        "exam", "build", "--roster", roster, "--out", exam, "--seed", "9", "--questions", "4", "--lessons", LESSON_DATA
    )
    assert result.code == 0 and result.out == f"{exam}: 6 variants of 4 questions\n"
    template = (exam / "responses-template.csv").read_text().splitlines()
    assert template[0] == "student_id,q1,q2,q3,q4" and len(template) == 7
    responses = tmp_path / "responses.csv"
    responses.write_text("\n".join(template) + "\n")
    result = course("exam", "grade", exam, responses, "--out", results)
    assert result.code == 0 and result.out == f"{results}: 6 students graded\n"
    assert sorted(p.name for p in results.iterdir()) == ["feedback", "items.csv", "items.png", "scores.csv"]
    result = course(
        "exam", "build", "--roster", roster, "--out", tmp_path / "x", "--questions", "99", "--lessons", LESSON_DATA
    )
    assert result.code == 2 and "--questions must be between 1 and 15" in result.err


def test_question_bank_covers_every_objective_with_well_formed_checks():
    bank_file = LESSON_DATA / "module-10-question-bank.lesson.json"
    from course.loaders import load_lesson

    loaded = load_lesson(bank_file)
    assert loaded.warnings == []
    checks = loaded.lesson.checks
    assert len(checks) >= 12
    for check in checks:
        assert len(check.options) == 4
        assert sum(option.correct for option in check.options) == 1
        assert all(option.tempting is not None for option in check.options if not option.correct)
    objectives = {raw["objective"] for raw in json.loads(bank_file.read_text())["checks"]}
    # the module's topics the issue lists: recurrence's limits, weighted average, sqrt(d), self vs
    # cross attention, heads, order and positional encoding, quadratic cost, maps are not explanations
    assert {
        "recurrence-path-length",
        "recurrence-parallelism",
        "attention-weighted-average",
        "scaling-sqrt-d",
        "self-vs-cross-attention",
        "multi-head",
        "permutation-equivariance",
        "positional-encoding",
        "quadratic-cost",
        "map-not-explanation",
    } <= objectives
    assert len({check.correct_index for check in checks}) == 4  # the right answer is not always in one place


def test_names_from_the_roster_reach_files_inert(tmp_path):
    """A name that a spreadsheet would run, or that Markdown would render as HTML, stays text."""
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,email\n"
        's001,"=HYPERLINK(""http://x"",""y"")",a@example.org\n'
        's002,"<img src=x onerror=alert(1)>\x1b[2J",b@example.org\n'
    )
    folder, results = tmp_path / "exam", tmp_path / "results"
    build_exam(roster, folder, seed=3, lessons=[LESSON_DATA])
    assert "<img" not in (folder / "s002.md").read_text() and "&lt;img" in (folder / "s002.md").read_text()
    key = _key(folder)
    rows = [[v["student"]["student_id"], *(_correct_letter(key, q) for q in v["questions"])] for v in key["variants"]]
    grade_exam(folder, _responses(tmp_path, rows, len(key["variants"][0]["questions"])), results)
    names = [row["name"] for row in csv.DictReader((results / "scores.csv").open())]
    assert names[0].startswith("'=HYPERLINK")
    feedback = (results / "feedback" / "s002.md").read_text()
    assert "<img" not in feedback and "\x1b" not in feedback and "\\x1b[2J" in feedback


def test_building_over_an_exam_is_refused_unless_forced(course, tmp_path, roster):
    exam = tmp_path / "exam"
    assert course("exam", "build", "--roster", roster, "--out", exam, "--seed", "2026").code == 0
    key = (exam / "key.json").read_bytes()
    again = course("exam", "build", "--roster", roster, "--out", exam, "--seed", "7")
    assert again.code == 2
    assert again.err == f"course: {exam}: an exam is already built here with seed 2026; use --force to replace it\n"
    assert (exam / "key.json").read_bytes() == key  # nothing replaced
    forced = course("exam", "build", "--roster", roster, "--out", exam, "--seed", "7", "--force")
    assert forced.code == 0 and _key(exam)["seed"] == 7


def test_open_questions_are_drawn_as_their_own_count(tmp_path, roster):
    exam = tmp_path / "exam"
    result = build_exam(roster, exam, seed=1, questions=5, open_questions=2, lessons=[LESSON_DATA])
    assert result.questions == 7
    for variant in _key(exam)["variants"]:
        kinds = [q["kind"] for q in variant["questions"]]
        assert kinds == ["choice"] * 5 + ["open"] * 2
    opened = {q["question"] for v in _key(exam)["variants"] for q in v["questions"] if q["kind"] == "open"}
    assert len(opened) > 2  # drawn per student, not the same two for everyone
    with pytest.raises(ExamError, match="--open must be between 0 and"):
        build_exam(roster, tmp_path / "other", questions=5, open_questions=99, lessons=[LESSON_DATA])


def test_items_chart_labels_each_question_once_by_number_and_id(tmp_path, roster):
    from course.exams.grade import item_labels

    exam, results = tmp_path / "exam", tmp_path / "results"
    build_exam(roster, exam, seed=2, lessons=[LESSON_DATA])
    key = _key(exam)
    rows = [[v["student"]["student_id"], *(_correct_letter(key, q) for q in v["questions"])] for v in key["variants"]]
    grade_exam(exam, _responses(tmp_path, rows, len(key["variants"][0]["questions"])), results)
    questions = [row["question"] for row in csv.DictReader((results / "items.csv").open()) if row["kind"] == "choice"]
    labels = item_labels(questions)
    assert len(set(labels)) == len(labels) == len(key["questions"])
    assert labels[0].startswith("1. ") and all(label.split(". ", 1)[1] in key["questions"] for label in labels)
    assert (results / "items.png").stat().st_size > 0


def test_each_student_gets_a_printable_answer_sheet_with_their_own_letters(course, tmp_path, roster):
    exam = tmp_path / "exam"
    assert course("exam", "build", "--roster", roster, "--out", exam, "--questions", "4", "--open", "1").code == 0
    key = _key(exam)
    for variant in key["variants"]:
        sheet = (exam / f"{variant['student']['student_id']}.sheet.html").read_text()
        rows = re.findall(r"<tr><th>(\d+)</th><td>(.*?)</td></tr>", sheet)
        assert [int(number) for number, _ in rows] == [q["position"] for q in variant["questions"]]
        for (_, cells), question in zip(rows, variant["questions"], strict=True):
            if question["kind"] == "choice":
                assert re.findall(r'<span class="box">([A-Z])</span>', cells) == list(question["letters"])
            else:
                assert cells == '<div class="written"></div>'
        assert "break-inside:avoid" in sheet and variant["student"]["name"] in sheet
    page = (exam / "s001.html").read_text()
    assert page.count('<section class="question">') == 5  # each kept whole on a printed page
    assert "@media print" in page and "answer sheet" in page


def test_open_questions_marked_by_hand_count_in_the_scores(course, tmp_path, roster):
    exam, results, book = tmp_path / "exam", tmp_path / "results", tmp_path / "gradebook.db"
    assert course("exam", "build", "--roster", roster, "--out", exam, "--questions", "3", "--open", "2").code == 0
    key = _key(exam)
    sheet = tmp_path / "marks.csv"
    result = course("exam", "marks", "export", exam, "--out", sheet, "--gradebook", book)
    assert result.code == 0 and result.out == f"{sheet}: 12 open answers to mark\n"
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert {(row["points"], row["score"], row["exam"]) for row in rows} == {("1", "", key["title"])}
    s001 = [row for row in rows if row["student_id"] == "s001"]
    assert [row["position"] for row in s001] == ["q4", "q5"] and s001[0]["text"]
    s001[0]["score"], s001[0]["comment"] = "1", "right: an attention map is not a cause"
    s001[1]["score"], s001[1]["comment"] = "0.5", "half of it"
    other = next(row for row in rows if row["student_id"] == "s002")
    bad = [dict(other, score="2"), dict(other, student_id="s999", score="1"), dict(other, question="nope", score="1")]
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(s001 + bad)
    result = course("exam", "marks", "import", exam, filled, "--gradebook", book)
    assert result.code == 1 and result.out.startswith("2 marks recorded")
    assert f"{filled}: row 4: score 2 is outside 0..1" in result.err
    assert f"{filled}: row 5: student_id 's999' has no variant in this exam" in result.err
    assert f"{filled}: row 6: 'nope' is not an open question of 's002'" in result.err

    answers = [
        [
            v["student"]["student_id"],
            *(_correct_letter(key, q) if q["kind"] == "choice" else "" for q in v["questions"]),
        ]
        for v in key["variants"]
    ]
    responses = _responses(tmp_path, answers, 5)
    assert course("exam", "grade", exam, responses, "--out", results, "--gradebook", book).code == 0
    scores = {row["student_id"]: row for row in csv.DictReader((results / "scores.csv").open())}
    assert (
        scores["s001"]["correct"],
        scores["s001"]["marked"],
        scores["s001"]["score"],
        scores["s001"]["max_score"],
    ) == ("3", "1.5", "4.5", "5")
    assert (scores["s002"]["marked"], scores["s002"]["score"]) == ("0", "3")
    feedback = (results / "feedback" / "s001.md").read_text()
    assert (
        "Marked by hand: 0.5 of 1." in feedback
        and "half of it" in feedback
        and "Score: 4.5 of 5: " in feedback
        and "(1.5 of 2)." in feedback
    )
    from gradebook.book import Gradebook

    with Gradebook.open(book) as opened:
        from gradebook.models import ExamResult

        recorded = {r.student.student_id: r.score for r in opened.objects(ExamResult).select_related("student")}
    assert len(recorded) == 6 and recorded["s001"] == 4.5

    # Another exam's sheet changes nothing.
    filled.write_text(filled.read_text().replace(key["title"], "Another exam"))
    result = course("exam", "marks", "import", exam, filled, "--gradebook", book)
    assert result.code == 2 and "marks of the exam 'Another exam'" in result.err
