"""QTI 1.2 as Canvas imports it: a zip with ``imsmanifest.xml``, the assessment
(``<id>/<id>.xml``, single-answer ``multiple_choice_question`` items with per-answer feedback, a drawn
numeric variant as a ``numerical_question`` (its answer, or within its margin), a short answer as a
``short_answer_question``, their feedback as general feedback; a pool
of a generated question's variants as a question group, a section that picks one) and Canvas's
``assessment_meta.xml``. Text is HTML; math stays as \\( \\) for MathJax."""

from __future__ import annotations

import hashlib
from decimal import Decimal

from lxml import etree

from ..inline import to_html
from .items import ExportItem
from .package import Package

QTI12 = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CANVAS = "http://canvas.instructure.com/xsd/cccv1p0"
CC = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
IMSMD = "http://www.imsglobal.org/xsd/imsmd_v1p2"
LOM = "http://ltsc.ieee.org/xsd/imsccv1p1/LOM/resource"
MANIFEST_SCHEMAS = (
    f"{CC} http://www.imsglobal.org/xsd/imscp_v1p1.xsd "
    f"{LOM} http://www.imsglobal.org/profile/cc/ccv1p1/LOM/ccv1p1_lomresource_v1p0.xsd "
    f"{IMSMD} http://www.imsglobal.org/xsd/imsmd_v1p2p2.xsd"
)
FIRST_ANSWER_ID = 1000


def identifier(*parts: str) -> str:
    """A Canvas-style identifier ("g" and 32 hex digits) derived from content: stable for the same
    input, different for different exports, so two exports imported into one course never collide."""
    return "g" + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def export(items: list[ExportItem], title: str) -> Package:
    quiz = identifier(title, *(f"{item.identifier}\x1e{to_html(item.stem)}" for item in items))
    return Package(
        files=[
            ("imsmanifest.xml", _bytes(manifest(title, quiz))),
            (f"{quiz}/{quiz}.xml", _bytes(assessment(items, title, quiz))),
            (f"{quiz}/assessment_meta.xml", _bytes(meta(items, title, quiz))),
        ],
        container="zip",
    )


def assessment(items: list[ExportItem], title: str, quiz: str) -> etree._Element:
    root = etree.Element(f"{{{QTI12}}}questestinterop", nsmap={None: QTI12, "xsi": XSI})
    root.set(f"{{{XSI}}}schemaLocation", f"{QTI12} http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd")
    test = _sub(root, "assessment", ident=quiz, title=title)
    _metadata(_sub(test, "qtimetadata"), {"cc_maxattempts": "1"})
    section = _sub(test, "section", ident="root_section")
    groups: dict[str, etree._Element] = {}
    next_answer = FIRST_ANSWER_ID
    for item in items:
        pool = item.pool
        if pool and pool not in groups:
            groups[pool] = _group(section, pool)
        parent = groups[pool] if pool else section
        if item.entry is not None:
            _entry(parent, item, quiz, str(next_answer))
            next_answer += 1
            continue
        _item(parent, item, quiz, [str(next_answer + n) for n in range(len(item.options))])
        next_answer += len(item.options)
    return root


def _group(section: etree._Element, pool: str) -> etree._Element:
    """A Canvas question group: a section that picks one of its items for each student (each item worth
    its one point; Canvas's own ``points_per_item`` extension is left out, as the QTI DTD knows no such
    element)."""
    group = _sub(section, "section", ident=pool, title=pool)
    _sub(_sub(_sub(group, "selection_ordering"), "selection"), "selection_number").text = "1"
    return group


def questions(items: list[ExportItem]) -> int:
    """How many questions a student answers: each check, and each pool once."""
    return len([item for item in items if not item.pool]) + len({item.pool for item in items} - {None})


