"""Open edX OLX: a course that Studio imports (a folder, or a .tar.gz when the output path ends so),
one chapter, a sequential per lesson, and a ``multiplechoiceresponse`` problem per check with a
``choicehint`` on every choice and the key idea as the solution. Math stays as \\( \\) for MathJax."""

from __future__ import annotations

from lxml import etree

from .items import ExportItem, to_html
from .package import Package

ORG, COURSE, RUN = "module10", "checks", "checks"


def export(items: list[ExportItem], title: str) -> Package:
    lessons: dict[str, list[ExportItem]] = {}
    for item in items:
        lessons.setdefault(item.lesson_slug, []).append(item)
    files = [
        ("course/course.xml", _xml(etree.Element("course", url_name=RUN, org=ORG, course=COURSE))),
    ]
    course = etree.Element("course", display_name=title)
    etree.SubElement(course, "chapter", url_name="checks")
    files.append((f"course/course/{RUN}.xml", _xml(course)))
    chapter = etree.Element("chapter", display_name=title)
    for slug, group in lessons.items():
        etree.SubElement(chapter, "sequential", url_name=slug)
        sequential = etree.Element("sequential", display_name=group[0].lesson_title)
        etree.SubElement(sequential, "vertical", url_name=f"{slug}-checks")
        files.append((f"course/sequential/{slug}.xml", _xml(sequential)))
        vertical = etree.Element("vertical", display_name="Check your understanding")
        for item in group:
            etree.SubElement(vertical, "problem", url_name=item.identifier)
            files.append((f"course/problem/{item.identifier}.xml", _xml(problem(item))))
        files.append((f"course/vertical/{slug}-checks.xml", _xml(vertical)))
    files.append(("course/chapter/checks.xml", _xml(chapter)))
    files.sort(key=lambda entry: entry[0])
    return Package(files=files, container="tree")


def problem(item: ExportItem) -> etree._Element:
    root = etree.Element("problem", display_name=f"{item.lesson_title} ({item.number})", max_attempts="1", weight="1")
    response = etree.SubElement(root, "multiplechoiceresponse")
    _fragment(etree.SubElement(response, "label"), to_html(item.check.stem))
    group = etree.SubElement(response, "choicegroup", type="MultipleChoice")
    for option in item.options:
        choice = etree.SubElement(group, "choice", correct="true" if option.correct else "false")
        _fragment(choice, to_html(option.text))
        _fragment(etree.SubElement(choice, "choicehint"), to_html(item.feedback(option)))
    if item.key_idea:
        solution = etree.SubElement(etree.SubElement(root, "solution"), "div", {"class": "detailed-solution"})
        etree.SubElement(solution, "p").text = "Explanation"
        _fragment(etree.SubElement(solution, "p"), to_html(item.key_idea))
    return root


def _fragment(parent: etree._Element, html: str) -> None:
    """Put inline HTML inside ``parent`` as elements, before any children it already has."""
    holder = etree.fromstring(f"<holder>{html}</holder>")
    parent.text = holder.text
    for position, child in enumerate(holder):
        parent.insert(position, child)


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, encoding="UTF-8", pretty_print=True)
