"""Answer groups for hand grading (issue #42): the grouping itself; a group marked on the page, each
member's own mark through give_mark with the group's key, a member taken out, an answer changed
since flagged; an exam's open question by groups; the commands' JSON; and students never reach the
pages nor see a group or who shares their answer."""

from __future__ import annotations

import json
import re
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from gradebook.errors import BadEdit
from gradebook.marking.groups import Answer, group_answers, normalised, normalised_code
from service.accounts.models import Member
from service.core.access import assignments, book

from .conftest import open_question_drawn
from .served import student

pytestmark = pytest.mark.timeout(120)
HAND = "attention-not-explanation"


def _keys(groups) -> list[list[str]]:
    return [group.members for group in groups]


def test_identical_answers_group_first_then_near_duplicates_and_never_a_sentence_short():
    full = "The strongest pairs are artefacts. Check by removing a word and measuring the output."
    answers = [
        Answer("a", full),
        Answer("b", "the strongest pairs are ARTEFACTS -- check by removing a word, and measuring the output!"),
        Answer("c", "The strongest pairs are artefacts. Check by removing a word and measuring the outptu."),  # a typo
        Answer("d", "The strongest pairs are artefacts."),  # one sentence (one rubric item) short
        Answer("e", "Check by removing a word and measuring the output. The strongest pairs are artefacts."),
        Answer("f", None),  # on a paper sheet: no text here
        Answer("g", None),
        Answer("h", "the strongest pairs are artefacts"),
    ]
    assert normalised(answers[1].text or "") == normalised(full)
    assert _keys(group_answers(answers)) == [["a", "b", "c", "e"], ["d", "h"], ["f"], ["g"]]
    exact = group_answers(answers, threshold=1)
    assert _keys(exact) == [["a", "b"], ["d", "h"], ["c"], ["e"], ["f"], ["g"]]
    assert exact[0].exact and not group_answers(answers)[0].exact
    with pytest.raises(BadEdit, match="between 0 and 1"):
        group_answers(answers, threshold=1.5)


def test_typos_contractions_and_reorderings_group_but_a_changed_meaningful_word_never_does():
    """Issue #49: the near-twins an edit similarity of 0.9 took for typos stay apart."""
    rubric = ["Says the pairs are artefacts.", "Checks by an intervention on the input."]
    base = "The strongest pairs are artefacts. Intervene on the input sentence to measure the output."
    answers = [
        Answer("a", base),
        Answer("b", "The strongest pairs are artefacts. Intervene on the imput sentence to measure the otuput."),
        Answer("c", "Intervene on the input sentence to measure the output. The strongest pairs are artefacts!"),
        Answer("d", "I think the strongest pairs are artefacts. Intervene on the input sentence to measure the output"),
        Answer("e", "The strongest pairs are artefacts. A map of the input sentence to measure the output."),  # a twin
        Answer("f", "It's random: the seeds don't change the pattern, so the pairs are artefacts."),
        Answer("g", "It is random: the seeds do not change the pattern, so the pairs are artefacts."),  # contractions
        Answer("h", "It is random: the seeds do change the pattern, so the pairs are artefacts."),  # "not" dropped
        Answer("i", "It is random: the seeds no change the pattern, so the pairs are artefacts."),  # not against no
        Answer("j", "Heatmaps show correlation, not causation; remove the word and measure the output to find out."),
        Answer("k", "Heatmaps show causation, not correlation; remove the word and measure the output to find out."),
    ]
    assert normalised("It's random: the seeds don't change") == normalised("it is random the seeds do not change")
    groups = group_answers(answers, threshold=0.8, vocabulary=rubric)
    assert _keys(groups) == [["a", "b", "c", "d"], ["f", "g"], ["e"], ["h"], ["i"], ["j"], ["k"]]
    # A word the rubric uses is never a misspelling of another word the class or the rubric knows.
    casual = [
        Answer("x", "The link is causal, so it is a finding."),
        Answer("y", "The link is casual, so it is a finding."),
    ]
    assert _keys(group_answers(casual, threshold=0.8, vocabulary=["A causal link", "casual reading"])) == [["x"], ["y"]]
    # A grader's split: the answer is a group of its own, and no other joins it.
    assert _keys(group_answers(answers[:4], threshold=0.8, apart={"b"})) == [["a", "c", "d"], ["b"]]


