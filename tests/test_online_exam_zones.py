"""An exam built from a definition's zones (`course exam build --definition`) taken online: each
student gets the printed exam's own draw (N of each zone's M questions, their own variant of a
generated question), the same every time; the staff's trial is drawn by the same rule for their
account; the attempt is graded by the paper path (points per zone), and the grading's groups.csv
(statistics per generated question and per alternatives) is the staff's alone. Through the real pages
with Django's test client."""

from __future__ import annotations

import csv
import html
import io
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from course.catalog import load_catalog
from course.exams.build import build_exam
from course.exams.grade import load_key
from course.exams.pages import inline_html
from course.exams.variants import Student as ExamStudent
from course.exams.zones import Pool, zoned_variant
from course.loaders.markdown import parse_inline
from gradebook.models import ExamExtension, ExamResult
from service.accounts.models import Member
from service.core.access import course
from service.exams import sessions as exam_sessions
from service.exams.models import ExamAttempt, OnlineExam

from .conftest import LESSON_DATA
from .test_exam_zones import DEFINITION, GENERATED
from .test_online_exams import account, send, wrong_letter

pytestmark = pytest.mark.timeout(180)

NAME = "zoned"


@pytest.fixture
def zoned(tmp_path, monkeypatch):
    """The zones' exam of tests/test_exam_zones.py for twelve new students, listed by the course as
    "zoned" and open now, its results shown at the end of an attempt."""
    tag = uuid.uuid4().hex[:8]
    ids = [f"z{tag}{n:02}" for n in range(12)]
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\n" + "".join(f"{i},Student {i},\n" for i in ids), encoding="utf-8")
    definition = tmp_path / "exam.toml"
    definition.write_text(DEFINITION.replace("Zoned exam", f"Zoned {tag}"), encoding="utf-8")
    folder = tmp_path / "exams" / NAME
    folder.parent.mkdir()
    build_exam(roster, folder, seed=11, lessons=[LESSON_DATA], definition=definition)
    module = course().modules[0].model_copy(update={"exams": [str(folder)]})
    listed = course().model_copy(update={"modules": [module]})
    monkeypatch.setattr(exam_sessions, "course", lambda: listed)
    for table in (OnlineExam, ExamAttempt, ExamExtension):
        (table.objects.filter(name=NAME) if table is OnlineExam else table.objects.filter(exam=NAME)).delete()
    now = timezone.now()
    OnlineExam.objects.create(
        name=NAME,
        opens_at=now - timedelta(minutes=5),
        closes_at=now + timedelta(hours=2),
        minutes=30,
        results=OnlineExam.AT_SUBMIT,
        trial=True,
    )
    yield {"folder": folder, "key": load_key(folder), "ids": ids}
    OnlineExam.objects.filter(name=NAME).delete()
    ExamAttempt.objects.filter(exam=NAME).delete()


def _stems(key, variant) -> list[str]:
    """The variant's questions as the page shows them: number and stem, math as MathML."""
    return [f"{q.position}. {inline_html(parse_inline(key.questions[q.question].stem))}" for q in variant.questions]


def _page(client: Client) -> str:
    return client.get(f"/exams/{NAME}/").content.decode()


def _shown(page: str, stems: list[str]) -> bool:
    """Whether the page shows these questions, in this order."""
    return all(stem in page for stem in stems) and [page.index(s) for s in stems] == sorted(
        page.index(s) for s in stems
    )


def test_each_student_takes_their_own_draw_from_the_zones_the_same_every_time(zoned):
    key, ids = zoned["key"], zoned["ids"]
    variants = {v.student.student_id: v for v in key.variants}
    # Two students whose draws differ (the printed exams'), and one who takes the exam twice over.
    first = ids[0]
    other = next(i for i in ids[1:] if _stems(key, variants[i]) != _stems(key, variants[first]))
    pages = {}
    for student_id in (first, other):
        client = account(student_id)
        started = send(client, f"/exams/{NAME}/")  # the start's answer is the exam's page
        assert started.status_code == 200 and 'id="clock"' in started.content.decode()
        pages[student_id] = _page(client)
        assert _shown(pages[student_id], _stems(key, variants[student_id]))
        again = Client()  # another device of the same student: the same draw
        again.force_login(User.objects.get(username=student_id))
        assert _shown(again.get(f"/exams/{NAME}/").content.decode(), _stems(key, variants[student_id]))
    assert not _shown(pages[other], _stems(key, variants[first]))
    # Each zone draws N of its M: two of the first zone's three entries, three of the second's five,
    # each part under its title and its points, as the printed exam says it.
    for student_id, page in pages.items():
        text = html.unescape(page)
        assert text.count("Part 1: Scaling (2 points each)") == 1 and text.count("Part 2: The rest (1 point each)") == 1
        zones = [q.zone for q in variants[student_id].questions]
        assert zones == [1, 1, 2, 2, 2]
        assert text.index("Part 1: Scaling") < text.index("1. ") < text.index("Part 2: The rest") < text.index("3. ")
    # The draw is the paper rule's: the definition's zones over the lessons, for the student and the seed.
    catalog = load_catalog([LESSON_DATA])
    pool = Pool(catalog.lessons, key.definition)
    student = ExamStudent(student_id=first, name=f"Student {first}", email="")
    drawn = zoned_variant(student, key.definition, pool, key.seed, key.shuffled)
    assert drawn.model_dump() == variants[first].model_dump()
    # Across the class, the generated question's variants differ from student to student.
    generated = {q.question for v in key.variants for q in v.questions if key.questions[q.question].source == GENERATED}
    assert len(generated) >= 2


