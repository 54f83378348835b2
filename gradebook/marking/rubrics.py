"""Rubrics as they stand: the manifest's [[questions.rubric]] items with the staff's edits from the
marking page applied (an item's text and points replaced, or an item added). The one place that
says which items a question has now: reports, marks and the marking page all read it here."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import RubricItem
from course.wording import plural
from gradebook.book import Gradebook
from gradebook.errors import BadEdit

MAX_ITEM_TEXT = 500


def current_rubrics(book: Gradebook, spec: AssignmentSpec) -> AssignmentSpec:
    """``spec`` with the rubric edits of its hand-graded questions applied (``spec`` itself when there
    are none)."""
    from gradebook.models import RubricEdit

    if not any(question.manual for question in spec.questions):
        return spec
    edits = list(book.objects(RubricEdit).filter(assignment__name=spec.name))
    if not edits:
        return spec
    changed = spec.model_copy(deep=True)
    for question in changed.questions:
        items = {item.id: item for item in question.rubric}
        for edit in (e for e in edits if e.question_id == question.id):
            items[edit.item_id] = RubricItem(id=edit.item_id, text=edit.text, points=edit.points)
        question.rubric = list(items.values())
    return changed


def edit_item(
    book: Gradebook, spec: AssignmentSpec, question_id: str, item_id: str | None, text: str, points: float, by: str
) -> RubricItem:
    """Set an item's text and points (``item_id`` None: a new item, its id made from its text). Every
    mark that applies it follows its new points."""
    from gradebook.models import RubricEdit

    question = next((q for q in spec.questions if q.id == question_id and q.manual), None)
    if question is None:
        raise BadEdit(f"{spec.name}: no question {question_id!r} graded by hand")
    text = " ".join(text.split())
    if not text or len(text) > MAX_ITEM_TEXT:
        raise BadEdit(f"{spec.name}/{question_id}: an item's text is 1 to {plural(MAX_ITEM_TEXT, 'character')}")
    if not -question.points <= points <= question.points:
        raise BadEdit(f"{spec.name}/{question_id}: an item's points are within ±{question.points:g}")
    known = {item.id for item in current_rubrics(book, spec).questions[spec.questions.index(question)].rubric}
    if item_id is None:
        item_id = _new_id(text, known)
    elif item_id not in known:
        raise BadEdit(f"{spec.name}/{question_id}: no rubric item {item_id!r}")
    book.objects(RubricEdit).update_or_create(
        assignment=book.sync_assignment(spec),
        question_id=question_id,
        item_id=item_id,
        defaults={"text": text, "points": points, "edited_at": datetime.now(UTC), "edited_by": by},
    )
    return RubricItem(id=item_id, text=text, points=points)


def _new_id(text: str, taken: set[str]) -> str:
    base = "_".join(re.findall(r"[a-z0-9]+", text.lower()))[:40].strip("_") or "item"
    base = base if base[0].isalpha() else f"item_{base}"
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}_{number}", number + 1
    return candidate