def test_a_members_own_words_show_what_differs_from_the_representative():
    from gradebook.marking.groups import differing_words

    pieces = differing_words("The pairs are artefacts; intervene.", "The pairs are artefacts, and a map!")
    assert [piece for piece, differs in pieces if differs] == ["and", "a", "map"]
    assert "".join(piece for piece, _ in pieces) == "The pairs are artefacts, and a map!"  # as typed


def test_code_answers_group_by_their_outcome_and_their_code_without_comments_or_layout():
    code = "def f(x):\n    return x + 1\n"
    answers = [
        Answer("a", code, outcome=("test_f_1",)),
        Answer("b", "def f(x):  # add one\n\n    return x+1\n", outcome=("test_f_1",)),
        Answer("c", code, outcome=("test_f_2", "mistake: off by one")),  # the same code, another outcome
        Answer("d", "def f(x):\n    return x + 2\n", outcome=("test_f_1",)),  # a character apart: never alike
    ]
    assert normalised_code(answers[1].text or "") == normalised_code(code)
    assert _keys(group_answers(answers, threshold=0)) == [["a", "b"], ["c"], ["d"]]


@pytest.fixture
def hand_class():
    """Five students' latest answers to the hand-graded question: three alike, two others."""
    from gradebook.models import Result

    from .course_data import seed

    tag = uuid.uuid4().hex[:8]
    seeded = seed(assignments()[HAND], 5, prefix=f"g{tag}-", accounts=False)
    texts = [
        f"Artefacts {tag}: check by removing a word.",
        f"ARTEFACTS {tag} -- check by removing a word!",
        f"artefacts {tag}: check by removing a wrod",
        f"Meaningful {tag}, the weights are large.",
        f"I do not know {tag}.",
    ]
    from gradebook.grades import latest_submissions

    latest = latest_submissions(book(), HAND)
    ids = {}
    for student_id, text in zip(seeded.students, texts, strict=True):
        ids[student_id] = latest[student_id].id
        Result.objects.filter(submission=latest[student_id], question_id="written").update(
            answers={"written_link": text}
        )
    yield seeded.students, ids, tag
    # Gone after the test: the class's words are counted over every answer (a word in three answers is
    # no misspelling), and this class's "wrod" must not become a word of the next test's class.
    from gradebook.models import Student

    Student.objects.filter(student_id__in=seeded.students).delete()


def _group_of(student_id: str) -> int:
    from gradebook.marking.groups import assignment_groups

    groups = assignment_groups(book(), assignments()[HAND], "written")
    return next(n for n, group in enumerate(groups, start=1) if student_id in group.members)


