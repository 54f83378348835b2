"""What the hand-grading pages share (service/marking/views.py, exam_marking.py, group_marking.py): the
question or exam a page's address names, which answers still wait for a mark (an empty one never:
gradebook.marking.empty_answers says which are empty), the queue's neighbours past the empty answers, what
a marking list says of them, and an exam's open answers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from django.http import Http404

from autograder.assignment import Assignment as AssignmentSpec
from autograder.assignment import Question
from autograder.errors import ReleaseError
from course.exams.csvfiles import ExamError
from course.wording import plural
from gradebook.exams import OpenAnswer, open_answers
from gradebook.grades import counted_rows, current_grades
from gradebook.marking.empty_answers import empty_answers, is_empty_exam_answer, starter_texts
from service.core.access import book, course, state
from service.exams.models import OnlineExam
from service.exams.sessions import counted_attempts, online_texts
from service.handin.releases import released_notebook

logger = logging.getLogger(__name__)
Key = TypeVar("Key", int, str)  # an answer in a queue: a submission's id, or an exam taker's student id


def manual_question(spec: AssignmentSpec, question_id: str) -> Question:
    """The assignment's question graded by hand that the address names, or 404."""
    question = next((q for q in spec.questions if q.manual and q.id == question_id), None)
    if question is None:
        raise Http404("no such question graded by hand")
    return question


def starters(spec: AssignmentSpec) -> dict[str, frozenset[str]]:
    """Per hand-graded question, the starter texts of its answer cells in the notebook students
    download (service/handin/releases.py makes it once per version of the source)."""
    try:
        return starter_texts(spec, released_notebook(spec, state()))
    except ReleaseError:  # the download fails the same way; here only blank answers count as empty
        logger.exception("%s: the released notebook could not be made to read its starter texts", spec.name)
        return {question.id: frozenset() for question in spec.questions if question.manual}


@dataclass
class ToMark:
    """One hand-graded question's latest answers (submission ids) by where they stand."""

    waiting: set[int]  # answers to read: not marked, or changed since they were
    empty: set[int]  # empty answers, marked or not: out of the one-by-one queue
    empty_waiting: set[int]  # the empty answers not marked yet (or changed since): the button's


def to_mark(spec: AssignmentSpec, questions: list[Question]) -> dict[str, ToMark]:
    """Per hand-graded question, its answers by where they stand: from the whole course's grades
    at once (a fixed number of queries, whatever the course's size)."""
    students = dict(counted_rows(book(), spec).select_related(None).values_list("student__student_id", "id"))
    unmarked: dict[str, set[int]] = {question.id: set() for question in questions}
    for grade in current_grades(book(), spec, detail=False):
        for result in grade.report.questions if grade.report else []:
            if result.id in unmarked and (result.mark is None or result.mark.answer_changed):
                unmarked[result.id].add(students[grade.student_id])
    texts = starters(spec)
    empty = empty_answers(book(), spec, {q.id: texts.get(q.id, frozenset()) for q in questions})
    return {q.id: ToMark(unmarked[q.id] - empty[q.id], empty[q.id], unmarked[q.id] & empty[q.id]) for q in questions}


def neighbours(order: list[Key], empty: Collection[Key], current: Key) -> tuple[Key, Key]:
    """The answers before and after ``current`` in the queue (round it, empty answers left out)."""
    at = order.index(current)
    others = [key for key in order[at + 1 :] + order[:at] if key not in empty]
    return (others[-1], others[0]) if others else (current, current)


def empty_listing(
    order: list[Key], empty: Collection[Key], waiting: Collection[Key], action: str, link: Callable[[Key], str]
) -> dict[str, object]:
    """What a marking list says of one question's empty answers (``empty``, of ``order``): how many,
    each named by its place (anonymous) with its page (``link``) and whether marked; the ones the
    button gives 0 (``waiting``: not marked yet), the button's words and where it posts (``action``).
    service/marking/empty_answers.html shows it, on the assignments' and the exams' lists alike."""
    listed = [(n, key) for n, key in enumerate(order, start=1) if key in empty]
    chosen = [key for key in order if key in waiting]
    return {
        "empty": [
            {
                "id": key,
                "url": link(key),
                "label": f"answer {n}",
                "status": "not marked" if key in waiting else "marked",
            }
            for n, key in listed
        ],
        "empty_said": f"{plural(len(listed), 'answer')} {'is' if len(listed) == 1 else 'are'} empty",
        "empty_waiting": chosen,
        "empty_action": action,
        "button": f"Give the {plural(len(chosen), 'empty answer')} 0",
    }


def exam_or_404(name: str) -> Path:
    """The folder of the exam the course lists under ``name``, or 404."""
    folder = course().exam_folders.get(name)
    if folder is None:
        raise Http404("no such exam")
    return folder


def exam_answers(name: str, folder: Path, question: str | None = None) -> list[OpenAnswer]:
    """The exam's open answers to mark (of ``question`` alone, when given), or 404 for an exam whose
    files cannot be read."""
    try:
        answers = taken(name, open_answers(book(), folder))
    except ExamError as exc:
        raise Http404(str(exc)) from None
    return [answer for answer in answers if question in (None, answer.question)]


def taken(name: str, answers: list[OpenAnswer]) -> list[OpenAnswer]:
    """An exam taken online: the answers of the students whose attempt counts, never a roster's
    student who did not take it (no paper sheet of theirs to mark either)."""
    if not OnlineExam.objects.filter(name=name).exists():
        return answers
    took = {attempt.student.student_id for attempt in counted_attempts(name)}
    return [answer for answer in answers if answer.student_id in took]


@dataclass
class ExamQuestion:
    """One open question of an exam: its answers in the roster's order, each one's text as typed
    online (None: on a paper sheet), and which are empty (their student ids)."""

    answers: list[OpenAnswer] = field(default_factory=list)
    texts: dict[str, str | None] = field(default_factory=dict)
    empty: set[str] = field(default_factory=set)

    @property
    def order(self) -> list[str]:
        return [answer.student_id for answer in self.answers]

    @property
    def queue(self) -> list[OpenAnswer]:
        """The answers offered one by one: every one but the empty ones."""
        return [answer for answer in self.answers if answer.student_id not in self.empty]

    @property
    def waiting(self) -> list[OpenAnswer]:
        """The queue's answers not marked yet (the "still to mark")."""
        return [answer for answer in self.queue if answer.score is None]

    @property
    def empty_waiting(self) -> set[str]:
        """The empty answers not marked yet: the marking list's button's."""
        return {
            answer.student_id for answer in self.answers if answer.student_id in self.empty and answer.score is None
        }


def exam_questions(name: str, answers: list[OpenAnswer]) -> dict[str, ExamQuestion]:
    """The exam's open ``answers`` by question, in the order they come, each question's empty ones
    found by gradebook.marking.empty_answers' rule from the typed texts (read at once: two queries)."""
    texts = online_texts(name, answers)
    questions: dict[str, ExamQuestion] = {}
    for answer in answers:
        standing = questions.setdefault(answer.question, ExamQuestion())
        typed = texts[(answer.student_id, answer.question)]
        standing.answers.append(answer)
        standing.texts[answer.student_id] = typed
        if is_empty_exam_answer(typed):
            standing.empty.add(answer.student_id)
    return questions
