"""`course export checks` in every format, and `course import checks` back."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
import zipfile
from importlib import resources
from pathlib import Path

import pytest
from lxml import etree

from course.catalog import load_catalog
from course.exports import DEFAULT_TITLE, EXPORTERS, export_checks
from course.exports.package import ExportError
from course.imports import CheckImportError, import_checks

from .conftest import JSON_LESSON, LESSON_DATA, ROOT, SHARED

FIXTURE = ROOT / "tests" / "fixtures" / "tricky-checks.lesson.json"
SOURCES = [JSON_LESSON, FIXTURE]
BANK = LESSON_DATA / "module-10-question-bank.lesson.json"
SUFFIX = {
    "qti12": "zip",
    "qti21": "zip",
    "moodle": "xml",
    "gift": "gift",
    "olx": "tar.gz",
    "olx-library": "tar.gz",
    "json": "json",
}
SCHEMAS = SHARED / "schemas"
needs_shared = pytest.mark.skipif(
    not SCHEMAS.is_dir(), reason="../shared/schemas is absent: the IMS schemas cannot be read"
)


def _export(tmp_path, fmt, sources=SOURCES, name="out"):
    out = tmp_path / f"{name}.{SUFFIX[fmt]}"
    export_checks(sources, fmt, out)
    return out


def _files(path: Path) -> dict[str, bytes]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path) as archive:
            return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
    return {path.name: path.read_bytes()}


def _expected_checks():
    """Every check as a student sees it: stem, options in display order, feedback."""
    lessons = [lesson for lesson in load_catalog(SOURCES).lessons if lesson.checks]
    return [
        (
            check.stem.markdown(),
            [(o.text.markdown(), o.correct, o.tempting.markdown() if o.tempting else None) for o in check.displayed()],
        )
        for lesson in lessons
        for check in lesson.checks
    ]


@pytest.fixture(scope="session")
def qti21_schema():
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "qti21" / "qtiv2p1" / "imsqti_v2p1.xsd")))


@pytest.mark.parametrize("fmt", sorted(EXPORTERS))
def test_same_input_gives_byte_identical_output(tmp_path, fmt):
    first, second = _export(tmp_path, fmt, name="a"), _export(tmp_path, fmt, name="b")
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("fmt", sorted(EXPORTERS))
def test_every_check_keeps_display_order_feedback_and_stable_ids(tmp_path, fmt):
    files = _files(_export(tmp_path, fmt))
    text = "\n".join(data.decode("utf-8") for name, data in files.items() if not name.endswith(".png"))
    for identifier in ("from-sequences-to-attention-check-1", "tricky-checks-check-1", "tricky-checks-check-2"):
        assert identifier in text
    # the seed check's display order puts option 3 ("Transformers cannot process...") first
    first, last = (
        text.find("Transformers cannot process sequences incrementally"),
        text.find("Transformers have more parameters per layer"),
    )
    assert 0 <= first < last
    assert "Layer norm’s statistics are a few numbers per position" in text  # a tempting explanation as feedback
    assert "Correct." in text
    assert "Attention lets every position read every other in one step" in text  # the key idea


@needs_shared
def test_qti21_items_test_and_manifest_are_schema_valid_with_mathml(tmp_path, qti21_schema):
    files = _files(_export(tmp_path, "qti21"))
    manifest = etree.XMLSchema(etree.parse(str(SCHEMAS / "qti21" / "imscp_v1p1.xsd")))
    manifest.assertValid(etree.fromstring(files.pop("imsmanifest.xml")))
    assert len(files) == 4  # the test and three items
    for data in files.values():
        qti21_schema.assertValid(etree.fromstring(data))
    item = files["items/tricky-checks-check-2.xml"].decode()
    assert "<m:math" in item and '<m:annotation encoding="application/x-tex">\\sqrt{d_k}</m:annotation>' in item
    assert "\\(" not in item
    assert 'shuffle="false"' in item and item.count("<modalFeedback") == 5


@needs_shared
def test_qti12_assessment_is_valid_against_the_dtd(tmp_path):
    files = _files(_export(tmp_path, "qti12"))
    [assessment] = [name for name in files if name.endswith(".xml") and "/" in name and "meta" not in name]
    quiz = assessment.split("/")[0]
    assert set(files) == {"imsmanifest.xml", f"{quiz}/{quiz}.xml", f"{quiz}/assessment_meta.xml"}
    document = etree.fromstring(files[assessment])
    for element in document.iter():  # a DTD knows no namespaces
        element.tag = etree.QName(element).localname
    for name in list(document.attrib):
        if name.startswith("{"):
            del document.attrib[name]
    etree.cleanup_namespaces(document)
    dtd = etree.DTD(str(SCHEMAS / "qti12" / "ims_qtiasiv1p2p1.dtd"))
    assert dtd.validate(document), dtd.error_log.filter_from_errors()
    text = files[assessment].decode()
    assert "multiple_choice_question" in text and "\\(\\sqrt{d_k}\\)" in text


def test_qti12_has_what_canvas_writes_and_ids_that_never_collide(tmp_path):
    """The fields of Canvas's own quiz exports: a content-derived quiz identifier (two different exports
    never share one), assessment_question_identifierref, points as 1, answer ids unique across the quiz,
    the quiz's assignment block, and the manifest's schemaLocation and LOM title."""
    first, other = _files(_export(tmp_path, "qti12", name="a")), _files(_export(tmp_path, "qti12", [BANK], name="b"))
    quiz = next(name.split("/")[0] for name in first if "/" in name)
    assert re.fullmatch(r"g[0-9a-f]{32}", quiz) and quiz not in {name.split("/")[0] for name in other if "/" in name}
    q = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
    assessment = etree.fromstring(first[f"{quiz}/{quiz}.xml"])
    answers = [label.get("ident") for label in assessment.iter(f"{q}response_label")]
    assert len(answers) == len(set(answers)) == 4 + 4 + 4 and all(answer.isdigit() for answer in answers)
    for item in assessment.iter(f"{q}item"):
        fields = {
            field.findtext(f"{q}fieldlabel"): field.findtext(f"{q}fieldentry")
            for field in item.iter(f"{q}qtimetadatafield")
        }
        assert fields["points_possible"] == "1" and fields["question_type"] == "multiple_choice_question"
        assert re.fullmatch(r"g[0-9a-f]{32}", fields["assessment_question_identifierref"])
    c = "{http://canvas.instructure.com/xsd/cccv1p0}"
    assignment = etree.fromstring(first[f"{quiz}/assessment_meta.xml"]).find(f"{c}assignment")
    assert assignment.findtext(f"{c}points_possible") == "3.0"
    assert assignment.findtext(f"{c}grading_type") == "points"
    assert assignment.findtext(f"{c}workflow_state") == "unpublished"
    assert assignment.findtext(f"{c}quiz_identifierref") == quiz
    manifest = etree.fromstring(first["imsmanifest.xml"])
    assert "imscp_v1p1.xsd" in manifest.get("{http://www.w3.org/2001/XMLSchema-instance}schemaLocation")
    assert manifest.findtext(".//{http://www.imsglobal.org/xsd/imsmd_v1p2}string") == DEFAULT_TITLE


@pytest.mark.parametrize(
    "fmt, schema, members",
    [
        ("moodle", "moodle-quiz.xsd", lambda f: f),
        ("olx", "olx-problem.xsd", lambda f: {k: v for k, v in f.items() if "/problem/" in k}),
    ],
)
def test_moodle_and_olx_match_the_project_schemas(tmp_path, fmt, schema, members):
    validator = etree.XMLSchema(etree.parse(str(resources.files("course").joinpath("schemas", schema))))
    files = members(_files(_export(tmp_path, fmt)))
    assert files
    for data in files.values():
        validator.assertValid(etree.fromstring(data))


def test_olx_is_a_course_studio_imports_as_a_folder_or_tar_gz(tmp_path):
    folder = tmp_path / "olx"
    export_checks(SOURCES, "olx", folder)
    assert (folder / "course" / "course.xml").is_file()
    problems = sorted(p.name for p in (folder / "course" / "problem").iterdir())
    assert problems == [
        "from-sequences-to-attention-check-1.xml",
        "tricky-checks-check-1.xml",
        "tricky-checks-check-2.xml",
    ]
    archived = _files(_export(tmp_path, "olx"))
    assert {name: data for name, data in archived.items()} == {
        str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    problem = (folder / "course" / "problem" / "tricky-checks-check-1.xml").read_text()
    assert "<choicehint>" in problem and "<code>scores[~mask] = -np.inf</code>" in problem


@pytest.mark.parametrize("sources", [SOURCES, [LESSON_DATA]], ids=["fixtures", "lesson-data"])
def test_olx_course_passes_the_open_edx_validator(tmp_path, sources):
    """olxcleaner, the Open edX OLX validator, finds no error and no warning in the course export."""
    from olxcleaner import validate

    folder = tmp_path / "olx"
    export_checks(sources, "olx", folder)
    _, errors, _ = validate(str(folder / "course"), steps=8)
    assert [f"{type(e).__name__}: {e.description}" for e in errors.errors] == []


def test_olx_library_holds_the_same_problems_for_an_existing_course(course, tmp_path):
    result = course("export", "checks", "--format", "olx", "--olx-unit", "library", "--out", tmp_path / "lib", *SOURCES)
    assert result.code == 0, result.err
    library = etree.parse(str(tmp_path / "lib" / "library" / "library.xml")).getroot()
    assert library.tag == "library" and library.get("xblock-family") == "xblock.v1"
    problems = [child.get("url_name") for child in library]
    assert problems == ["from-sequences-to-attention-check-1", "tricky-checks-check-1", "tricky-checks-check-2"]
    export_checks(SOURCES, "olx", tmp_path / "course-olx")
    for name in problems:  # the very problems of the course export
        assert (tmp_path / "lib" / "library" / "problem" / f"{name}.xml").read_bytes() == (
            tmp_path / "course-olx" / "course" / "problem" / f"{name}.xml"
        ).read_bytes()


def test_json_export_follows_its_published_schema(tmp_path):
    from course.schemas import schema_problems

    document = json.loads(_export(tmp_path, "json").read_text())
    assert schema_problems("checks-export", document) == []
    check = document["checks"][2]
    assert check["stem"]["markdown"].startswith("Queries and keys have \\(d_k = 64\\)")
    assert [o["correct"] for o in check["options"]] == [False, True, False, False]


def test_gift_escapes_every_special_character(tmp_path):
    text = _export(tmp_path, "gift").read_text()
    assert "<code>scores[\\~mask] \\= -np.inf</code>" in text
    assert "\\\\(\\\\sqrt\\{d_k\\}\\\\)" in text
    assert "<code>\\{k\\: v for k, v in zip(K, V)\\}</code> \\# a dict lookup" in text


@pytest.mark.parametrize("fmt", ["qti12", "qti21", "moodle", "gift", "json"])
def test_export_then_import_gives_back_the_same_checks(tmp_path, fmt):
    exported = _export(tmp_path, fmt)
    out, count = import_checks(exported, tmp_path / "imported.lesson.json")
    assert count == 3
    [lesson] = load_catalog([out]).lessons
    got = [
        (
            c.stem.markdown(),
            [(o.text.markdown(), o.correct, o.tempting.markdown() if o.tempting else None) for o in c.displayed()],
        )
        for c in lesson.checks
    ]
    assert got == _expected_checks()
    assert lesson.key_idea.startswith("Attention lets every position")


def _write_lesson(tmp_path, mutate):
    document = json.loads(FIXTURE.read_text())
    mutate(document["checks"][0]["options"])
    path = tmp_path / "broken.lesson.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    "mutate, where, what",
    [
        (lambda options: options[0].update(correct=False), "/checks/0/options", "no option is marked correct"),
        (lambda options: options[1].update(correct=True), "/checks/0/options", "options 1, 2 are all marked correct"),
        (lambda options: options[2].update(text=""), "/checks/0/options/2/text", "must not be empty or blank"),
        (lambda options: options[3].update(text="  \t "), "/checks/0/options/3/text", "must not be empty or blank"),
    ],
    ids=["no-correct", "two-correct", "empty-option", "whitespace-option"],
)
@pytest.mark.parametrize("fmt", sorted(EXPORTERS))
def test_bad_checks_are_refused_naming_lesson_and_option_and_nothing_is_written(tmp_path, fmt, mutate, where, what):
    source = _write_lesson(tmp_path, mutate)
    out = tmp_path / f"out.{SUFFIX[fmt]}"
    with pytest.raises(ExportError) as caught:
        export_checks([source], fmt, out)
    message = str(caught.value)
    assert message.startswith(f"nothing exported: {source}: {where}: ") and what in message
    assert "\n" not in message
    assert list(tmp_path.iterdir()) == [source]


def test_unknown_format_and_missing_folder_are_one_line_errors(course, tmp_path):
    result = course("export", "checks", "--format", "pdf", "--out", tmp_path / "x")
    assert result.code == 2 and "invalid choice: 'pdf'" in result.err
    result = course("export", "checks", "--format", "gift", "--out", tmp_path / "missing" / "x.gift")
    assert result.code == 2
    assert (
        result.err
        == f"course: {tmp_path / 'missing' / 'x.gift'}: cannot write here: the folder {tmp_path / 'missing'} does not exist\n"
    )
    with pytest.raises(ExportError, match="unknown format 'pdf'"):
        export_checks([JSON_LESSON], "pdf", tmp_path / "x")


def test_export_and_import_commands(course, tmp_path):
    result = course("export", "checks", "--format", "moodle", "--out", tmp_path / "q.xml", JSON_LESSON, FIXTURE)
    assert result.code == 0 and result.out == f"{tmp_path / 'q.xml'}: 3 checks from 2 lessons (moodle)\n"
    result = course("import", "checks", tmp_path / "q.xml", "--out", tmp_path / "bank.lesson.json")
    assert result.code == 0 and result.out == f"{tmp_path / 'bank.lesson.json'}: 3 checks imported\n"
    assert course("validate", tmp_path / "bank.lesson.json").code == 0


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("garbage.zip", b"PK\x03\x04 not really a zip", "not a readable zip archive"),
        (
            "truncated.xml",
            b'<?xml version="1.0"?>\n<quiz>\n<question type="multichoice">\n<name><text>q',
            "not well-formed XML at line 4",
        ),
        ("latin1.gift", b"::q::Caf\xe9? {=a ~b}", "not UTF-8 text (a byte 0xe9 at offset 8)"),
        ("other.xml", b"<html><body>hi</body></html>", "an XML file that is neither Moodle XML nor QTI"),
        ("two.gift", b"::q::Which? {=a =b ~c}", "question 1: needs exactly one right answer (=)"),
        ("none.gift", b"// only a comment\n", "holds no single-answer check questions"),
    ],
)
def test_bad_import_files_are_one_line_errors(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CheckImportError) as caught:
        import_checks(path, tmp_path / "out.lesson.json")
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert not (tmp_path / "out.lesson.json").exists()


def test_export_of_lessons_without_checks_says_so(tmp_path):
    shutil.copy(LESSON_DATA / "module-10-sequences-and-attention.md", tmp_path / "page.md")
    with pytest.raises(ExportError, match="the lessons hold no check questions"):
        export_checks([tmp_path], "gift", tmp_path / "x.gift")
    assert re.fullmatch(r"page\.md", " ".join(p.name for p in tmp_path.iterdir()))


@needs_shared
def test_the_question_bank_exports_as_schema_valid_qti21(tmp_path, qti21_schema):
    files = _files(_export(tmp_path, "qti21", sources=[BANK]))
    items = {name: data for name, data in files.items() if name.startswith("items/")}
    assert len(items) == 14
    for data in items.values():
        qti21_schema.assertValid(etree.fromstring(data))


def test_default_export_is_every_check_in_lesson_data(course, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = course("export", "checks", "--format", "json", "--out", tmp_path / "all.json")
    assert result.out == f"{tmp_path / 'all.json'}: 15 checks from 2 lessons (json)\n"


@pytest.mark.parametrize("fmt", ["qti12", "qti21", "moodle", "gift", "json"])
@pytest.mark.parametrize("lesson", [BANK, JSON_LESSON, FIXTURE], ids=["bank", "seed-lesson", "tricky"])
def test_export_import_export_gives_the_same_files_identifiers_included(course, tmp_path, fmt, lesson):
    """A re-export after an import updates the same questions on the platform: same identifiers,
    same titles, same bytes; through the real commands."""
    first, second = tmp_path / f"first.{SUFFIX[fmt]}", tmp_path / f"second.{SUFFIX[fmt]}"
    imported = tmp_path / "imported.lesson.json"
    assert course("export", "checks", "--format", fmt, "--out", first, lesson).code == 0
    assert course("import", "checks", first, "--out", imported).code == 0
    assert course("export", "checks", "--format", fmt, "--out", second, imported).code == 0
    assert _files(first) == {name.replace("second", "first"): data for name, data in _files(second).items()}
    [original], [back] = load_catalog([lesson]).lessons, load_catalog([imported]).lessons
    assert back.title == original.title


def test_qti21_items_come_back_in_the_tests_order_not_file_names(tmp_path):
    exported = _export(tmp_path, "qti21", [BANK])
    imported, count = import_checks(exported, tmp_path / "imported.lesson.json")
    [lesson] = load_catalog([imported]).lessons
    assert count == 14
    assert [check.id for check in lesson.checks] == [f"module-10-question-bank-check-{n}" for n in range(1, 15)]


@pytest.mark.parametrize(
    "content, message",
    [
        (
            "// x\n\n::a::One {=x ~y}\n\n::b::Two { {=x ~y}\n",
            "line 5: question 2: an unescaped { or } inside the question",
        ),
        ("::a::One {=x ~y}\n\n::b::Two {=x ~y\n", "line 3: question 2: no {...} answer block"),
        ("::a::What is {1 ~x =y}\n", "line 1: question 1: text before the first answer (~ or =)"),
        ("::a::One {=x ~y} and more\n", "line 1: question 1: text after the answer block's closing }"),
    ],
)
def test_malformed_gift_is_a_one_line_error_with_its_line(course, tmp_path, content, message):
    path = tmp_path / "bad.gift"
    path.write_text(content)
    result = course("import", "checks", path, "--out", tmp_path / "out.lesson.json")
    assert result.code == 2
    assert result.err.startswith(f"course: {path}: {message}") and result.err.count("\n") == 1
    assert not (tmp_path / "out.lesson.json").exists()


def test_gift_category_is_written_as_moodle_reads_it(tmp_path):
    lesson = json.loads(JSON_LESSON.read_text())
    lesson["lesson"]["title"] = "Sequences: from recurrence / to attention"
    path = tmp_path / "titled.lesson.json"
    path.write_text(json.dumps(lesson))
    text = _export(tmp_path, "gift", [path]).read_text()
    assert "$CATEGORY: $course$/Module checks/Sequences: from recurrence // to attention\n" in text
    assert "// [id:from-sequences-to-attention-check-1]\n::from-sequences-to-attention-check-1::" in text
    imported, _ = import_checks(tmp_path / "out.gift", tmp_path / "back.lesson.json")
    assert load_catalog([imported]).lessons[0].title == "Sequences: from recurrence / to attention"


def test_plain_gift_keeps_math_and_its_authors_backslashes(tmp_path):
    path = tmp_path / "plain.gift"
    path.write_text("::q1::What is \\(x^2\\) \\{braced\\}? {=It is \\(x \\cdot x\\) ~Something else#No.}\n")
    imported, count = import_checks(path, tmp_path / "plain.lesson.json")
    [check] = load_catalog([imported]).lessons[0].checks
    assert count == 1 and check.id == "q1"
    assert [(run.text, run.math) for run in check.stem.root] == [
        ("What is ", False),
        ("x^2", True),
        (" {braced}?", False),
    ]
    assert [(run.text, run.math) for run in check.options[0].text.root] == [("It is ", False), ("x \\cdot x", True)]
    assert check.options[1].tempting.plain() == "No."
