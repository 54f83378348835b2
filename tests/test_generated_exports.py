"""Generated check questions on platforms that cannot generate: `course export checks --variants N`
writes each generated question as a pool of N drawn variants of which the platform gives each
student one (a Canvas question group, a QTI 2.1 section selecting one, a Moodle or GIFT category):
multiple-choice, numeric (with the margin its tolerance gives) and short-answer ones; Moodle computes
a numeric one whose formula it can say as a calculated question. `course import checks` reads them back."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from importlib import resources

import pytest
from lxml import etree

from course.catalog import load_catalog
from course.generated import draw
from course.imports import CheckImportError, import_checks
from course.models import GeneratedCheck

from .conftest import LESSON_DATA, ROOT
from .test_exports import SCHEMAS, SUFFIX, _files, needs_shared, qti21_schema  # noqa: F401 (a fixture)

BANK = LESSON_DATA / "module-10-question-bank.lesson.json"
POOL = "module-10-question-bank-scale-factor-known-mistake"
QTI12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
QTI21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"


def _export(course, tmp_path, fmt, name="pool", lesson=BANK, variants=("--variants", "4")):
    out = tmp_path / f"{name}.{SUFFIX[fmt]}"
    result = course("export", "checks", "--format", fmt, "--out", out, *variants, lesson)
    assert result.code == 0, result.err
    return out, result


# 14 fixed checks and 4 variants of each of the 5 generated questions; Moodle computes one of them
COUNTS = {"qti12": (34, 5), "qti21": (34, 5), "moodle": (31, 4), "gift": (34, 5), "json": (34, 5)}
IMPORTABLE = sorted(COUNTS)  # every format `course import checks` reads (not Open edX's)


@pytest.mark.parametrize("fmt", IMPORTABLE)
def test_a_pool_of_variants_goes_out_and_comes_back_the_same(course, tmp_path, fmt):
    first, result = _export(course, tmp_path, fmt, "first")
    checks, pools = COUNTS[fmt]
    assert result.out == f"{first}: {checks} checks from 1 lesson, {pools} pools of variants ({fmt})\n"
    imported = tmp_path / "imported.lesson.json"
    assert course("import", "checks", first, "--out", imported).code == 0
    second, _ = _export(course, tmp_path, fmt, "second", lesson=imported)
    assert _files(first) == {name.replace("second", "first"): data for name, data in _files(second).items()}
    [back] = load_catalog([imported]).lessons
    pooled = [check for check in back.checks if check.pool]
    assert [check.id for check in pooled] == [f"{POOL}-v{n}" for n in range(1, 5)]
    assert {check.pool for check in pooled} == {POOL} and len({check.stem.plain() for check in pooled}) == 4
    for check in pooled:  # each variant's distractor from the known mistake keeps its own feedback
        d_k = re.search(r"d_k = (\d+)", check.stem.plain()).group(1)
        no_sqrt = next(option for option in check.options if option.text.plain() == d_k)
        assert not no_sqrt.correct and "square root was forgotten" in no_sqrt.tempting.plain()


@needs_shared
def test_qti_pools_select_one_and_pass_the_ims_schemas(course, tmp_path, qti21_schema):  # noqa: F811
    files = _files(_export(course, tmp_path, "qti21")[0])
    test = etree.fromstring(files["assessmentTest.xml"])
    qti21_schema.assertValid(test)
    [pool] = [section for section in test.iter(f"{QTI21}assessmentSection") if section.get("identifier") == POOL]
    assert pool.find(f"{QTI21}selection").get("select") == "1"
    assert len(pool.findall(f"{QTI21}assessmentItemRef")) == 4
    for name in (f"items/{POOL}-v{n}.xml" for n in range(1, 5)):
        qti21_schema.assertValid(etree.fromstring(files[name]))

    files = _files(_export(course, tmp_path, "qti12")[0])
    [assessment] = [name for name in files if name.endswith(".xml") and "/" in name and "meta" not in name]
    document = etree.fromstring(files[assessment])
    [group] = [section for section in document.iter(f"{QTI12}section") if section.get("ident") == POOL]
    assert group.findtext(f".//{QTI12}selection_number") == "1" and len(group.findall(f"{QTI12}item")) == 4
    meta = files[assessment.replace(assessment.split("/")[1], "assessment_meta.xml")].decode()
    assert "<points_possible>19.0</points_possible>" in meta  # 14 checks and each of the 5 pools once
    kinds = [node.findtext(f"{QTI12}fieldentry") for node in document.iter(f"{QTI12}qtimetadatafield")]
    assert kinds.count("numerical_question") == 12 and kinds.count("short_answer_question") == 4
    for element in document.iter():  # a DTD knows no namespaces
        element.tag = etree.QName(element).localname
    for name in list(document.attrib):
        del document.attrib[name]
    etree.cleanup_namespaces(document)
    dtd = etree.DTD(str(SCHEMAS / "qti12" / "ims_qtiasiv1p2p1.dtd"))
    assert dtd.validate(document), dtd.error_log.filter_from_errors()


def test_moodle_and_gift_put_a_pool_in_its_own_category(course, tmp_path):
    data = _files(_export(course, tmp_path, "moodle")[0])["pool.xml"]
    validator = etree.XMLSchema(etree.parse(str(resources.files("course").joinpath("schemas", "moodle-quiz.xsd"))))
    validator.assertValid(etree.fromstring(data))
    categories = [node.text for node in etree.fromstring(data).iterfind("question[@type='category']/category/text")]
    lesson = "$course$/Module checks/Module 10 question bank"
    assert categories == [
        lesson,
        *(
            f"{lesson}/Pool module-10-question-bank-{name}"
            for name in ("scale-factor-known-mistake", "softmax-of-drawn-scores", "attention-output-shape")
        ),
        f"{lesson}/Pool module-10-question-bank-scale-factor-of-drawn-dk",
        lesson,  # the calculated question, which Moodle computes itself: no pool
    ]
    gift = _export(course, tmp_path, "gift")[0].read_text()
    assert f"$CATEGORY: $course$/Module checks/Module 10 question bank/Pool {POOL}\n" in gift
    assert gift.index(f"Pool {POOL}") < gift.index(f"[id:{POOL}-v1]")


def test_a_bad_count_is_refused_in_one_line_and_without_variants_an_export_is_what_it_was(course, tmp_path):
    result = course("export", "checks", "--format", "gift", "--variants", "0", "--out", tmp_path / "x.gift", BANK)
    assert result.code == 2 and "'0' is not a count" in result.err
    # Without --variants, an export is what it was: the fixed checks only.
    _, result = _export(course, tmp_path, "gift", variants=())
    assert "14 checks from 1 lesson (gift)" in result.out


def test_open_edx_gives_each_learner_one_of_a_pool_from_a_randomized_content_block(course, tmp_path):
    """A pool is a library_content block (max_count 1) holding its variants, drawn from the library
    export's id; the problems, numeric and short answers too, pass the project's OLX schema. olxcleaner
    knows no library_content (its verticals hold six kinds of block), and says only that."""
    from olxcleaner import validate

    archive, result = _export(course, tmp_path, "olx", "olx")
    assert result.out == f"{archive}: 34 checks from 1 lesson, 5 pools of variants (olx)\n"
    files = _files(archive)
    vertical = etree.fromstring(files["course/vertical/module-10-question-bank-checks.xml"])
    blocks = [child.get("url_name") for child in vertical if child.tag == "library_content"]
    assert len(blocks) == 5 and f"{POOL}" in blocks and len(vertical) == 14 + 5
    block = etree.fromstring(files[f"course/library_content/{POOL}.xml"])
    assert (block.get("max_count"), block.get("mode"), block.get("source_library_id")) == (
        "1",
        "random",
        "library-v1:module10+checks",
    )
    assert [child.get("url_name") for child in block] == [f"{POOL}-v{n}" for n in range(1, 5)]
    validator = etree.XMLSchema(etree.parse(str(resources.files("course").joinpath("schemas", "olx-problem.xsd"))))
    problems = {name: etree.fromstring(data) for name, data in files.items() if "/problem/" in name}
    for problem in problems.values():
        validator.assertValid(problem)
    numeric = problems["course/problem/module-10-question-bank-softmax-of-drawn-scores-v1.xml"]
    assert numeric.find("numericalresponse/responseparam").get("default") == "0.0005"
    assert course("export", "checks", "--format", "olx", "--variants", "4", "--out", tmp_path / "olx", BANK).code == 0
    _, errors, _ = validate(str(tmp_path / "olx" / "course"), steps=8)
    assert {f"{type(e).__name__}: {e.description}".split(" tag was")[0] for e in errors.errors} == {
        "UnexpectedTag: A <library_content>"
    }
    library = tmp_path / "library"
    assert (
        course(
            "export", "checks", "--format", "olx", "--olx-unit", "library", "--variants", "4", "--out", library, BANK
        ).code
        == 0
    )
    held = [child.get("url_name") for child in etree.parse(str(library / "library" / "library.xml")).getroot()]
    assert {f"{POOL}-v{n}" for n in range(1, 5)} <= set(held) and len(held) == 34


def _typed_back(course, tmp_path, fmt):
    """The bank exported with 4 variants and imported again: its generated questions by id."""
    first, _ = _export(course, tmp_path, fmt)
    imported = tmp_path / "typed.lesson.json"
    assert course("import", "checks", first, "--out", imported).code == 0
    [back] = load_catalog([imported]).lessons
    return {question.id: question for question in back.generated}


@pytest.mark.parametrize("fmt", IMPORTABLE)
def test_numeric_and_short_answer_variants_come_back_with_their_answers_and_tolerance(course, tmp_path, fmt):
    back = _typed_back(course, tmp_path, fmt)
    [original] = load_catalog([BANK]).lessons
    bank = {question.id: question for question in original.generated}
    for name, question in (("softmax-of-drawn-scores", "numeric"), ("attention-output-shape", "short-answer")):
        pool = f"module-10-question-bank-{name}"
        variants = [back[f"{pool}-v{n}"] for n in range(1, 5)]
        assert {v.pool for v in variants} == {pool} and {v.kind for v in variants} == {question}
        for n, variant in enumerate(variants):
            assert variant.fixed
            drawn, again = draw(bank[name], "export", n), draw(variant, "anyone")
            assert again.stem == drawn.stem and again.feedback == drawn.feedback
            if question == "numeric":  # right within the stated margin, wrong just outside it
                assert again.answer == drawn.answer and again.tolerance.absolute == 0.0005
                assert again.is_right(f"{drawn.answer + 0.0004:.6f}") and not again.is_right(
                    f"{drawn.answer + 0.0007:.6f}"
                )
            else:
                assert again.is_right(str(drawn.answer).replace(" ", "")) and not again.is_right("(1, 2)")
    weights = "attention-weights-count"
    if fmt == "moodle":  # computed by Moodle, read back as the generated question it was
        assert back[weights].model_dump(include={"parameters", "answer", "kind"}) == {
            "parameters": bank[weights].model_dump()["parameters"],
            "answer": "h*pow(n,2)",
            "kind": "numeric",
        }
        for student in ("ada", "grace"):
            assert draw(back[weights], student).answer == draw(bank[weights], student).answer
            assert draw(back[weights], student).feedback == draw(bank[weights], student).feedback
    else:
        assert {back[f"module-10-question-bank-{weights}-v{n}"].pool for n in range(1, 5)} == {
            f"module-10-question-bank-{weights}"
        }


def _moodle_value(formula: str, values: dict) -> float:
    """A Moodle formula's value, read as Moodle reads it: each {wildcard} its dataset item's value,
    then arithmetic with Moodle's functions (pow, sqrt, round...)."""
    import math

    text = re.sub(r"\{(\w+)\}", lambda m: repr(values[m.group(1)]), formula)
    assert re.fullmatch(r"[\d.eE+\-*/(), a-z]*", text), text
    return eval(text, {"__builtins__": {}}, {"pow": pow, "sqrt": math.sqrt, "round": round, "abs": abs})