def _head(section: etree._Element, item: ExportItem, quiz: str, kind: str, answers: list[str]) -> etree._Element:
    node = _sub(section, "item", ident=item.identifier, title=f"{item.lesson_title} ({item.number})")
    _metadata(
        _sub(_sub(node, "itemmetadata"), "qtimetadata"),
        {
            "question_type": kind,
            "points_possible": "1",
            "original_answer_ids": ",".join(answers),
            "assessment_question_identifierref": identifier(quiz, item.identifier),
        },
    )
    return node


def _entry(section: etree._Element, item: ExportItem, quiz: str, answer: str) -> None:
    """A typed answer, as Canvas writes one: a numerical question right at its answer or within its
    margin (``vargte`` and ``varlte``), a short answer right at any accepted text, case aside."""
    entry = item.entry
    assert entry is not None
    numeric = entry.kind == "numeric"
    node = _head(section, item, quiz, "numerical_question" if numeric else "short_answer_question", [answer])
    presentation = _sub(node, "presentation")
    _html(_sub(presentation, "material"), to_html(entry.stem))
    field = _sub(_sub(presentation, "response_str", ident="response1", rcardinality="Single"), "render_fib")
    if numeric:
        field.set("fibtype", "Decimal")
    _sub(field, "response_label", ident=answer)
    processing = _processing(node, general=bool(entry.feedback))
    right = _sub(processing, "respcondition", attrs={"continue": "No"})
    either = _sub(_sub(right, "conditionvar"), "or")
    if numeric:
        assert isinstance(entry.answer, float)
        _sub(either, "varequal", respident="response1").text = repr(entry.answer)
        within = _sub(either, "and")
        low, high = bounds(entry.answer, entry.margin)
        _sub(within, "vargte", respident="response1").text = low
        _sub(within, "varlte", respident="response1").text = high
    else:
        for text in entry.accepted:
            _sub(either, "varequal", respident="response1", case="No").text = text
    _sub(right, "setvar", action="Set", varname="SCORE").text = "100"
    if entry.feedback:
        _feedback(node, "general_fb", to_html(entry.feedback))


