"""The `course` command, driven as a user drives it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from commands.course import build_parser

from .conftest import JSON_LESSON, LESSON_DATA, ROOT


def test_validate_shipped_lessons_exits_0_and_prints_no_problem(course):
    """No error; the only warnings are the item-writing ones of the seed lesson's check, which is kept
    as its source wrote it (the question bank written for this project has none)."""
    result = course("validate", LESSON_DATA)
    assert result.code == 0
    warnings = result.out.splitlines() + result.err.strip().splitlines()[:-1]
    assert result.err.strip().splitlines()[-1] == "5 files: 5 lessons, 0 errors, 2 warnings"
    assert all(line.startswith(f"{JSON_LESSON}: check 1: warning: ") for line in warnings if line)
    assert len([line for line in warnings if line]) == 2


def test_item_writing_habits_are_warnings_never_errors(course, tmp_path, lesson_document):
    lesson_document["checks"] = [
        {
            "question": "Which of these is not a property of attention?",
            "options": [
                {
                    "text": "It compares every query with every key and mixes the values by those weights.",
                    "correct": True,
                },
                {"text": "It is cheap", "correct": False, "tempting": "Its cost grows with the square of the length."},
                {"text": "All of the above", "correct": False, "tempting": "One of them is right."},
            ],
        }
    ]
    path = tmp_path / "habits.lesson.json"
    path.write_text(json.dumps(lesson_document))
    result = course("validate", path)
    text = result.out + result.err
    assert result.code == 0
    assert "warning: the correct option is much longer than every other" in text
    assert "warning: option 'All of the above' refers to the others" in text
    assert "warning: a negative stem ('not') without emphasis" in text


def test_validate_prints_file_where_what_per_problem_and_exits_2(course, tmp_path, lesson_document):
    lesson_document["check"]["options"] = "not a list"
    del lesson_document["lesson"]["title"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(lesson_document), encoding="utf-8")
    broken = tmp_path / "broken.md"
    broken.write_bytes(b"\xff\xfe not utf-8")
    result = course("validate", LESSON_DATA / "module-10-sequences-and-attention.md", bad, broken)
    assert result.code == 2
    assert result.out.splitlines() == [
        f"{bad}: /check/options: expected an array, found a string",
        f"{bad}: /lesson: missing required property 'title'",
        f"{broken}: line 1: not UTF-8 text (byte 0xff at offset 0); save the file as UTF-8",
    ]
    assert "Traceback" not in result.err


def test_validate_missing_path_is_a_problem_line(course, tmp_path):
    result = course("validate", tmp_path / "nowhere")
    assert result.code == 2
    assert result.out.strip() == f"{tmp_path / 'nowhere'}: whole file: no such file or folder"


def test_lessons_prints_a_table_of_the_shipped_lessons(course, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = course("lessons")
    assert result.code == 0
    for slug in (
        "from-sequences-to-attention",
        "module-10-sequences-and-attention",
        "sequences-from-recurrence-to-attention",
        "sequences-and-transformers",
        "module-10-question-bank",
    ):
        assert slug in result.out
    assert "Machine Learning, Foundations" in result.out


def test_lessons_lists_good_files_and_reports_the_bad_one(course, tmp_path):
    for path in LESSON_DATA.iterdir():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "zz-garbage.json").write_bytes(b"\x00\x01\x02")
    result = course("lessons", tmp_path)
    assert result.code == 2
    assert "module-10-sequences-and-attention" in result.out
    assert (
        result.err.strip()
        == f"{tmp_path / 'zz-garbage.json'}: line 1: binary content (a NUL byte at offset 0); a lesson file is text"
    )


def test_lessons_in_a_missing_folder_is_one_line_exit_2(course, tmp_path):
    result = course("lessons", tmp_path / "missing")
    assert result.code == 2
    assert result.err == f"course: {tmp_path / 'missing'}: folder not found\n"


def test_show_prints_readable_text_with_the_check_in_display_order(course):
    result = course("show", "from-sequences-to-attention", "--lessons", LESSON_DATA)
    assert result.code == 0
    assert result.out.startswith("Sequences: from recurrence to attention\n")
    letters = re.findall(r"^ ([ *]) ([A-D])\) (\w+)", result.out, flags=re.MULTILINE)
    assert letters == [
        (" ", "A", "Transformers"),
        (" ", "B", "Layer"),
        ("*", "C", "Attention"),
        (" ", "D", "Transformers"),
    ]
    assert "Licence: CC BY-NC-SA 4.0" in result.out


def test_show_json_is_the_model(course):
    result = course("show", "module-10-sequences-and-attention", "--json", "--lessons", LESSON_DATA)
    assert result.code == 0
    model = json.loads(result.out)
    assert model["title"] == "Sequences and attention"
    assert len(model["objectives"]) == 6 and len(model["open_questions"]) == 7


def test_show_unknown_slug_suggests_the_closest(course):
    result = course("show", "from-sequence-to-attention", "--lessons", LESSON_DATA)
    assert result.code == 2
    assert (
        result.err
        == "course: no lesson with slug 'from-sequence-to-attention'; did you mean 'from-sequences-to-attention'?\n"
    )


def test_usage_error_exits_2(course):
    result = course("frobnicate")
    assert result.code == 2
    assert "invalid choice" in result.err


def _commands():
    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction")
    return subparsers.choices


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_has_help_and_is_in_the_readme(name):
    """Documented: in the README or a page of the documentation (docs/) written for its reader."""
    command = _commands()[name]
    assert command.description
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert any(f"course {name}" in page.read_text(encoding="utf-8") for page in pages)


def test_console_scripts_are_installed():
    for script in ("course", "autograder"):
        path = shutil.which(script)
        assert path, f"{script} is not on PATH: install the project with pip install -e ."
        completed = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        assert completed.returncode == 0
        assert completed.stdout.startswith(f"{script} ")


def test_course_command_runs_in_a_real_process(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "course", "validate", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 2
    assert (
        completed.stdout
        == f"{bad}: line 1, column 2: malformed JSON: Expecting property name enclosed in double quotes\n"
    )
    assert "Traceback" not in completed.stderr