def test_moodle_calculated_question_holds_the_drawn_datasets_and_passes_its_schema(course, tmp_path):
    [original] = load_catalog([BANK]).lessons
    question = next(q for q in original.generated if q.id == "attention-weights-count")
    data = _files(_export(course, tmp_path, "moodle")[0])["pool.xml"]
    validator = etree.XMLSchema(etree.parse(str(resources.files("course").joinpath("schemas", "moodle-quiz.xsd"))))
    document = etree.fromstring(data)
    validator.assertValid(document)
    [node] = document.iterfind("question[@type='calculated']")
    assert node.findtext("idnumber") == "attention-weights-count"
    assert node.findtext("answer/tolerancetype") == "2" and float(node.findtext("answer/tolerance")) == 0
    assert "{h} heads" in node.findtext("questiontext/text")
    datasets = {
        d.findtext("name/text"): [float(v.text) for v in d.iterfind("dataset_items/dataset_item/value")]
        for d in node.iterfind("dataset_definitions/dataset_definition")
    }
    assert sorted(datasets) == ["h", "n"] and all(len(items) == 4 for items in datasets.values())
    for k in range(4):  # item k of every dataset is variant k as drawn here: the same answer from Moodle's formula
        drawn = draw(question, "export", k)
        values = {name: items[k] for name, items in datasets.items()}
        assert values == {"h": drawn.values["h"], "n": drawn.values["n"]}
        assert _moodle_value(node.findtext("answer/text"), values) == drawn.answer
        shown = re.search(r"\{=((?:[^{}]|\{\w+\})*)\}", node.findtext("generalfeedback/text")).group(1)
        assert _moodle_value(shown, values) == drawn.values["count"]
    # The numeric questions Moodle cannot compute go out as numerical pools with their margins.
    numerical = [q for q in document.iterfind("question[@type='numerical']")]
    assert len(numerical) == 8 and {q.findtext("answer/tolerance") for q in numerical} == {"0.0005", "0.005"}
    short = [[a.text for a in q.iterfind("answer/text")] for q in document.iterfind("question[@type='shortanswer']")]
    assert ["(7, 12, 24)", "(7,12,24)"] in short and len(short) == 4


