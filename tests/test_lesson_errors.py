"""Bad lesson files get one clear line each, naming file, place and problem; nothing else breaks."""

from __future__ import annotations

import json
import shutil

import pytest

from course.catalog import load_catalog
from course.errors import LessonFileError
from course.loaders import MAX_LESSON_BYTES, load_lesson

from .conftest import JSON_LESSON, LESSON_DATA, MODULE_PAGE


def _no_correct(doc):
    for option in doc["check"]["options"] + doc["reader"]["check"]["options"]:
        option["correct"] = False


def _two_correct(doc):
    doc["check"]["options"][0]["correct"] = True
    doc["reader"]["check"]["options"][0]["correct"] = True


def _repeated_option(doc):
    for check in (doc["check"], doc["reader"]["check"]):
        check["options"][1]["text"] = check["options"][0]["text"]


def _repeated_option_in_plain_check_only(doc):
    doc["check"]["options"][3]["text"] = doc["check"]["options"][1]["text"]


def _reader_option_without_text(doc):
    doc["reader"]["check"]["options"][1]["text"] = []


def _set(path, value):
    def mutate(doc):
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        target[last] = value

    return mutate


def _delete(*path):
    def mutate(doc):
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        del target[last]

    return mutate


@pytest.mark.parametrize(
    "mutate, where, what",
    [
        (_delete("lesson", "title"), "/lesson", "missing required property 'title'"),
        (_set(("check", "options"), {"a": 1}), "/check/options", "expected an array, found an object"),
        (_no_correct, "/check/options", "no option is marked correct; exactly one must be"),
        (_two_correct, "/check/options", "options 1, 3 are all marked correct; exactly one must be"),
        (_repeated_option, "/reader/check/options", "option 2 repeats the text of option 1"),
        (_repeated_option_in_plain_check_only, "/check/options", "option 4 repeats the text of option 2"),
        (
            _set(("reader", "check", "order"), [0, 1, 2]),
            "/reader/check/order",
            "display order [0, 1, 2] is not a permutation of the 4 options",
        ),
        (
            _set(("reader", "check", "order"), [0, 1, 2, 7]),
            "/reader/check/order",
            "display order [0, 1, 2, 7] is not a permutation of the 4 options",
        ),
        (_set(("reader", "check", "order"), [3, 3, 2, 0]), "/reader/check/order", "has repeated items"),
        (_set(("check", "options", 2, "text"), "   "), "/check/options/2/text", "must not be empty or blank"),
        (_reader_option_without_text, "/reader/check/options/1", "option text is empty"),
        (_set(("lesson", "slug"), "Not A Slug"), "/lesson/slug", "must be lower-case words joined by hyphens"),
        (_set(("lesson", "minutes"), -3), "/lesson/minutes", "-3 must be at least 0"),
        (_set(("reader", "blocks", 0, "t"), "marquee"), "/reader/blocks/0/t", '"marquee" is not allowed here'),
        (_delete("reader"), "/", None),
    ],
    ids=[
        "missing-title",
        "options-not-a-list",
        "no-correct-option",
        "two-correct-options",
        "duplicate-option-text",
        "duplicate-option-text-plain-check",
        "order-too-short",
        "order-out-of-range",
        "order-repeats",
        "blank-option",
        "empty-runs-option",
        "bad-slug",
        "negative-minutes",
        "unknown-block-type",
        "body-only-is-fine",
    ],
)
def test_schema_and_model_violations_name_the_json_pointer(tmp_path, lesson_document, mutate, where, what):
    mutate(lesson_document)
    path = tmp_path / "lesson.json"
    path.write_text(json.dumps(lesson_document), encoding="utf-8")
    if what is None:  # a lesson with only body.text is valid: the body is then the source of truth
        lesson = load_lesson(path).lesson
        assert lesson.headings[0] == "The problem with a sequence"
        assert lesson.checks[0].order == [0, 1, 2, 3]
        return
    with pytest.raises(LessonFileError) as caught:
        load_lesson(path)
    lines = [str(problem) for problem in caught.value.problems]
    assert any(line.startswith(f"{path}: {where}: ") and what in line for line in lines), lines


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "name, data, where, what",
    [
        (
            "broken.json",
            b'{"lesson": {"slug": "x",\n  "title": }',
            "line 2, column 12",
            "malformed JSON: Expecting value",
        ),
        ("empty.json", b"", "whole file", "file is empty"),
        ("blank.md", b"  \n\n \n", "whole file", "file is empty"),
        ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 3", "binary content (a NUL byte at offset 8)"),
        (
            "latin1.txt",
            "Le\u00e7on\nUne le\u00e7on sur l'attention".encode("latin-1"),
            "line 1",
            "not UTF-8 text (byte 0xe7 at offset 2)",
        ),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "/", "nested too deeply"),
        ("array.json", b"[1, 2, 3]", "/", "expected an object, found an array"),
        ("untitled.md", b"Just a paragraph with **bold** text.\n\nAnother one.\n", "line 1", "no title"),
    ],
    ids=["malformed-json", "empty", "only-blank", "binary", "not-utf8", "deep-nesting", "not-an-object", "md-no-title"],
)
def test_unreadable_files_get_one_clear_line(tmp_path, name, data, where, what):
    path = _write(tmp_path, name, data)
    with pytest.raises(LessonFileError) as caught:
        load_lesson(path)
    [problem] = caught.value.problems
    assert problem.file == str(path)
    assert problem.where == where
    assert what in problem.what
    assert "\n" not in str(problem)