def _post(client: Client, url: str, **fields):
    client.get(url)  # sets the CSRF cookie, as a browser's visit does
    return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def test_a_group_marked_on_the_page_gives_each_member_its_own_mark(hand_class):
    from gradebook.models import Mark, Result, Submission

    students, ids, tag = hand_class
    ta_user, ta = student(Member.TA)
    number = _group_of(students[0])
    url = f"/staff/groups/{HAND}/written/?group={number}"
    page = ta.get(url).content.decode()
    assert f"Artefacts {tag}: check by removing a word." in page  # the representative
    assert all(f'name="members" value="{ids[s]}"' in page for s in students[:3])
    assert f'value="{ids[students[3]]}"' not in page  # not of this group
    assert not any(s in page for s in students)  # anonymous: no student id unless asked
    assert students[0] in ta.get(url + "&names=1").content.decode()
    assert "Ctrl+Enter" in page and "service/marking.js" in page  # the keys, as on the single-answer page
    assert f"/staff/groups/{HAND}/written/" in ta.get(f"/staff/marking/{HAND}/").content.decode()

    # Taken out before saving: the third; the others marked, each its own record, one group key.
    saved = _post(
        ta,
        url,
        members=[ids[students[0]], ids[students[1]]],
        rubric=["artefacts", "intervention"],
        adjustment="0",
        comment="two of three",
        then="next",
    )
    assert saved.status_code == 302 and f"group={number + 1}" in saved["Location"]
    marks = {
        m.student.student_id: m for m in Mark.objects.filter(student__student_id__in=students).select_related("student")
    }
    first, second = marks[students[0]], marks[students[1]]
    assert first.group and first.group == second.group and first.marked_by == ta_user.username
    assert (first.rubric, first.comment, first.submission_id) == (
        ["artefacts", "intervention"],
        "two of three",
        ids[students[0]],
    )
    assert students[2] not in marks or marks[students[2]].group == ""
    # Reopened, the group shows the mark its marked answers have (the rubric's ticks, the comment),
    # as each answer's own page does: never an empty form beside answers that show their score.
    reopened = ta.get(url).content.decode()
    ticked = re.findall(r'name="rubric" value="([^"]+)" data-key="\d+" checked', reopened)
    assert sorted(ticked) == ["artefacts", "intervention"] and ">two of three</textarea>" in reopened
    assert 'id="given"' in reopened and "Marked already" in reopened
    # Every member taken out: nothing is written, and the grader is told.
    refused = _post(ta, url, members=[], rubric=["artefacts"], adjustment="0", comment="none")
    assert "nothing was marked" in ta.get(refused["Location"]).content.decode()
    assert Mark.objects.filter(group__gt="", student__student_id__in=students).count() == 2

    # A member's answer changes after its group was marked: flagged, as on the single-answer page.
    old = Submission.objects.get(id=ids[students[0]])
    newer = Submission.objects.create(
        student=old.student,
        assignment=old.assignment,
        sha256=uuid.uuid4().hex * 2,
        file="/submissions/newer.ipynb",
        submitted_at=old.submitted_at + timedelta(hours=1),
        graded_at=old.submitted_at + timedelta(hours=1),
    )
    Result.objects.create(
        submission=newer, question_id="written", score=0, max_score=3, status="manual", answers={"written_link": "new"}
    )
    flagged = ta.get(f"/staff/groups/{HAND}/written/?group={_group_of(students[0])}").content.decode()
    assert "answer changed since marked" in flagged
    # A page read before that hand-in: its old answer is left out, never marked unseen, and the grader told.
    again = _post(
        ta,
        f"/staff/groups/{HAND}/written/?group={_group_of(students[1])}",
        members=[ids[students[0]], ids[students[1]]],
        rubric=["baseline"],
        comment="again",
    )
    assert "1 answer handed in again since the page was read was left out" in ta.get(again["Location"]).content.decode()
    assert Mark.objects.get(student__student_id=students[0], question_id="written").comment == "two of three"
    assert Mark.objects.get(student__student_id=students[1], question_id="written").comment == "again"


