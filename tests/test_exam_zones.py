"""Exams built from zones (`course exam build --definition`): each student's own draw of N of a zone's
M questions, one of an entry's alternatives, their own variant of a generated question, points per
zone; statistics per question, per alternative and per variant; zones balanced by measured difficulty."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

import pytest

from course.exams.grade import grade_exam
from course.exams.variants import ExamKey

from .conftest import LESSON_DATA

BANK = LESSON_DATA / "module-10-question-bank.lesson.json"
Q = "module-10-question-bank"
GENERATED = f"{Q}-scale-factor-known-mistake"
DEFINITION = f"""title = "Zoned exam"

[[zones]]
title = "Scaling"
choose = 2
points = 2
questions = [
  "{GENERATED}",
  "{Q}-check-1",
  {{ alternatives = ["{Q}-check-2", "{Q}-check-3"] }},
]

[[zones]]
title = "The rest"
choose = 3
questions = ["{Q}-check-4", "{Q}-check-5", "{Q}-check-6", "{Q}-check-7", "{Q}-check-8"]
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "roster.csv").write_text(
        "student_id,name,email\n" + "".join(f"s{n:02},Student {n},s{n}@example.org\n" for n in range(1, 41))
    )
    (tmp_path / "exam.toml").write_text(DEFINITION)
    return tmp_path


def _build(course, folder, name="exam", seed="3", definition="exam.toml", *more):
    where = ["--roster", folder / "roster.csv", "--out", folder / name, "--lessons", BANK]
    result = course("exam", "build", *where, "--seed", seed, "--definition", folder / definition, *more)
    return result, folder / name


def _key(exam) -> ExamKey:
    return ExamKey.model_validate_json((exam / "key.json").read_text())


def test_each_zone_draws_n_of_its_m_questions_the_same_for_a_student_and_seed(course, folder):
    result, exam = _build(course, folder)
    assert (result.code, result.out) == (0, f"{exam}: 40 variants of 5 questions\n")
    key = _key(exam)
    assert key.title == "Zoned exam" and [(z.title, z.choose, z.points) for z in key.zones] == [
        ("Scaling", 2, 2.0),
        ("The rest", 3, 1.0),
    ]
    drawn = Counter()
    for variant in key.variants:
        assert [(q.zone, q.points) for q in variant.questions] == [(1, 2.0)] * 2 + [(2, 1.0)] * 3
        names = [key.questions[q.question].source or q.question for q in variant.questions]
        assert len(set(names)) == 5 and not ({f"{Q}-check-2", f"{Q}-check-3"} <= set(names))  # one alternative
        drawn.update(names)
    # Across 40 students every question of each pool is drawn, and each alternative.
    assert set(drawn) == {GENERATED, *(f"{Q}-check-{n}" for n in range(1, 9))}
    # Each student gets their own variant of the generated question, and their sheet prints it.
    mine = [(v, q) for v in key.variants for q in v.questions if key.questions[q.question].source == GENERATED]
    assert len({q.question for _, q in mine}) >= 4
    variant, question = mine[0]
    d_k = re.search(r"d_k=(\d+)", key.questions[question.question].variant).group(1)
    page = (exam / f"{variant.student.student_id}.md").read_text()
    assert f"d_k = {d_k}" in page and "**Part 1: Scaling (2 points each)**" in page
    # The same seed draws the same exam; another seed another.
    _build(course, folder, "again")
    assert (folder / "again" / "key.json").read_text() == (exam / "key.json").read_text()
    _build(course, folder, "other", "4")
    assert _key(folder / "other").variants != key.variants


def _answer(key: ExamKey, right) -> list[list[str]]:
    """Each student's sheet: the right letter where ``right(variant, question)``, else a wrong one."""
    rows = []
    for variant in key.variants:
        row = [variant.student.student_id]
        for question in variant.questions:
            correct = key.correct_letter(question)
            row.append(correct if right(variant, question) else next(x for x in question.letters if x != correct))
        rows.append(row)
    return rows


def _grade(folder, exam, rows):
    responses = folder / "responses.csv"
    with responses.open("w", newline="") as handle:
        csv.writer(handle).writerows([["student_id", *(f"q{n}" for n in range(1, 6))], *rows])
    return grade_exam(exam, responses, folder / "results")


