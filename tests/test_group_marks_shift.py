"""A group's mark lands on the answers the grader saw (issue #54): two teaching assistants and a student
handing in (an assignment) or finishing (an online exam) between the first one's reading of a group and
their save. Members are named by their answer's id, never by their place in the list (which the newcomer
shifts); a member another grader marked meanwhile is told with the single page's "replaced" notice, and
an answer changed since the page was read is left out and told."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

from django.utils import timezone

from service.accounts.models import Member

from .conftest import open_question_drawn
from .served import student
from .test_answer_groups import HAND, _group_of, _post, hand_class  # noqa: F401 (a fixture)

MEMBERS = re.compile(r'name="members" value="([^"]+)"')


def _shown(page: str) -> dict[str, str]:
    """The page's members, each label (its place, with names shown: the student's id) to its posted id."""
    found = re.findall(r'name="members" value="([^"]+)" checked> ([^<]+?)</label>', page)
    return {label.strip(): token for token, label in found}


def test_a_group_mark_on_an_assignment_goes_to_the_answers_the_ta_saw(hand_class):  # noqa: F811
    from gradebook.models import Mark, Result, Student, Submission

    students, ids, tag = hand_class
    _, first_ta = student(Member.TA)
    second_user, second_ta = student(Member.TA)
    url = f"/staff/groups/{HAND}/written/?group={_group_of(students[0])}&names=1"
    read = first_ta.get(url).content.decode()
    tokens = MEMBERS.findall(read)
    assert sorted(tokens) == sorted(str(ids[s]) for s in students[:3])
    seen = re.findall(r'name="seen" value="([^"]*)"', read)

    # Meanwhile: a student earlier in the list hands in the same answer, and the second TA marks one member.
    old = Submission.objects.get(id=ids[students[0]])
    earlier = Student.objects.create(student_id=f"g{tag}-0", name="Early Bird")
    newcomer = Submission.objects.create(
        student=earlier,
        assignment=old.assignment,
        sha256=uuid.uuid4().hex * 2,
        file="/submissions/early.ipynb",
        submitted_at=old.submitted_at + timedelta(hours=1),
        graded_at=old.submitted_at + timedelta(hours=1),
    )
    Result.objects.create(
        submission=newcomer,
        question_id="written",
        score=0,
        max_score=3,
        status="manual",
        answers={"written_link": f"Artefacts {tag}: check by removing a word."},
    )
    assert f"g{tag}-0" in second_ta.get(url).content.decode()  # now in the group too
    single = f"/staff/marking/{HAND}/written/{ids[students[1]]}/"
    assert _post(second_ta, single, rubric=["baseline"], adjustment="0", comment="second", seen="").status_code == 302

    saved = _post(first_ta, url, members=tokens, seen=seen, rubric=["artefacts"], adjustment="0", comment="first")
    told = first_ta.get(saved["Location"]).content.decode()
    marks = {
        m.student.student_id: m
        for m in Mark.objects.filter(
            question_id="written", student__student_id__in=[*students, earlier.student_id]
        ).select_related("student")
    }
    assert {s for s, m in marks.items() if m.comment == "first"} == set(students[:3])
    assert earlier.student_id not in marks  # never marked unseen
    assert f"{second_user.username} had marked answer" in told and "your mark replaced theirs" in told


def test_a_group_mark_on_an_exam_goes_to_the_answers_the_ta_saw(exam, monkeypatch):
    from course.exams.grade import load_key
    from gradebook.models import ExamMark, Student
    from service.exams import marking as exam_marking
    from service.exams import sessions as exam_sessions
    from service.exams.models import ExamAnswer, ExamAttempt, OnlineExam
    from service.marking import answers as hand_grading
    from service.marking import groups as group_marking

    listed = exam_marking.course()
    for module_ in (exam_sessions, group_marking, hand_grading):
        monkeypatch.setattr(module_, "course", lambda: listed)
    key = load_key(exam)
    ExamAttempt.objects.filter(exam="midterm").delete()
    now = timezone.now()
    # Taken online: only those who finished are listed, in the roster's order.
    OnlineExam.objects.update_or_create(
        name="midterm",
        defaults={"opens_at": now - timedelta(hours=1), "closes_at": now + timedelta(hours=2), "minutes": 60},
    )
    question, drew = open_question_drawn(key)
    assert len(drew) >= 4
    same = "Softmax forces a total of one."
    texts = [same, same.upper(), same.lower(), "A total of one, because of the softmax", "The weights are learned."]
    attempts = {}
    for (variant, placed), text in zip(drew, texts, strict=False):
        row, _ = Student.objects.get_or_create(
            student_id=variant.student.student_id, defaults={"name": variant.student.name}
        )
        attempts[row.student_id] = attempt = ExamAttempt.objects.create(
            exam="midterm", student=row, started_at=now, ends_at=now + timedelta(hours=1), deadline_reason="time limit"
        )
        ExamAnswer.objects.create(attempt=attempt, position=placed.position, value=text, saved_at=now)
    ids = [variant.student.student_id for variant, _ in drew]
    first, second, third = ids[:3]
    # The first in the list is still writing; the others have finished.
    ExamAttempt.objects.exclude(student__student_id=first).filter(exam="midterm").update(ended_at=now)

    _, first_ta = student(Member.TA)
    _, second_ta = student(Member.TA)
    url = f"/staff/exam-groups/midterm/{question}/?group=1&names=1"
    read = first_ta.get(url).content.decode()
    shown = _shown(read)
    places = {label.split()[0]: int(label.split()[-1].rstrip(")")) for label in shown}
    assert set(places) == {second, third}
    assert not any(student_id in token for token in shown.values() for student_id in ids)  # opaque ids
    seen = re.findall(r'name="seen" value="([^"]*)"', read)

    # Meanwhile: the first student finishes (every place after theirs shifts), the second TA marks the
    # second student's answer on the single page.
    ExamAttempt.objects.filter(pk=attempts[first].pk).update(ended_at=now)
    assert f"{second} (answer {places[second] + 1})" in first_ta.get(url).content.decode()  # shifted
    single = f"/staff/exams/midterm/{question}/{second}/"
    assert _post(second_ta, single, score="1", comment="second", seen="").status_code == 302

    saved = _post(first_ta, url, members=list(shown.values()), seen=seen, score="0.5", comment="first")
    told = first_ta.get(saved["Location"]).content.decode()
    marks = {m.student.student_id: m for m in ExamMark.objects.filter(exam=key.title).select_related("student")}
    assert {s: (m.score, m.comment) for s, m in marks.items()} == {second: (0.5, "first"), third: (0.5, "first")}
    assert first not in marks  # the newcomer, now in the first place, is not marked with what the TA never saw
    assert f"another grader had marked answer {places[second] + 1} at" in told and "your mark replaced theirs" in told

    # An answer changed since the page was read: its old id no longer names it; left out, and told.
    read = first_ta.get(url).content.decode()
    shown, seen = _shown(read), re.findall(r'name="seen" value="([^"]*)"', read)
    position = next(placed.position for variant, placed in drew if variant.student.student_id == first)
    ExamAnswer.objects.filter(attempt=attempts[first], position=position).update(value=same + " Also, it is smooth.")
    saved = _post(first_ta, url, members=list(shown.values()), seen=seen, score="0.75", comment="again")
    told = first_ta.get(saved["Location"]).content.decode()
    assert "1 answer changed since the page was read was left out" in told
    marks = {m.student.student_id: m for m in ExamMark.objects.filter(exam=key.title).select_related("student")}
    assert first not in marks and marks[second].comment == marks[third].comment == "again"
