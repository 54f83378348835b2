"""Published grades: the staff publish an assignment's grades when they have reviewed them, or one
hand-graded question's marks, and may undo it. Each is a new ``Publication`` row with who, when and
why, never an edit: the history shows every one, and what is published now is the latest of each.

What publishing changes is what ``autograder.visibility`` shows the student (the checks shown
``after_published``, the hand marks) and which scores go to the course platform: grade files write
only published scores unless asked (``grades_table(..., unpublished=True)``), and LTI sends a score
as ``FullyGraded`` once published (``Pending`` before). An assignment whose manifest says
``publish = "automatic"`` (the default unless a setting says ``after_published``) is published as
its grades are made: nothing to publish there.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from autograder.assignment import Assignment as AssignmentSpec
from autograder.visibility import Published

from .book import Gradebook, who
from .errors import BadEdit

if TYPE_CHECKING:
    from . import models


class PublicationEntry(BaseModel):
    """One publishing or its undoing, as the history shows it."""

    assignment: str
    question: str | None  # a hand-graded question's alone; None: the assignment's grades
    published: bool
    at: str
    by: str
    reason: str


def published_state(book: Gradebook, spec: AssignmentSpec) -> Published:
    """What is published of the assignment now: everything when its grades publish themselves."""
    if spec.visibility_rules.publish == "automatic":
        return Published(assignment=True)
    return book.run(lambda: _state(book, spec))


def _state(book: Gradebook, spec: AssignmentSpec) -> Published:
    from .models import Publication

    latest: dict[str, bool] = {}
    for question_id, published in (
        book.objects(Publication)
        .filter(assignment__name=spec.name)
        .order_by("id")
        .values_list("question_id", "published")
    ):
        latest[question_id] = published
    return Published(
        assignment=latest.get("", False),
        questions=sorted(question for question, shown in latest.items() if question and shown),
    )


def publish(
    book: Gradebook,
    spec: AssignmentSpec,
    question: str | None = None,
    published: bool = True,
    reason: str = "",
    by: str | None = None,
) -> models.Publication:
    """Publish the assignment's grades (with ``question``, that hand-graded question's marks), or with
    ``published=False`` undo it. BadEdit, with nothing written, for an assignment that publishes by
    itself, a question that is not hand-graded, or a change that changes nothing."""
    from .models import Publication

    rules = spec.visibility_rules
    if rules.publish == "automatic":
        raise BadEdit(
            f'{spec.name}: its grades are published as they are made (publish = "automatic"); set publish = '
            '"by_staff" in its assignment.toml to publish them yourself'
        )
    if question is not None:
        spec.question(question)  # AssignmentError naming the questions when there is no such question
        if question not in rules.manual:
            raise BadEdit(
                f"{spec.name}: question {question!r} is graded by its checks: publish the assignment's grades "
                "(its checks follow their visibility)"
            )

    def record() -> models.Publication:
        # The assignment's row first: its update locks it, so of two publishings at once the second
        # reads the state after the first's commit and is refused, not recorded twice.
        assignment = book.sync_assignment(spec)
        now = _state(book, spec)
        already = now.assignment if question is None else question in now.questions
        if already == published:
            what = f"question {question}'s marks" if question else "its grades"
            raise BadEdit(f"{spec.name}: {what} {'are already' if published else 'are not'} published")
        return book.objects(Publication).create(
            assignment=assignment,
            question_id=question or "",
            published=published,
            at=datetime.now(UTC),
            by=who() if by is None else by,
            reason=" ".join(reason.split())[:2000],
        )

    return book.run(record)


def publications(book: Gradebook, spec: AssignmentSpec) -> list[PublicationEntry]:
    """Every publishing of the assignment and its undoing, earliest first."""
    from .models import Publication

    def read() -> list[PublicationEntry]:
        return [
            PublicationEntry(
                assignment=spec.name,
                question=row.question_id or None,
                published=row.published,
                at=row.at.astimezone(UTC).isoformat(timespec="seconds"),
                by=row.by,
                reason=row.reason,
            )
            for row in book.objects(Publication).filter(assignment__name=spec.name).order_by("id")
        ]

    return book.run(read)
