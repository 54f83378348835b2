"""QTI 1.2 as Canvas imports it: a zip with ``imsmanifest.xml``, the assessment
(``<id>/<id>.xml``, single-answer ``multiple_choice_question`` items with per-answer feedback) and
Canvas's ``assessment_meta.xml``. Text is HTML; math stays as \\( \\) for MathJax."""

from __future__ import annotations

from string import ascii_uppercase

from lxml import etree

from .items import ExportItem, to_html
from .package import Package

QTI12 = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CANVAS = "http://canvas.instructure.com/xsd/cccv1p0"
CC = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
ASSESSMENT_ID = "module-checks"


def export(items: list[ExportItem], title: str) -> Package:
    return Package(
        files=[
            ("imsmanifest.xml", _bytes(manifest(title))),
            (f"{ASSESSMENT_ID}/{ASSESSMENT_ID}.xml", _bytes(assessment(items, title))),
            (f"{ASSESSMENT_ID}/assessment_meta.xml", _bytes(meta(items, title))),
        ],
        container="zip",
    )


def assessment(items: list[ExportItem], title: str) -> etree._Element:
    root = etree.Element(f"{{{QTI12}}}questestinterop", nsmap={None: QTI12, "xsi": XSI})
    root.set(f"{{{XSI}}}schemaLocation", f"{QTI12} http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd")
    test = _sub(root, "assessment", ident=ASSESSMENT_ID, title=title)
    _metadata(_sub(test, "qtimetadata"), {"cc_maxattempts": "1"})
    section = _sub(test, "section", ident="root_section")
    for item in items:
        _item(section, item)
    return root


def _item(section: etree._Element, item: ExportItem) -> None:
    node = _sub(section, "item", ident=item.identifier, title=f"{item.lesson_title} ({item.number})")
    _metadata(
        _sub(_sub(node, "itemmetadata"), "qtimetadata"),
        {
            "question_type": "multiple_choice_question",
            "points_possible": "1.0",
            "original_answer_ids": ",".join(ascii_uppercase[: len(item.options)]),
        },
    )
    presentation = _sub(node, "presentation")
    _html(_sub(presentation, "material"), to_html(item.check.stem))
    choices = _sub(_sub(presentation, "response_lid", ident="response1", rcardinality="Single"), "render_choice")
    for letter, option in zip(ascii_uppercase, item.options, strict=False):
        _html(_sub(_sub(choices, "response_label", ident=letter), "material"), to_html(option.text))

    processing = _sub(node, "resprocessing")
    _sub(_sub(processing, "outcomes"), "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    if item.key_idea:
        general = _sub(processing, "respcondition", attrs={"continue": "Yes"})
        _sub(_sub(general, "conditionvar"), "other")
        _sub(general, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    for letter in ascii_uppercase[: len(item.options)]:
        condition = _sub(processing, "respcondition", attrs={"continue": "Yes"})
        _sub(_sub(condition, "conditionvar"), "varequal", respident="response1").text = letter
        _sub(condition, "displayfeedback", feedbacktype="Response", linkrefid=f"{letter}_fb")
    correct = _sub(processing, "respcondition", attrs={"continue": "No"})
    _sub(_sub(correct, "conditionvar"), "varequal", respident="response1").text = ascii_uppercase[item.correct_position]
    _sub(correct, "setvar", action="Set", varname="SCORE").text = "100"

    if item.key_idea:
        _feedback(node, "general_fb", to_html(item.key_idea))
    for letter, option in zip(ascii_uppercase, item.options, strict=False):
        _feedback(node, f"{letter}_fb", to_html(item.feedback(option)))


def _feedback(item: etree._Element, ident: str, html: str) -> None:
    _html(_sub(_sub(_sub(item, "itemfeedback", ident=ident), "flow_mat"), "material"), html)


def _html(material: etree._Element, html: str) -> None:
    _sub(material, "mattext", texttype="text/html").text = html


def _metadata(parent: etree._Element, fields: dict[str, str]) -> None:
    for label, entry in fields.items():
        field = _sub(parent, "qtimetadatafield")
        _sub(field, "fieldlabel").text = label
        _sub(field, "fieldentry").text = entry


def _sub(parent: etree._Element, tag: str, attrs: dict[str, str] | None = None, **more: str) -> etree._Element:
    return etree.SubElement(parent, f"{{{QTI12}}}{tag}", {**(attrs or {}), **more})


def meta(items: list[ExportItem], title: str) -> etree._Element:
    root = etree.Element(f"{{{CANVAS}}}quiz", nsmap={None: CANVAS, "xsi": XSI}, identifier=ASSESSMENT_ID)
    root.set(f"{{{XSI}}}schemaLocation", f"{CANVAS} https://canvas.instructure.com/xsd/cccv1p0.xsd")
    for tag, value in (
        ("title", title), ("description", ""), ("shuffle_answers", "false"), ("scoring_policy", "keep_highest"),
        ("hide_results", ""), ("quiz_type", "assignment"), ("points_possible", f"{float(len(items))}"),
        ("show_correct_answers", "true"), ("allowed_attempts", "1"), ("one_question_at_a_time", "false"),
        ("cant_go_back", "false"), ("available", "false"),
    ):  # fmt: skip
        etree.SubElement(root, f"{{{CANVAS}}}{tag}").text = value
    return root


def manifest(title: str) -> etree._Element:
    root = etree.Element(f"{{{CC}}}manifest", nsmap={None: CC, "xsi": XSI}, identifier=f"{ASSESSMENT_ID}-manifest")
    metadata = etree.SubElement(root, f"{{{CC}}}metadata")
    etree.SubElement(metadata, f"{{{CC}}}schema").text = "IMS Content"
    etree.SubElement(metadata, f"{{{CC}}}schemaversion").text = "1.1.3"
    etree.SubElement(root, f"{{{CC}}}organizations")
    resources = etree.SubElement(root, f"{{{CC}}}resources")
    quiz = etree.SubElement(
        resources,
        f"{{{CC}}}resource",
        identifier=ASSESSMENT_ID,
        type="imsqti_xmlv1p2",
        href=f"{ASSESSMENT_ID}/{ASSESSMENT_ID}.xml",
    )
    etree.SubElement(quiz, f"{{{CC}}}file", href=f"{ASSESSMENT_ID}/{ASSESSMENT_ID}.xml")
    etree.SubElement(quiz, f"{{{CC}}}dependency", identifierref=f"{ASSESSMENT_ID}-meta")
    meta_resource = etree.SubElement(
        resources, f"{{{CC}}}resource", identifier=f"{ASSESSMENT_ID}-meta",
        type="associatedcontent/imscc_xmlv1p1/learning-application-resource", href=f"{ASSESSMENT_ID}/assessment_meta.xml",
    )  # fmt: skip
    etree.SubElement(meta_resource, f"{{{CC}}}file", href=f"{ASSESSMENT_ID}/assessment_meta.xml")
    return root


def _bytes(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
