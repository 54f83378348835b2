"""Open edX OLX: a course that Studio imports (a folder, or a .tar.gz when the output path ends so),
one chapter, a sequential per lesson, and a ``multiplechoiceresponse`` problem per check with a
``choicehint`` on every choice and the key idea as the solution; a drawn numeric variant as a
``numericalresponse`` (its tolerance the margin about its answer), a short answer as a
``stringresponse`` (case aside, each accepted text), their feedback as the solution. A pool of a
generated question's variants is a randomized content block (``library_content``, ``max_count`` 1)
holding them, so each learner gets one; the library export holds every variant, for such a block to
draw from. Math stays as \\( \\) for MathJax."""

from __future__ import annotations

import json

from lxml import etree

from ..inline import to_html
from .items import ExportItem
from .package import Package

ORG, COURSE, RUN = "module10", "checks", "checks"
LIBRARY = f"library-v1:{ORG}+{COURSE}"  # the library export's id, which a pool's block names as its source
CHAPTER = "module-checks"  # not the run's name: a url_name may name one block only
# Settings Studio and olxcleaner require of a course; fixed, so the same input gives the same bytes.
# The instructor sets the real dates in Studio after the import.
POLICY = {"start": "2026-01-01T00:00:00Z", "end": "2099-12-31T00:00:00Z", "course_image": "course_image.png"}
COURSE_IMAGE = bytes.fromhex(  # a white 1x1 PNG: the course card's placeholder
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415478da63f8ffff3f0005fe02fe331295140000000049454e44ae426082"
)
GRADING_POLICY = {
    "GRADER": [{"type": "Check", "short_label": "Check", "min_count": 1, "drop_count": 0, "weight": 1.0}],
    "GRADE_CUTOFFS": {"Pass": 0.5},
}


def export(items: list[ExportItem], title: str) -> Package:
    lessons: dict[str, list[ExportItem]] = {}
    for item in items:
        lessons.setdefault(item.lesson_slug, []).append(item)
    files = [
        ("course/course.xml", _xml(etree.Element("course", url_name=RUN, org=ORG, course=COURSE))),
    ]
    course = etree.Element("course", display_name=title)
    etree.SubElement(course, "chapter", url_name=CHAPTER)
    files.append((f"course/course/{RUN}.xml", _xml(course)))
    chapter = etree.Element("chapter", display_name=title)
    for slug, group in lessons.items():
        etree.SubElement(chapter, "sequential", url_name=slug)
        sequential = etree.Element("sequential", display_name=group[0].lesson_title)
        etree.SubElement(sequential, "vertical", url_name=f"{slug}-checks")
        files.append((f"course/sequential/{slug}.xml", _xml(sequential)))
        vertical = etree.Element("vertical", display_name="Check your understanding")
        pools: dict[str, etree._Element] = {}
        for item in group:
            parent = vertical
            if item.pool and item.pool not in pools:
                etree.SubElement(vertical, "library_content", url_name=item.pool)
                pools[item.pool] = pool_block(item)
            if item.pool:
                parent = pools[item.pool]
            etree.SubElement(parent, "problem", url_name=item.identifier)
            files.append((f"course/problem/{item.identifier}.xml", _xml(problem(item))))
        files += [(f"course/library_content/{pool}.xml", _xml(block)) for pool, block in pools.items()]
        files.append((f"course/vertical/{slug}-checks.xml", _xml(vertical)))
    files.append((f"course/chapter/{CHAPTER}.xml", _xml(chapter)))
    files.append((f"course/policies/{RUN}/policy.json", _json({f"course/{RUN}": POLICY})))
    files.append(("course/static/course_image.png", COURSE_IMAGE))
    files.append((f"course/policies/{RUN}/grading_policy.json", _json(GRADING_POLICY)))
    files.sort(key=lambda entry: entry[0])
    return Package(files=files, container="tree")


def export_library(items: list[ExportItem], title: str) -> Package:
    """The same problems as a content library (``library/library.xml``), which Studio imports into a
    library of its own, so that an existing course draws on it without its content being replaced."""
    library = etree.Element("library", {"xblock-family": "xblock.v1"}, display_name=title, org=ORG, library=COURSE)
    files = []
    for item in items:
        etree.SubElement(library, "problem", url_name=item.identifier)
        files.append((f"library/problem/{item.identifier}.xml", _xml(problem(item))))
    files.append(("library/library.xml", _xml(library)))
    files.sort(key=lambda entry: entry[0])
    return Package(files=files, container="tree")


def pool_block(item: ExportItem) -> etree._Element:
    """A randomized content block that gives each learner one of a pool's problems."""
    return etree.Element(
        "library_content",
        display_name=f"{item.lesson_title}: one of a pool",
        max_count="1",
        mode="random",
        source_library_id=LIBRARY,
    )


def problem(item: ExportItem) -> etree._Element:
    root = etree.Element("problem", display_name=f"{item.lesson_title} ({item.number})", max_attempts="1", weight="1")
    if item.entry is not None:
        return _entry(root, item)
    response = etree.SubElement(root, "multiplechoiceresponse")
    _fragment(etree.SubElement(response, "label"), to_html(item.choice.stem))
    group = etree.SubElement(response, "choicegroup", type="MultipleChoice")
    for option in item.options:
        choice = etree.SubElement(group, "choice", correct="true" if option.correct else "false")
        _fragment(choice, to_html(option.text))
        _fragment(etree.SubElement(choice, "choicehint"), to_html(item.feedback(option)))
    if item.key_idea:
        _solution(root, to_html(item.key_idea))
    return root


def _entry(root: etree._Element, item: ExportItem) -> etree._Element:
    entry = item.entry
    assert entry is not None
    if entry.kind == "numeric":
        response = etree.SubElement(root, "numericalresponse", answer=repr(entry.answer))
        _fragment(etree.SubElement(response, "label"), to_html(entry.stem))
        etree.SubElement(response, "responseparam", type="tolerance", default=repr(entry.margin))
        etree.SubElement(response, "formulaequationinput")
    else:
        first, *more = entry.accepted
        response = etree.SubElement(root, "stringresponse", answer=first, type="ci")
        _fragment(etree.SubElement(response, "label"), to_html(entry.stem))
        for text in more:
            etree.SubElement(response, "additional_answer", answer=text)
        etree.SubElement(response, "textline", size="20")
    if entry.feedback:
        _solution(root, to_html(entry.feedback))
    return root


def _solution(root: etree._Element, html: str) -> None:
    solution = etree.SubElement(etree.SubElement(root, "solution"), "div", {"class": "detailed-solution"})
    etree.SubElement(solution, "p").text = "Explanation"
    _fragment(etree.SubElement(solution, "p"), html)


def _fragment(parent: etree._Element, html: str) -> None:
    """Put inline HTML inside ``parent`` as elements, before any children it already has."""
    holder = etree.fromstring(f"<holder>{html}</holder>")
    parent.text = holder.text
    for position, child in enumerate(holder):
        parent.insert(position, child)


def _json(value: dict) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, encoding="UTF-8", pretty_print=True)
