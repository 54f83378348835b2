"""IMS QTI 2.1: a content package (zip) with one ``assessmentItem`` per check and an
``assessmentTest`` listing them (a pool of a generated question's variants as a section that selects one). Each item is a ``choiceInteraction`` (``shuffle="false"``, one
choice), scores 1 for the correct choice, shows the chosen option's ``modalFeedback`` and the lesson's
key idea; a drawn numeric variant is a ``textEntryInteraction`` of base type float, right when
``equal`` within its margin (``toleranceMode="absolute"``), a short answer one of base type string,
right when it matches an accepted text (``stringMatch``, case aside); either shows its feedback. Math is MathML (the LaTeX kept as an annotation), so items render without MathJax."""

from __future__ import annotations

from string import ascii_uppercase

from lxml import etree

from ..inline import MATHML_NS, append_runs
from .items import ExportItem
from .package import Package

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
QTI_LOCATION = f"{QTI} http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1.xsd"
CP_LOCATION = f"{CP} http://www.imsglobal.org/xsd/imscp_v1p1.xsd"
TEST_FILE = "assessmentTest.xml"
KEY_IDEA = "KEY_IDEA"
SOLUTION = "SOLUTION"  # a typed answer's feedback, shown once answered


def export(items: list[ExportItem], title: str) -> Package:
    files = [(item_path(item), _bytes(assessment_item(item))) for item in items]
    files.insert(0, (TEST_FILE, _bytes(assessment_test(items, title))))
    files.insert(0, ("imsmanifest.xml", _bytes(manifest(items, title))))
    return Package(files=files, container="zip")


def item_path(item: ExportItem) -> str:
    return f"items/{item.identifier}.xml"


def _q(tag: str) -> str:
    return f"{{{QTI}}}{tag}"


def assessment_item(item: ExportItem) -> etree._Element:
    if item.entry is not None:
        return entry_item(item)
    root = _root(item)
    response = etree.SubElement(
        root, _q("responseDeclaration"), identifier="RESPONSE", cardinality="single", baseType="identifier"
    )
    etree.SubElement(etree.SubElement(response, _q("correctResponse")), _q("value")).text = ascii_uppercase[
        item.correct_position
    ]
    score = etree.SubElement(root, _q("outcomeDeclaration"), identifier="SCORE", cardinality="single", baseType="float")
    etree.SubElement(etree.SubElement(score, _q("defaultValue")), _q("value")).text = "0"
    etree.SubElement(root, _q("outcomeDeclaration"), identifier="FEEDBACK", cardinality="single", baseType="identifier")
    if item.key_idea:
        general = etree.SubElement(
            root, _q("outcomeDeclaration"), identifier="GENERAL", cardinality="single", baseType="identifier"
        )
        etree.SubElement(etree.SubElement(general, _q("defaultValue")), _q("value")).text = KEY_IDEA

    body = etree.SubElement(root, _q("itemBody"))
    interaction = etree.SubElement(
        body, _q("choiceInteraction"), responseIdentifier="RESPONSE", shuffle="false", maxChoices="1"
    )
    append_runs(etree.SubElement(interaction, _q("prompt")), item.choice.stem, QTI, mathml=True)
    for letter, option in zip(ascii_uppercase, item.options, strict=False):
        append_runs(etree.SubElement(interaction, _q("simpleChoice"), identifier=letter), option.text, QTI, mathml=True)

    processing = etree.SubElement(root, _q("responseProcessing"))
    condition = etree.SubElement(processing, _q("responseCondition"))
    when = etree.SubElement(condition, _q("responseIf"))
    match = etree.SubElement(when, _q("match"))
    etree.SubElement(match, _q("variable"), identifier="RESPONSE")
    etree.SubElement(match, _q("correct"), identifier="RESPONSE")
    _set_score(when, "1")
    _set_score(etree.SubElement(condition, _q("responseElse")), "0")
    feedback = etree.SubElement(processing, _q("setOutcomeValue"), identifier="FEEDBACK")
    etree.SubElement(feedback, _q("variable"), identifier="RESPONSE")

    for letter, option in zip(ascii_uppercase, item.options, strict=False):
        modal = etree.SubElement(
            root, _q("modalFeedback"), outcomeIdentifier="FEEDBACK", identifier=letter, showHide="show"
        )
        append_runs(modal, item.feedback(option), QTI, mathml=True)
    if item.key_idea:
        general = etree.SubElement(
            root, _q("modalFeedback"), outcomeIdentifier="GENERAL", identifier=KEY_IDEA, showHide="show"
        )
        append_runs(general, item.key_idea, QTI, mathml=True)
    return root