FITTING = {
    "id": "q",
    "kind": "numeric",
    "question": "What is the square root of d_k = {d_k}?",
    "parameters": {"d_k": {"range": [4, 400]}, "t": {"uniform": [0.5, 2.0], "digits": 1}},
    "values": {"scale": "sqrt(d_k)", "scaled": "scale * t"},
    "answer": "scale",
    "tolerance": {"relative": 0.01, "absolute": 0},
    "feedback": "\\(\\sqrt{{{d_k}}} \\approx {scale:.2f}\\), and {t} times it is {scaled:g}.",
}


def test_a_calculated_question_with_rounded_values_and_a_relative_tolerance_comes_back_as_it_was(
    course, tmp_path, lesson_document
):
    lesson_document["generated"] = [FITTING]
    lesson = tmp_path / "fits.lesson.json"
    lesson.write_text(json.dumps(lesson_document))
    first, _ = _export(course, tmp_path, "moodle", "first", lesson=lesson)
    [node] = etree.parse(str(first)).getroot().iterfind("question[@type='calculated']")
    assert node.findtext("answer/tolerancetype") == "1" and node.findtext("answer/tolerance") == "0.01"
    assert node.findtext("generalfeedback/text").endswith(
        "\\approx {=round(sqrt({d_k}),2)}\\), and {t} times it is {=sqrt({d_k})*{t}}."
    )
    decimals = {d.findtext("name/text"): d.findtext("decimals/text") for d in node.iter("dataset_definition")}
    assert decimals == {"d_k": "0", "t": "1"}
    imported = tmp_path / "back.lesson.json"
    assert course("import", "checks", first, "--out", imported).code == 0
    second, _ = _export(course, tmp_path, "moodle", "second", lesson=imported)
    assert second.read_bytes() == first.read_bytes()
    [back] = load_catalog([imported]).lessons
    [question] = back.generated
    assert question.parameters["t"].uniform == (0.5, 2.0) and question.tolerance.relative == 0.01
    original = GeneratedCheck(**FITTING)
    for student in ("ada", "grace", "alan"):  # the same variant for every student, drawn from either
        ours, theirs = draw(original, student), draw(question, student)
        # Moodle shows a value rounded (:.2f) without trailing zeros, and a :g one in full: so does the import.
        shown = ours.feedback.plain().replace(f"{ours.values['scale']:.2f}", str(round(ours.values["scale"], 2)))
        shown = shown.replace(f"{ours.values['scaled']:g}.", f"{ours.values['scaled']}.")
        assert (theirs.answer, theirs.stem, theirs.feedback.plain()) == (ours.answer, ours.stem, shown)