def _processing(node: etree._Element, general: bool) -> etree._Element:
    """The item's response processing: the SCORE it sets, and its general feedback shown whatever the answer."""
    processing = _sub(node, "resprocessing")
    _sub(_sub(processing, "outcomes"), "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    if general:
        shown = _sub(processing, "respcondition", attrs={"continue": "Yes"})
        _sub(_sub(shown, "conditionvar"), "other")
        _sub(shown, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    return processing


def bounds(answer: float, margin: float) -> tuple[str, str]:
    """The answer less and plus its margin, in decimal (exact: the reader's difference is the margin)."""
    exact, spread = Decimal(repr(answer)), Decimal(repr(margin))
    return str(exact - spread), str(exact + spread)


def _item(section: etree._Element, item: ExportItem, quiz: str, answers: list[str]) -> None:
    """One question; its answers' ids are numbers unique across the quiz, as Canvas's own are."""
    node = _head(section, item, quiz, "multiple_choice_question", answers)
    presentation = _sub(node, "presentation")
    _html(_sub(presentation, "material"), to_html(item.choice.stem))
    choices = _sub(_sub(presentation, "response_lid", ident="response1", rcardinality="Single"), "render_choice")
    for answer, option in zip(answers, item.options, strict=True):
        _html(_sub(_sub(choices, "response_label", ident=answer), "material"), to_html(option.text))

    processing = _processing(node, general=bool(item.key_idea))
    for answer in answers:
        condition = _sub(processing, "respcondition", attrs={"continue": "Yes"})
        _sub(_sub(condition, "conditionvar"), "varequal", respident="response1").text = answer
        _sub(condition, "displayfeedback", feedbacktype="Response", linkrefid=f"{answer}_fb")
    correct = _sub(processing, "respcondition", attrs={"continue": "No"})
    _sub(_sub(correct, "conditionvar"), "varequal", respident="response1").text = answers[item.correct_position]
    _sub(correct, "setvar", action="Set", varname="SCORE").text = "100"

    if item.key_idea:
        _feedback(node, "general_fb", to_html(item.key_idea))
    for answer, option in zip(answers, item.options, strict=True):
        _feedback(node, f"{answer}_fb", to_html(item.feedback(option)))


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


def meta(items: list[ExportItem], title: str, quiz: str) -> etree._Element:
    """Canvas's quiz settings, with the ``assignment`` block its own exports carry (points, grading
    type, an unpublished workflow state), so the quiz arrives as a graded assignment."""
    root = etree.Element(f"{{{CANVAS}}}quiz", nsmap={None: CANVAS, "xsi": XSI}, identifier=quiz)
    root.set(f"{{{XSI}}}schemaLocation", f"{CANVAS} https://canvas.instructure.com/xsd/cccv1p0.xsd")
    points = f"{float(questions(items))}"
    _fields(
        root,
        (
            ("title", title),
            ("description", ""),
            ("shuffle_answers", "false"),
            ("scoring_policy", "keep_highest"),
            ("hide_results", ""),
            ("quiz_type", "assignment"),
            ("points_possible", points),
            ("show_correct_answers", "true"),
            ("allowed_attempts", "1"),
            ("one_question_at_a_time", "false"),
            ("cant_go_back", "false"),
            ("available", "false"),
        ),
    )
    assignment = etree.SubElement(root, f"{{{CANVAS}}}assignment", identifier=identifier(quiz, "assignment"))
    _fields(
        assignment,
        (
            ("title", title),
            ("due_at", None),
            ("lock_at", None),
            ("unlock_at", None),
            ("module_locked", "false"),
            ("workflow_state", "unpublished"),
            ("quiz_identifierref", quiz),
            ("points_possible", points),
            ("grading_type", "points"),
            ("submission_types", "online_quiz"),
            ("position", "1"),
        ),
    )
    _fields(root, (("assignment_group_identifierref", identifier(quiz, "assignment-group")),))
    return root


def _fields(parent: etree._Element, fields) -> None:
    for tag, value in fields:
        etree.SubElement(parent, f"{{{CANVAS}}}{tag}").text = value


def manifest(title: str, quiz: str) -> etree._Element:
    root = etree.Element(
        f"{{{CC}}}manifest",
        nsmap={None: CC, "lom": LOM, "imsmd": IMSMD, "xsi": XSI},
        identifier=identifier(quiz, "manifest"),
    )
    root.set(f"{{{XSI}}}schemaLocation", MANIFEST_SCHEMAS)
    metadata = etree.SubElement(root, f"{{{CC}}}metadata")
    etree.SubElement(metadata, f"{{{CC}}}schema").text = "IMS Content"
    etree.SubElement(metadata, f"{{{CC}}}schemaversion").text = "1.1.3"
    lom_title = etree.SubElement(
        etree.SubElement(etree.SubElement(metadata, f"{{{IMSMD}}}lom"), f"{{{IMSMD}}}general"), f"{{{IMSMD}}}title"
    )
    etree.SubElement(lom_title, f"{{{IMSMD}}}string").text = title
    etree.SubElement(root, f"{{{CC}}}organizations")
    resources = etree.SubElement(root, f"{{{CC}}}resources")
    quiz_resource = etree.SubElement(resources, f"{{{CC}}}resource", identifier=quiz, type="imsqti_xmlv1p2")
    etree.SubElement(quiz_resource, f"{{{CC}}}file", href=f"{quiz}/{quiz}.xml")
    dependency = identifier(quiz, "meta")
    etree.SubElement(quiz_resource, f"{{{CC}}}dependency", identifierref=dependency)
    meta_resource = etree.SubElement(
        resources,
        f"{{{CC}}}resource",
        identifier=dependency,
        type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
        href=f"{quiz}/assessment_meta.xml",
    )
    etree.SubElement(meta_resource, f"{{{CC}}}file", href=f"{quiz}/assessment_meta.xml")
    return root


def _bytes(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
