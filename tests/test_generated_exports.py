"""Generated check questions on platforms that cannot generate: `course export checks --variants N`
writes each multiple-choice generated question as a pool of N drawn variants of which the platform
gives each student one (a Canvas question group, a QTI 2.1 section selecting one, a Moodle or GIFT
category), and `course import checks` reads the pool back."""

from __future__ import annotations

import re
from importlib import resources

import pytest
from lxml import etree

from course.catalog import load_catalog
from course.exports import POOL_FORMATS

from .conftest import LESSON_DATA
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


@pytest.mark.parametrize("fmt", POOL_FORMATS)
def test_a_pool_of_variants_goes_out_and_comes_back_the_same(course, tmp_path, fmt):
    first, result = _export(course, tmp_path, fmt, "first")
    assert result.out == f"{first}: 18 checks from 1 lesson, 1 pool of variants ({fmt})\n"
    imported = tmp_path / "imported.lesson.json"
    assert course("import", "checks", first, "--out", imported).code == 0
    second, _ = _export(course, tmp_path, fmt, "second", lesson=imported, variants=())
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
    assert "<points_possible>15.0</points_possible>" in meta  # 14 checks and the pool once
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
    assert categories == [
        "$course$/Module checks/Module 10 question bank",
        f"$course$/Module checks/Module 10 question bank/Pool {POOL}",
    ]
    gift = _export(course, tmp_path, "gift")[0].read_text()
    assert f"$CATEGORY: $course$/Module checks/Module 10 question bank/Pool {POOL}\n" in gift
    assert gift.index(f"Pool {POOL}") < gift.index(f"[id:{POOL}-v1]")


def test_a_format_without_pools_and_a_bad_count_are_refused_in_one_line(course, tmp_path):
    result = course("export", "checks", "--format", "olx", "--variants", "4", "--out", tmp_path / "x.tar.gz", BANK)
    assert result.code == 2 and not (tmp_path / "x.tar.gz").exists()
    assert result.err == "course: olx cannot hold a pool of variants; use one of qti12, qti21, moodle, gift\n"
    result = course("export", "checks", "--format", "gift", "--variants", "0", "--out", tmp_path / "x.gift", BANK)
    assert result.code == 2 and "'0' is not a count" in result.err
    # Without --variants, an export is what it was: the fixed checks only.
    _, result = _export(course, tmp_path, "gift", variants=())
    assert "14 checks from 1 lesson (gift)" in result.out