def entry_item(item: ExportItem) -> etree._Element:
    entry = item.entry
    assert entry is not None
    numeric = entry.kind == "numeric"
    root = _root(item)
    response = etree.SubElement(
        root,
        _q("responseDeclaration"),
        identifier="RESPONSE",
        cardinality="single",
        baseType="float" if numeric else "string",
    )
    correct = etree.SubElement(response, _q("correctResponse"))
    etree.SubElement(correct, _q("value")).text = repr(entry.answer) if numeric else entry.accepted[0]
    score = etree.SubElement(root, _q("outcomeDeclaration"), identifier="SCORE", cardinality="single", baseType="float")
    etree.SubElement(etree.SubElement(score, _q("defaultValue")), _q("value")).text = "0"
    etree.SubElement(root, _q("outcomeDeclaration"), identifier="FEEDBACK", cardinality="single", baseType="identifier")
    body = etree.SubElement(root, _q("itemBody"))
    append_runs(etree.SubElement(body, _q("p")), entry.stem, QTI, mathml=True)
    etree.SubElement(
        etree.SubElement(body, _q("p")),
        _q("textEntryInteraction"),
        responseIdentifier="RESPONSE",
        expectedLength=str(max(8, len(entry.accepted[0]) if not numeric else 12)),
    )
    processing = etree.SubElement(root, _q("responseProcessing"))
    condition = etree.SubElement(processing, _q("responseCondition"))
    when = etree.SubElement(condition, _q("responseIf"))
    if numeric:
        test = etree.SubElement(
            when, _q("equal"), toleranceMode="absolute", tolerance=f"{entry.margin!r} {entry.margin!r}"
        )
        etree.SubElement(test, _q("variable"), identifier="RESPONSE")
        etree.SubElement(test, _q("correct"), identifier="RESPONSE")
    else:
        either = etree.SubElement(when, _q("or"))
        for text in entry.accepted:
            match = etree.SubElement(either, _q("stringMatch"), caseSensitive="false")
            etree.SubElement(match, _q("variable"), identifier="RESPONSE")
            etree.SubElement(match, _q("baseValue"), baseType="string").text = text
    _set_score(when, "1")
    _set_score(etree.SubElement(condition, _q("responseElse")), "0")
    if entry.feedback:
        shown = etree.SubElement(processing, _q("setOutcomeValue"), identifier="FEEDBACK")
        etree.SubElement(shown, _q("baseValue"), baseType="identifier").text = SOLUTION
        modal = etree.SubElement(
            root, _q("modalFeedback"), outcomeIdentifier="FEEDBACK", identifier=SOLUTION, showHide="show"
        )
        append_runs(modal, entry.feedback, QTI, mathml=True)
    return root


def _root(item: ExportItem) -> etree._Element:
    root = etree.Element(
        _q("assessmentItem"),
        nsmap={None: QTI, "xsi": XSI, "m": MATHML_NS},
        identifier=item.identifier,
        title=f"{item.lesson_title} ({item.number})",
        adaptive="false",
        timeDependent="false",
    )
    root.set(f"{{{XSI}}}schemaLocation", QTI_LOCATION)
    return root


def _set_score(parent: etree._Element, value: str) -> None:
    outcome = etree.SubElement(parent, _q("setOutcomeValue"), identifier="SCORE")
    etree.SubElement(outcome, _q("baseValue"), baseType="float").text = value


def assessment_test(items: list[ExportItem], title: str) -> etree._Element:
    root = etree.Element(_q("assessmentTest"), nsmap={None: QTI, "xsi": XSI}, identifier="module-checks", title=title)
    root.set(f"{{{XSI}}}schemaLocation", QTI_LOCATION)
    part = etree.SubElement(
        root, _q("testPart"), identifier="part-1", navigationMode="nonlinear", submissionMode="individual"
    )
    section = etree.SubElement(part, _q("assessmentSection"), identifier="section-1", title=title, visible="true")
    pools: dict[str, etree._Element] = {}
    for item in items:
        pool = item.pool
        if pool and pool not in pools:  # a generated question's variants: the section selects one
            pools[pool] = etree.SubElement(
                section, _q("assessmentSection"), identifier=pool, title=pool, visible="false"
            )
            etree.SubElement(pools[pool], _q("selection"), select="1")
        parent = pools[pool] if pool else section
        etree.SubElement(parent, _q("assessmentItemRef"), identifier=item.identifier, href=item_path(item))
    return root


def manifest(items: list[ExportItem], title: str) -> etree._Element:
    root = etree.Element(f"{{{CP}}}manifest", nsmap={None: CP, "xsi": XSI}, identifier="MANIFEST-module-checks")
    root.set(f"{{{XSI}}}schemaLocation", CP_LOCATION)
    metadata = etree.SubElement(root, f"{{{CP}}}metadata")
    etree.SubElement(metadata, f"{{{CP}}}schema").text = "QTIv2.1 Package"
    etree.SubElement(metadata, f"{{{CP}}}schemaversion").text = "1.0.0"
    etree.SubElement(root, f"{{{CP}}}organizations")
    resources = etree.SubElement(root, f"{{{CP}}}resources")
    test = etree.SubElement(
        resources, f"{{{CP}}}resource", identifier="RES-test", type="imsqti_test_xmlv2p1", href=TEST_FILE
    )
    etree.SubElement(test, f"{{{CP}}}file", href=TEST_FILE)
    for item in items:
        etree.SubElement(test, f"{{{CP}}}dependency", identifierref=f"RES-{item.identifier}")
    for item in items:
        resource = etree.SubElement(
            resources,
            f"{{{CP}}}resource",
            identifier=f"RES-{item.identifier}",
            type="imsqti_item_xmlv2p1",
            href=item_path(item),
        )
        etree.SubElement(resource, f"{{{CP}}}file", href=item_path(item))
    return root


def _bytes(root: etree._Element) -> bytes:
    # Not pretty-printed: indentation inside prompts and choices would become part of their text.
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")