@pytest.mark.parametrize(
    "change, why",
    [
        ({"parameters": {"d_k": {"choices": [16, 64]}}}, "parameter d_k"),
        ({"generator": "_gen.py:f"}, "generator is Python"),
        ({"tolerance": {"relative": 0.01, "absolute": 0.1}}, "both relative and absolute"),
        ({"question": "With \\(\\sqrt{{d_k}}\\) for d_k = {d_k}"}, "holds {d_k} itself"),
        ({"feedback": "{scale:e}"}, "plain or rounded"),
        ({"answer": "d_k // 2"}, "not in Moodle's formula language"),
    ],
)
def test_a_numeric_question_moodle_cannot_compute_is_said_why(change, why):
    from course.exports.calculated import unfit

    fitting = {**FITTING, "tolerance": {"relative": 0, "absolute": 0.01}}
    assert unfit(GeneratedCheck(**fitting)) is None
    assert why in unfit(GeneratedCheck(**{**fitting, **change}))


GIFT_READER = """
const questions = require("gift-pegjs").parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(JSON.stringify(questions.filter((q) => q.type !== "Category")));
"""


def test_gift_pools_are_read_by_an_independent_gift_parser(course, tmp_path):
    """gift-pegjs (npm), a GIFT parser of its own, reads every variant: a numeric one's answer and
    margin, a short answer's accepted texts, the feedback, and each multiple-choice variant's options."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "gift-pegjs").is_dir():
        missing = "node or node_modules/gift-pegjs (`npm ci`, as .ci/run does)"
        if os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"):
            pytest.fail(f"{missing} is missing")
        pytest.skip(f"{missing} is missing")
    gift, _ = _export(course, tmp_path, "gift")
    done = subprocess.run(
        [node, "-e", GIFT_READER, str(gift)], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    read = {question["id"]: question for question in json.loads(done.stdout)}
    assert len(read) == 34
    [original] = load_catalog([BANK]).lessons
    bank = {question.id: question for question in original.generated}
    for n in range(4):
        numeric = read[f"module-10-question-bank-softmax-of-drawn-scores-v{n + 1}"]
        drawn = draw(bank["softmax-of-drawn-scores"], "export", n)
        assert numeric["type"] == "Numerical" and numeric["choices"][0]["text"] == {
            "type": "range",
            "number": drawn.answer,
            "range": 0.0005,
        }
        assert numeric["globalFeedback"]["text"].endswith(f"= {drawn.answer:.3f}\\).")
        short = read[f"module-10-question-bank-attention-output-shape-v{n + 1}"]
        answer = draw(bank["attention-output-shape"], "export", n).answer
        assert short["type"] == "Short"
        assert [c["text"]["text"] for c in short["choices"]] == [answer, answer.replace(" ", "")]
        choice = read[f"{POOL}-v{n + 1}"]
        assert choice["type"] == "MC" and sum(c["isCorrect"] for c in choice["choices"]) == 1
    weights = read["module-10-question-bank-attention-weights-count-v1"]
    assert weights["type"] == "Numerical" and weights["choices"][0]["text"]["range"] == 0


@pytest.mark.parametrize(
    "text, answer, margin",
    [
        ("::pi::What is pi? {#3.14159:0.0005}", 3.14159, 0.0005),
        ("::pi::What is pi? {#=3.14159:0.0005#close enough}", 3.14159, 0.0005),
        ("::pi::What is pi? {#3.1..3.2}", 3.15, 0.05),
        ("::pi::What is pi? {#3}", 3.0, 0.0),
    ],
)
def test_a_hand_written_gift_numeric_question_comes_in_with_its_margin(tmp_path, text, answer, margin):
    source = tmp_path / "hand.gift"
    source.write_text(text + "\n")
    out, count = import_checks(source, tmp_path / "hand.lesson.json")
    [lesson] = load_catalog([out]).lessons
    [question] = lesson.generated
    drawn = draw(question, "anyone")
    assert count == 1 and question.fixed and drawn.stem.plain() == "What is pi?"
    assert drawn.answer == pytest.approx(answer) and question.tolerance.absolute == pytest.approx(margin)
    assert drawn.is_right(str(answer + margin * 0.9)) and not drawn.is_right(str(answer + margin + 0.01))


def test_a_numeric_gift_answer_that_is_no_number_is_a_one_line_error(tmp_path):
    source = tmp_path / "bad.gift"
    source.write_text("::pi::What is pi? {#about three}\n")
    with pytest.raises(CheckImportError, match=r"line 1: question 1: 'about three' is neither answer:margin"):
        import_checks(source, tmp_path / "bad.lesson.json")
