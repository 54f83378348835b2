"""Generated check questions: drawn per student and seed, deterministic, refused by `course validate`
when a draw fails, repeats the answer, or differs for the same seed."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from course.generated import draw, seed_of
from course.loaders import load_lesson

from .conftest import LESSON_DATA, ROOT

BANK = LESSON_DATA / "module-10-question-bank.lesson.json"

GOOD_SCALE = {
    "id": "scale",
    "question": "With \\(d_k = {d_k}\\), \\(QK^\\top\\) is divided by which number?",
    "parameters": {"d_k": {"choices": [16, 64, 256]}},
    "values": {"scale": "sqrt(d_k)", "half": "d_k / 2"},
    "options": [
        {"text": "{scale:g}", "correct": True},
        {"text": "{d_k}", "tempting": "The square root was forgotten."},
        {"text": "{half:g}", "tempting": "Halving is not the rule."},
    ],
}
GENERATOR = "def draw_p(rng, values):\n    return {'p': rng.random()}\n"


@pytest.fixture
def bank():
    return {question.id: question for question in load_lesson(BANK).lesson.generated}


def _lesson(tmp_path, lesson_document, *questions, generator: str = GENERATOR):
    document = copy.deepcopy(lesson_document)
    document["generated"] = list(questions)
    (tmp_path / "_gen.py").write_text(generator, encoding="utf-8")
    path = tmp_path / "lesson.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_the_same_student_gets_the_same_variant_and_200_students_many(bank):
    for question in bank.values():
        first = draw(question, "student-7")
        assert draw(question, "student-7") == first
        assert len({draw(question, "student-7", variant=v).stem.plain() for v in range(10)}) >= 2
        stems = {draw(question, f"student-{n}").stem.plain() for n in range(200)}
        assert len(stems) >= 5, question.id
    # The seed is SHA-256 of (question, student, variant): fixed numbers, the same on every machine.
    assert seed_of("q", "ada", 2) == 6492888121704779886
    assert draw(bank["scale-factor-of-drawn-dk"], "ada").values == {"d_k": 48, "scale": pytest.approx(48**0.5)}
    script = "from course.generated import seed_of; print(seed_of('q', 'ada', 2))"
    other_process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert int(other_process.stdout) == seed_of("q", "ada", 2)


def test_answers_are_checked_by_the_questions_tolerance(bank):
    softmax = draw(bank["softmax-of-drawn-scores"], "ada")
    assert softmax.is_right(f"{softmax.answer:.3f}") and softmax.is_right(f"{softmax.answer:.4f}")
    assert not softmax.is_right(f"{softmax.answer + 0.002:.3f}") and not softmax.is_right("about a half")
    shape = draw(bank["attention-output-shape"], "ada")
    batch, n, d_v = (shape.values[name] for name in ("batch", "n", "d_v"))
    assert shape.is_right(f"({batch},{n},{d_v})") and shape.is_right(f"( {batch}, {n}, {d_v} )")
    assert not shape.is_right(f"({batch}, {shape.values['m']}, {d_v})")
    choice = draw(bank["scale-factor-known-mistake"], "ada")
    assert choice.check is not None
    shown = choice.check.displayed()
    letter = "abcd"[next(i for i, option in enumerate(shown) if option.correct)]
    assert choice.is_right(letter) and choice.is_right(f"{choice.values['scale']:g}")
    no_sqrt = next(option for option in shown if option.text.plain() == str(choice.values["d_k"]))
    assert not no_sqrt.correct and "square root was forgotten" in no_sqrt.tempting.plain()


def test_course_show_draws_the_generated_checks_for_a_student(course):
    ada = course("show", "module-10-question-bank", "--lessons", LESSON_DATA, "--student", "ada")
    bob = course("show", "module-10-question-bank", "--lessons", LESSON_DATA, "--student", "bob")
    assert ada.code == bob.code == 0
    assert "Check 15, generated (numeric, softmax-of-drawn-scores, drawn for 'ada')" in ada.out
    assert ada.out != bob.out
    assert course("show", "module-10-question-bank", "--lessons", LESSON_DATA, "--student", "ada").out == ada.out


def test_validate_accepts_a_sound_generated_question(course, tmp_path, lesson_document):
    good = _lesson(tmp_path, lesson_document, GOOD_SCALE)
    result = course("validate", good)
    assert "scale" not in result.out and result.code == 0


@pytest.mark.parametrize(
    ("change", "generator", "expected"),
    [
        (  # a distractor that equals the answer for d_k = 4 (sqrt(4) = 4 / 2)
            {"parameters": {"d_k": {"choices": [4, 64]}}},
            GENERATOR,
            "/generated/0: question 'scale': options/2: the distractor equals the answer ('2')",
        ),
        (  # two options that read the same: not unique
            {"options": [*GOOD_SCALE["options"], {"text": "{d_k:d}", "tempting": "again"}]},
            GENERATOR,
            "/generated/0: question 'scale': options/3: equals option 2",
        ),
        (  # a generator that raises
            {"generator": "_gen.py:draw_p"},
            "def draw_p(rng, values):\n    return {'p': 1 / (values['d_k'] - 64)}\n",
            "/generated/0: question 'scale': generator: draw_p() failed: ZeroDivisionError: division by zero",
        ),
        (  # a generator that draws from the global random: not deterministic for its seed
            {"generator": "_gen.py:draw_p"},
            "import random\ndef draw_p(rng, values):\n    return {'p': random.random()}\n",
            "/generated/0: question 'scale' is not deterministic for its seed: two draws for seed 'validate-0' differ",
        ),
        (  # a template naming nothing
            {"question": "With {d_q}?"},
            GENERATOR,
            "/generated/0: question 'scale': question: no parameter or value is named 'd_q'",
        ),
    ],
    ids=["distractor-is-answer", "options-not-unique", "generator-fails", "not-deterministic", "unknown-name"],
)
def test_validate_refuses_a_wrong_generated_question_in_one_line(
    course, tmp_path, lesson_document, change, generator, expected
):
    path = _lesson(tmp_path, lesson_document, {**GOOD_SCALE, **change}, generator=generator)
    result = course("validate", path)
    assert result.code == 2
    lines = [line for line in result.out.splitlines() if "/generated/" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{path}: ") and expected in lines[0], result.out


def test_a_missing_generator_is_the_lesson_files_error(course, tmp_path, lesson_document):
    path = _lesson(tmp_path, lesson_document, {**GOOD_SCALE, "generator": "_gen.py:nowhere"})
    result = course("validate", path)
    assert result.code == 2
    assert f"{path}: /generated/0/generator: no function 'nowhere' in _gen.py" in result.out
    assert not (tmp_path / "__pycache__").exists()  # the generator is run, never cached beside the lesson
