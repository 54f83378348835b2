"""Check questions for course platforms. One module per format, each ``export(items, title) ->
Package``, registered in ``EXPORTERS``; ``export_checks`` is what ``course export checks`` calls."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel

from ..catalog import load_catalog
from ..formats import EXPORT_FORMATS
from ..wording import plural
from . import calculated
from .items import ExportItem, items_of
from .package import ExportError, Package, write_package

EXPORTERS: dict[str, Callable[[list[ExportItem], str], Package]] = {
    name: getattr(importlib.import_module(f".{module.split(':')[0]}", __name__), (module.split(":") + ["export"])[1])
    for name, module in EXPORT_FORMATS.items()
}
DEFAULT_TITLE = "Module 10: Sequences and attention, check questions"
# The formats that compute a numeric generated question themselves, where its formula fits (Moodle's
# calculated questions; course.exports.calculated).
CALCULATED_FORMATS = ("moodle",)


class ExportResult(BaseModel):
    path: Path
    checks: int
    lessons: int
    pools: int = 0  # generated questions written as pools of variants


def export_checks(
    paths: Iterable[Path | str], fmt: str, out: Path, title: str = DEFAULT_TITLE, variants: int = 0
) -> ExportResult:
    """Export every check of the lessons under ``paths`` in ``fmt`` to ``out``; with ``variants``,
    in every format (a Canvas question group, a QTI 2.1 section selecting one, a Moodle question bank
    category, an Open edX randomized content block, a pool named in the JSON export),
    each generated question too, as a pool of that many drawn variants of which the platform gives
    each student one (Moodle: a numeric one whose formula it can compute as a calculated question
    with that many drawn sets of values). Refuses, writing nothing, when a lesson file has an error (a
    check with no correct option, two, an empty option...)."""
    if fmt not in EXPORTERS:
        raise ExportError(f"unknown format {fmt!r}; choose one of {', '.join(EXPORTERS)}")
    catalog = load_catalog(paths)
    if catalog.errors:
        first = catalog.errors[0]
        more = f" (and {plural(len(catalog.errors) - 1, 'more problem')})" if len(catalog.errors) > 1 else ""
        raise ExportError(f"nothing exported: {first}{more}")
    lessons = [
        lesson
        for lesson in catalog.lessons
        if lesson.checks or any(variants or question.fixed for question in lesson.generated)
    ]
    items = items_of(lessons, variants, fits=calculated.fits if fmt in CALCULATED_FORMATS else None)
    if not items:
        raise ExportError("nothing exported: the lessons hold no check questions")
    path = write_package(EXPORTERS[fmt](items, title), out)
    pools = len({item.pool for item in items if item.pool})
    return ExportResult(path=path, checks=len(items), lessons=len(lessons), pools=pools)


__all__ = ["EXPORTERS", "ExportError", "ExportItem", "ExportResult", "export_checks", "items_of"]