def test_a_50_mb_file_is_refused_without_being_read(tmp_path):
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: 50 MB on paper, nothing on disk
        handle.truncate(50 * 1000 * 1000)
    assert path.stat().st_size > MAX_LESSON_BYTES
    with pytest.raises(LessonFileError) as caught:
        load_lesson(path)
    assert str(caught.value) == f"{path}: whole file: file is 50.0 MB, over the 5 MB limit for a lesson file"


def test_folder_with_one_bad_file_still_lists_the_good_ones(tmp_path):
    for path in LESSON_DATA.iterdir():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "broken.lesson.json").write_text('{"lesson": [', encoding="utf-8")
    catalog = load_catalog([tmp_path])
    assert len(catalog.lessons) == 5
    assert [str(p) for p in catalog.errors] == [
        f"{tmp_path / 'broken.lesson.json'}: line 1, column 13: malformed JSON: Expecting value"
    ]


def test_a_second_file_with_the_same_slug_is_reported_and_skipped(tmp_path):
    shutil.copy(JSON_LESSON, tmp_path / "a.json")
    shutil.copy(JSON_LESSON, tmp_path / "b.json")
    catalog = load_catalog([tmp_path])
    assert [lesson.source for lesson in catalog.lessons] == [str(tmp_path / "a.json")]
    [error] = catalog.errors
    assert error.file == str(tmp_path / "b.json")
    assert "slug 'from-sequences-to-attention' is already used by" in error.what


def test_body_and_reader_that_disagree_load_with_a_warning(tmp_path, lesson_document):
    lesson_document["body"]["text"] = lesson_document["body"]["text"].replace(
        "the length varies, and order matters", "the length is fixed"
    )
    lesson_document["check"]["options"][1]["tempting"] = "Something else entirely."
    path = tmp_path / "lesson.json"
    path.write_text(json.dumps(lesson_document), encoding="utf-8")
    loaded = load_lesson(path)
    warnings = [str(w) for w in loaded.warnings]
    assert warnings[0].startswith(f"{path}: /reader/blocks/1: warning: body.text and reader.blocks disagree at block 2")
    assert "the reader's blocks are used" in warnings[0]
    assert warnings[1].startswith(f"{path}: /reader/check/options/1/tempting: warning: check and reader.check disagree")
    # the reader's version was used
    paragraph = loaded.lesson.sections[0].blocks[0]
    assert "order matters" in paragraph.runs.plain()


def test_markdown_self_check_without_questions_warns_with_its_line(tmp_path):
    text = MODULE_PAGE.read_text(encoding="utf-8")
    head, _, _ = text.partition("Answer aloud, without looking.")
    path = tmp_path / "page.md"
    path.write_text(head + "Answer aloud, without looking.\n", encoding="utf-8")
    loaded = load_lesson(path)
    line = head.count("\n") - 1
    assert [str(w) for w in loaded.warnings] == [
        f"{path}: line {line}: warning: the 'Self-check' section has no list of questions"
    ]