def test_a_near_twin_shows_its_own_words_and_is_split_out_in_one_post(hand_class):
    students, ids, tag = hand_class
    _, ta = student(Member.TA)
    number = _group_of(students[0])
    url = f"/staff/groups/{HAND}/written/?group={number}"
    page = ta.get(url).content.decode()
    assert "<mark>wrod</mark>" in page  # the typo, highlighted in the member's own words
    assert f'name="split" value="{ids[students[2]]}"' in page and "data-member" in page
    assert "<kbd>x</kbd>" in page  # the one key, said on the page
    split = _post(ta, url, split=str(ids[students[2]]))
    assert split.status_code == 302
    told = ta.get(split["Location"]).content.decode()
    assert (
        re.search(r"answer \d+ split out: it is a group of its own now", told) and "1 answer split out by you" in told
    )
    count = int(re.search(r"Group \d+ of (\d+)", told).group(1))
    pages = [ta.get(f"/staff/groups/{HAND}/written/?group={n}").content.decode() for n in range(1, count + 1)]
    holding = [[ids[s] for s in students[:3] if f'name="members" value="{ids[s]}"' in page] for page in pages]
    assert [ids[students[0]], ids[students[1]]] in holding and [ids[students[2]]] in holding  # a group of its own
    unknown = _post(ta, url, split="999999999")
    assert "nothing was split out" in ta.get(unknown["Location"]).content.decode()
    back = _post(ta, url, rejoin="1")
    assert "1 answer split out put back" in ta.get(back["Location"]).content.decode()
    assert f'name="members" value="{ids[students[2]]}"' in ta.get(url).content.decode()
    # Anonymous visitors and students never split anything.
    assert Client().post(url, {"split": str(ids[students[2]])}).status_code == 302  # to the login page
    _, outsider = student()
    assert outsider.post(url, {"split": str(ids[students[2]])}).status_code in (403, 404)


def test_students_and_anonymous_visitors_are_refused_and_a_student_never_sees_the_group(hand_class):
    from gradebook.models import Mark, Student
    from service.handin.models import Job

    students, ids, tag = hand_class
    _, ta = student(Member.TA)
    url = f"/staff/groups/{HAND}/written/"
    _post(
        ta,
        url + f"?group={_group_of(students[0])}",
        members=[ids[s] for s in students[:3]],
        rubric=["artefacts"],
        comment="ok",
    )
    key = Mark.objects.get(student__student_id=students[0], question_id="written").group
    assert key

    anonymous = Client()
    assert anonymous.get(url)["Location"].startswith("/accounts/login/")
    _, outsider = student()
    for client in (outsider,):
        refused = client.get(url)
        assert refused.status_code in (403, 404) and tag not in refused.content.decode()
        assert client.post(url, {"members": [ids[students[0]]], "score": "3"}).status_code in (403, 404)
    assert anonymous.get("/staff/exam-groups/midterm/q1/")["Location"].startswith("/accounts/login/")

    # The group's first member, signed in: their report names no group, no key, nobody else.
    from django.contrib.auth.models import User

    user = User.objects.create_user(f"u-{students[0]}")
    Member.objects.create(user=user, role=Member.STUDENT, student=Student.objects.get(student_id=students[0]))
    job = Job.objects.create(
        student=Student.objects.get(student_id=students[0]),
        assignment=HAND,
        file="uploads/none",
        original_name="answer.ipynb",
        size=1,
        sha256="0" * 64,
        state=Job.GRADED,
        submission_id=ids[students[0]],
    )
    own = Client()
    own.force_login(user)
    seen = (
        own.get(f"/api/v1/submissions/{job.id}").content.decode() + own.get(f"/submissions/{job.id}/").content.decode()
    )
    assert "artefacts" in seen.lower()  # their mark is there
    assert (
        key not in seen
        and "group"
        not in json.loads(own.get(f"/api/v1/submissions/{job.id}").content)["report"]["questions"][-1]["mark"]
    )
    assert not any(other in seen for other in students[1:])