def test_points_per_zone_weigh_the_score(course, folder):
    _, exam = _build(course, folder)
    key = _key(exam)
    result = _grade(folder, exam, _answer(key, lambda variant, question: question.zone == 1))
    first = result.results[0]
    assert (first.correct, first.score, first.max_score) == (2, 4.0, 7.0)
    scores = {row["student_id"]: row for row in csv.DictReader((folder / "results" / "scores.csv").open())}
    assert (scores["s01"]["score"], scores["s01"]["max_score"], scores["s01"]["percent"]) == ("4", "7", "57.1")


def test_statistics_per_variant_and_per_alternative_show_a_bad_variant(course, folder):
    _, exam = _build(course, folder)
    key = _key(exam)
    variants = Counter(key.questions[q.question].variant for v in key.variants for q in v.questions if q.zone == 1)
    bad = next(values for values in variants if values and "d_k=16," in values)  # nobody gets d_k = 16 right

    def right(variant, question):
        return key.questions[question.question].variant != bad

    _grade(folder, exam, _answer(key, right))
    items = list(csv.DictReader((folder / "results" / "items.csv").open()))
    generated = [row for row in items if row["source"] == GENERATED]
    assert len(generated) >= 4 and {row["variant"] for row in generated} == {v for v in variants if v}
    assert {row["difficulty"] for row in generated if row["variant"] == bad} == {"0.000"}
    assert {row["difficulty"] for row in generated if row["variant"] != bad} == {"1.000"}
    alternatives = f"{Q}-check-2|{Q}-check-3"
    assert {row["question"] for row in items if row["alternatives"] == alternatives} == {f"{Q}-check-2", f"{Q}-check-3"}
    groups = {row["name"]: row for row in csv.DictReader((folder / "results" / "groups.csv").open())}
    assert groups[GENERATED]["level"] == "question" and groups[GENERATED]["spread"] == "1.000"
    assert int(groups[GENERATED]["members"]) == len(generated)
    students = sum(1 for v in key.variants for q in v.questions if key.questions[q.question].source == GENERATED)
    assert int(groups[GENERATED]["students"]) == students
    assert groups[alternatives]["level"] == "alternatives" and groups[alternatives]["difficulty"] == "1.000"


def test_a_zone_asking_for_balance_draws_one_question_from_each_band_of_difficulty(course, folder):
    rest = [f"{Q}-check-{n}" for n in range(4, 10)]
    (folder / "balanced.json").write_text(
        json.dumps({"zones": [{"title": "Mixed", "choose": 2, "balance": True, "questions": rest}]})
    )
    statistics = folder / "items.csv"  # as an earlier grading wrote it: three easy questions, three hard
    shares = dict(zip(rest, [9, 8, 9, 2, 1, 3], strict=True))
    statistics.write_text(
        "question,kind,students,correct,source\n" + "".join(f"{n},choice,10,{c},\n" for n, c in shares.items())
    )
    result, exam = _build(course, folder, "balanced", "3", "balanced.json", "--statistics", statistics)
    assert result.code == 0, result.err
    for variant in _key(exam).variants:
        easy = [shares[q.question] >= 8 for q in variant.questions]
        assert sorted(easy) == [False, True]  # one easy and one hard for everyone
    _, plain = _build(course, folder, "plain", "3", "balanced.json")
    unbalanced = [sorted(shares[q.question] >= 8 for q in v.questions) for v in _key(plain).variants]
    assert [True, True] in unbalanced or [False, False] in unbalanced  # without statistics: as drawn


@pytest.mark.parametrize(
    "definition, more, message",
    [
        (DEFINITION.replace("check-8", "check-99"), (), f"the exam names '{Q}-check-99', which is no check"),
        (DEFINITION.replace("choose = 3", "choose = 6"), (), "zones/1: chooses 6 of its 5 questions"),
        (DEFINITION.replace(f'"{Q}-check-4", ', f'"{Q}-check-1", '), (), "is in zone 1 already"),
        (DEFINITION, ("--questions", "3"), "an exam's definition says how many questions each zone chooses"),
        ("zones = [", (), "not valid TOML"),
    ],
)
def test_a_bad_definition_is_refused_in_one_line(course, folder, definition, more, message):
    (folder / "bad.toml").write_text(definition)
    result, exam = _build(course, folder, "bad", "3", "bad.toml", *more)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1, result.err
    assert not exam.exists()