def _answer(client: Client, key, variant, right) -> None:
    for question in variant.questions:
        letter = key.correct_letter(question) if right(question) else wrong_letter(key, question)
        assert send(client, f"/exams/{NAME}/answer", position=question.position, value=letter).status_code == 200


def test_an_online_attempt_counts_each_zones_points_as_paper_does(zoned):
    key, student_id = zoned["key"], zoned["ids"][3]
    mine = next(v for v in key.variants if v.student.student_id == student_id)
    client = account(student_id)
    send(client, f"/exams/{NAME}/")
    _answer(client, key, mine, lambda q: q.zone == 1)  # the two 2-point questions right, the rest wrong
    send(client, f"/exams/{NAME}/submit")
    page = html.unescape(_page(client))
    assert "Score: 4 of 7" in page, page
    recorded = ExamResult.objects.get(exam=key.title, student__student_id=student_id)
    assert (recorded.score, recorded.max_score) == (4, 7)
    # The whole exam graded as `course exam grade` grades it: the same score in scores.csv.
    graded = exam_sessions.grade_online(NAME, zoned["folder"])
    assert graded.graded == 1
    results = exam_sessions.state() / "exams" / NAME / "results"
    rows = list(csv.DictReader((results / "scores.csv").open(encoding="utf-8")))
    assert [(r["student_id"], float(r["score"]), float(r["max_score"])) for r in rows] == [(student_id, 4.0, 7.0)]


def test_the_staffs_trial_is_their_own_draw_from_the_zones(zoned):
    key = zoned["key"]
    ta = account(role=Member.TA)
    assert send(ta, f"/exams/{NAME}/").status_code == 200  # started: the exam's page
    attempt = ExamAttempt.objects.get(exam=NAME, trial=True)
    staff = attempt.student
    sheet = exam_sessions.sheet_for(key, staff)
    assert sheet is not None
    trial_key, variant = sheet
    # The paper rule's draw for the staff's own id: N of each zone, the generated question drawn for them.
    assert [q.zone for q in variant.questions] == [1, 1, 2, 2, 2]
    pool = Pool(load_catalog([LESSON_DATA]).lessons, key.definition)
    student = ExamStudent(student_id=staff.student_id, name=staff.name or staff.student_id, email="")
    assert variant.model_dump() == zoned_variant(student, key.definition, pool, key.seed, key.shuffled).model_dump()
    assert exam_sessions.sheet_for(key, staff)[1] == variant  # the same again
    page = _page(ta)
    assert _shown(page, _stems(trial_key, variant)) and "A trial run: never counted" in page
    _answer(ta, trial_key, variant, lambda q: q.zone == 2)  # the three 1-point questions right
    send(ta, f"/exams/{NAME}/submit")
    assert "Score: 3 of 7" in html.unescape(_page(ta))
    assert not ExamResult.objects.filter(exam=key.title).exists()  # a trial is never counted


def test_the_staff_read_groups_csv_and_no_student_or_stranger_does(zoned):
    key, ids = zoned["key"], zoned["ids"]
    clients = {}
    for number, student_id in enumerate(ids[:4]):
        mine = next(v for v in key.variants if v.student.student_id == student_id)
        client = clients[student_id] = account(student_id)
        send(client, f"/exams/{NAME}/")
        _answer(client, key, mine, lambda q, n=number: (q.position + n) % 2 == 0)
        send(client, f"/exams/{NAME}/submit")
    exam_sessions.grade_online(NAME, zoned["folder"])
    url = f"/staff/online-exams/{NAME}/results/groups.csv"
    instructor = account(role=Member.INSTRUCTOR)
    staff_page = instructor.get(f"/staff/online-exams/{NAME}/").content.decode()
    assert f'href="{url}"' in staff_page and "(groups.csv)" in staff_page
    assert "Part 1: Scaling: 2 of 3 questions, 2 points each" in html.unescape(staff_page)
    served = instructor.get(url)
    assert served.status_code == 200 and served["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(served.content.decode())))
    assert GENERATED in {row["name"] for row in rows}
    assert all(int(row["students"]) <= 4 for row in rows)
    # A student who took it and an anonymous visitor get none of it.
    assert clients[ids[0]].get(url).status_code == 404
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_a_zoned_exam_built_before_its_key_kept_the_definition_says_so_to_the_staff(zoned):
    key_file = zoned["folder"] / "key.json"
    key_file.write_text(zoned["key"].model_copy(update={"definition": None}).model_dump_json(), encoding="utf-8")
    ta = account(role=Member.TA)
    send(ta, f"/exams/{NAME}/")
    assert not ExamAttempt.objects.filter(exam=NAME).exists()  # no trial of questions drawn by another rule
    page = html.unescape(account(role=Member.INSTRUCTOR).get(f"/staff/online-exams/{NAME}/").content.decode())
    assert "no trial run can be drawn from its zones; build it again" in page
    # Its students still take their printed draws.
    student_id = zoned["ids"][0]
    client = account(student_id)
    send(client, f"/exams/{NAME}/")
    mine = next(v for v in zoned["key"].variants if v.student.student_id == student_id)
    assert _shown(_page(client), _stems(zoned["key"], mine))