def test_an_exams_open_question_marked_by_groups_and_its_command(exam, monkeypatch, capsys):
    from course.exams.grade import load_key
    from gradebook.models import ExamMark, Student
    from service.exams import marking as exam_marking
    from service.exams import sessions as exam_sessions
    from service.exams.models import ExamAnswer, ExamAttempt
    from service.marking import answers as hand_grading
    from service.marking import groups as group_marking

    listed = exam_marking.course()  # the course listing the exam (the fixture's), for the pages and the command
    for module_ in (exam_sessions, group_marking, hand_grading):
        monkeypatch.setattr(module_, "course", lambda: listed)
    folder = exam
    key = load_key(folder)
    ExamAttempt.objects.filter(exam="midterm").delete()
    now = timezone.now()
    question, drew = open_question_drawn(key)
    assert len(drew) >= 3
    texts = ["Softmax forces a total of one.", "softmax forces a total of one", "The weights are learned."]
    for (variant, placed), text in zip(drew, texts, strict=False):
        row, _ = Student.objects.get_or_create(
            student_id=variant.student.student_id, defaults={"name": variant.student.name}
        )
        attempt = ExamAttempt.objects.create(
            exam="midterm", student=row, started_at=now, ends_at=now, deadline_reason="time limit", ended_at=now
        )
        ExamAnswer.objects.create(attempt=attempt, position=placed.position, value=text, saved_at=now)
    first, second = drew[0][0].student.student_id, drew[1][0].student.student_id
    groups = group_marking.exam_groups(folder, question)
    assert groups[0].members == [first, second]  # the largest; the paper answers each alone

    ta_user, ta = student(Member.TA)
    url = f"/staff/exam-groups/midterm/{question}/?group=1"
    page = ta.get(url).content.decode()
    assert "Softmax forces a total of one." in page and first not in page  # anonymous
    assert ta.get("/staff/exam-groups/midterm/no-such-question/").status_code == 404
    members = re.findall(r'name="members" value="([^"]+)"', page)  # each answer's id (issue #54), not its place
    assert len(members) == 2 and _post(ta, url, members=members, score="0.5", comment="half").status_code == 302
    marks = {m.student.student_id: m for m in ExamMark.objects.filter(exam=key.title).select_related("student")}
    assert set(marks) == {first, second}
    assert marks[first].group == marks[second].group != "" and marks[first].marked_by == ta_user.username
    reopened = ta.get(url).content.decode()  # the group's mark, shown again
    assert 'name="score" class="form-control form-control-sm d-inline-block w-auto" size="4" value="0.5"' in reopened
    assert ">half</textarea>" in reopened

    # The command: the same groups, as JSON (its site's settings are this process's already).
    from commands import groups as command
    from commands.course import main

    monkeypatch.setattr(command, "open_service", lambda args: None)
    assert main(["exam", "marks", "groups", str(folder), question, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0] == [first, second]


def test_the_assignment_command_prints_the_groups_as_json(tmp_path, capsys):
    from commands.autograder import main
    from gradebook.book import Gradebook
    from gradebook.models import Result, Student, Submission

    from .conftest import ROOT

    spec = assignments()[HAND]
    path = tmp_path / "gradebook.db"
    # s4 wrote nothing and s5 left the released notebook's text: empty, never grouped (the list's button).
    texts = {
        "s1": "Artefacts, check it.",
        "s2": "I do not know.",
        "s3": "artefacts: check it!",
        "s4": None,
        "s5": " YOUR ANSWER HERE\n",
    }
    with Gradebook.open(path) as opened:
        assignment = opened.sync_assignment(spec)
        for n, (student_id, text) in enumerate(texts.items()):
            row = opened.objects(Student).create(student_id=student_id, name=student_id)
            submission = opened.objects(Submission).create(
                student=row,
                assignment=assignment,
                sha256=f"{n:064x}",
                file="x",
                submitted_at=timezone.now(),
                graded_at=timezone.now(),
            )
            answers = {} if text is None else {"written_link": text}
            opened.objects(Result).create(
                submission=submission, question_id="written", score=0, max_score=3, status="manual", answers=answers
            )
    args = ["--course", str(ROOT), "marks", "groups", HAND, "written", "--gradebook", str(path)]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [["s1", "s3"], ["s2"]]
    assert main([*args, "--threshold", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "group 1: 2 answers: s1 s3"
    assert main([*args[:-3], "nowhere", *args[-2:]]) == 2
    assert "no question 'nowhere' graded by hand" in capsys.readouterr().err
