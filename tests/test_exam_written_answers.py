"""Numeric and short-answer generated questions on paper exams (`course exam build --definition`,
`course exam grade`): each sheet prints its own drawn numbers and a box for the answer, the responses
file holds what each student wrote, and grading checks it against that sheet's own answer by the
question's tolerance (blank unanswered, unreadable or no number wrong, each named)."""

from __future__ import annotations

import csv
import html
import json
import shutil
import uuid
from datetime import timedelta

import pytest

from course.catalog import load_catalog
from course.exams.grade import grade_exam
from course.exams.variants import ExamKey
from course.generated import draw, precision_of
from course.models import GeneratedCheck

from .conftest import LESSON_DATA

Q = "module-10-question-bank"
SOFTMAX, SHAPE, SCALE, COUNT = (
    f"{Q}-softmax-of-drawn-scores",
    f"{Q}-attention-output-shape",
    f"{Q}-scale-factor-of-drawn-dk",
    f"{Q}-attention-weights-count",
)
DEFINITION = f"""title = "Final"

[[zones]]
title = "Computed"
choose = 4
questions = ["{SOFTMAX}", "{SHAPE}", "{SCALE}", "{COUNT}"]

[[zones]]
title = "Chosen"
choose = 1
questions = ["{Q}-check-1"]
"""


@pytest.fixture(scope="module")
def lessons(tmp_path_factory):
    """The shipped question bank, its weights count stating units (a question may)."""
    folder = tmp_path_factory.mktemp("lessons")
    shutil.copy(LESSON_DATA / "_module10_generators.py", folder)
    bank = json.loads((LESSON_DATA / f"{Q}.lesson.json").read_text())
    count = next(question for question in bank["generated"] if question["id"] == "attention-weights-count")
    count["units"] = "weights"
    (folder / f"{Q}.lesson.json").write_text(json.dumps(bank))
    return folder


def _build(course, lessons, folder, ids, name="final"):
    (folder / "roster.csv").write_text("student_id,name,email\n" + "".join(f"{i},Student {i},\n" for i in ids))
    (folder / "final.toml").write_text(DEFINITION)
    where = ["--roster", folder / "roster.csv", "--lessons", lessons, "--definition", folder / "final.toml"]
    result = course("exam", "build", *where, "--out", folder / name, "--seed", "7")
    assert (result.code, result.out) == (0, f"{folder / name}: {len(ids)} variants of 5 questions\n"), result.err
    return folder / name


@pytest.fixture
def exam(course, lessons, tmp_path):
    return _build(course, lessons, tmp_path, [f"s{n:02}" for n in range(1, 31)])


def _key(exam) -> ExamKey:
    return ExamKey.model_validate_json((exam / "key.json").read_text())


def _position(key: ExamKey, student: str, source: str) -> tuple[int, str]:
    variant = next(v for v in key.variants if v.student.student_id == student)
    placed = next(q for q in variant.questions if key.questions[q.question].source == source)
    return placed.position, placed.question


def _rows(path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(newline="")))


def test_each_sheet_prints_its_own_numbers_a_box_and_the_key_its_own_answer(exam, lessons):
    key = _key(exam)
    softmax = next(q for q in load_catalog([lessons]).lessons[0].generated if q.id == "softmax-of-drawn-scores")
    answers = {row["student_id"]: row for row in _rows(exam / "key.csv")}
    drawn = set()
    for student in ("s01", "s02", "s03"):
        position, question = _position(key, student, SOFTMAX)
        # The sheet's own draw, as course.generated draws it for the exam's seed and this student.
        mine = draw(softmax, f"7:{student}")
        drawn.add(mine.answer)
        assert float(answers[student][f"q{position}"]) == pytest.approx(mine.answer)
        assert mine.stem.markdown() in (exam / f"{student}.md").read_text()
        assert key.questions[question].written.answer == mine.answer
        sheet = (exam / f"{student}.sheet.html").read_text()
        row = sheet.split(f"<tr><th>{position}</th>")[1].split("</tr>")[0]
        assert row == '<td><span class="value"></span><span class="expected">to 3 decimals</span></td>'
        count, _ = _position(key, student, COUNT)
        row = sheet.split(f"<tr><th>{count}</th>")[1].split("</tr>")[0]
        assert '<span class="units">weights</span><span class="expected">exactly</span>' in row
        assert (
            "Write your answer in this question's box on the answer sheet (exactly, in weights)."
            in (exam / f"{student}.md").read_text()
        )
    assert len(drawn) == 3  # three students, three softmaxes
    # The key, read as responses, is right on every sheet.
    result_dir = exam.parent / "from-key"
    graded = grade_exam(exam, exam / "key.csv", result_dir)
    assert not graded.problems and {(r.correct, r.automatic) for r in graded.results} == {(5, 5)}


def test_written_answers_graded_against_the_sheets_own_answer_by_the_tolerance(course, exam):
    key = _key(exam)
    answers = {row["student_id"]: row for row in _rows(exam / "key.csv")}
    s01, s02 = answers["s01"], answers["s02"]
    soft, shape, scale, count = (_position(key, "s01", name)[0] for name in (SOFTMAX, SHAPE, SCALE, COUNT))
    right = dict(s01)
    right[f"q{soft}"] = f"{float(s01[f'q{soft}']):.3f}"  # to three decimals, as asked
    right[f"q{shape}"] = s01[f"q{shape}"].replace(" ", "")  # (7,9,8) for (7, 9, 8)
    right[f"q{scale}"] = f"{float(s01[f'q{scale}']):.2f}"
    right[f"q{count}"] = f"{s01[f'q{count}']} weights"  # its units written after it
    wrong = {"student_id": "s02", f"q{_position(key, 's02', SOFTMAX)[0]}": ""}  # blank: not answered
    wrong[f"q{_position(key, 's02', SHAPE)[0]}"] = "?"  # the scanning service could not read it
    wrong[f"q{_position(key, 's02', SCALE)[0]}"] = "five point six"
    wrong[f"q{_position(key, 's02', COUNT)[0]}"] = str(float(s02[f"q{_position(key, 's02', COUNT)[0]}"]) + 1)
    wrong[f"q{next(q.position for q in key.variants[1].questions if q.kind == 'choice')}"] = ""
    copied = dict(s01, student_id="s03")  # s01's answers are not s03's
    responses = exam.parent / "responses.csv"
    with responses.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["student_id", *(f"q{n}" for n in range(1, 6))])
        writer.writeheader()
        writer.writerows([right, wrong, copied, {"student_id": "nobody", "q1": "1"}])
    result = course("exam", "grade", exam, responses, "--out", exam.parent / "results")
    assert result.code == 2 and result.out == f"{exam.parent / 'results'}: 3 students graded\n"
    lines = result.err.splitlines()
    assert (
        f"{responses}: row 3: warning: q{_position(key, 's02', SHAPE)[0]}: '?' is marked unreadable (s02's answer); counted wrong"
        in lines
    )
    assert (
        f"{responses}: row 3: warning: q{_position(key, 's02', SCALE)[0]}: 'five point six' is not a number (s02's answer); counted wrong"
        in lines
    )
    assert f"{responses}: row 5: student_id 'nobody' has no variant in this exam; row skipped" in lines
    scores = {row["student_id"]: row for row in _rows(exam.parent / "results" / "scores.csv")}
    assert (scores["s01"]["correct"], scores["s01"]["answered"]) == ("5", "5")
    assert (scores["s02"]["correct"], scores["s02"]["answered"]) == ("0", "3")  # the blanks unanswered
    assert int(scores["s03"]["correct"]) <= 2  # the letter and perhaps a shape may agree; the numbers not
    feedback = (exam.parent / "results" / "feedback" / "s02.md").read_text()
    assert (
        "Not answered.\n\nThe answer is **" in feedback and "Your answer could not be read: counted wrong." in feedback
    )
    assert "Your answer, **five point six**, is not a number: counted wrong." in feedback
    assert "(to 2 decimals)." in feedback and "The scores are divided by" in feedback  # the question's own feedback
    assert (
        f"Your answer, **{right[f'q{soft}']}**, is correct."
        in (exam.parent / "results" / "feedback" / "s01.md").read_text()
    )
    # The statistics: a row per drawn variant, and each generated question over its variants.
    items = [row for row in _rows(exam.parent / "results" / "items.csv") if row["source"] == SCALE]
    assert {row["kind"] for row in items} == {"value"} and sum(int(row["students"]) for row in items) == 3
    assert sum(int(row["correct"]) for row in items) == 1 and sum(int(row["unanswered"]) for row in items) == 0
    groups = {row["name"]: row for row in _rows(exam.parent / "results" / "groups.csv")}
    assert (groups[SCALE]["students"], groups[SCALE]["correct"]) == ("3", "1")


@pytest.mark.parametrize(
    "tolerance, words",
    [
        ({"relative": 0, "absolute": 0.0005}, "to 3 decimals"),
        ({"relative": 0, "absolute": 0.5}, "to the nearest whole number"),
        ({"relative": 0, "absolute": 0}, "exactly"),
        ({"relative": 0.01, "absolute": 0}, "within 1%"),
        ({"relative": 0, "absolute": 0.02}, "within ±0.02"),
        (None, None),  # float32's, which no one writes by hand: nothing printed
    ],
)
def test_the_box_states_the_precision_the_questions_tolerance_asks(tolerance, words):
    question = {"id": "q", "kind": "numeric", "question": "?", "answer": "1"}
    question |= {"tolerance": tolerance} if tolerance is not None else {}
    assert precision_of(GeneratedCheck.model_validate(question)) == words


@pytest.fixture
def online(course, lessons, tmp_path, monkeypatch):
    """An exam of two new students, listed by the course as "written" and open now."""
    from django.utils import timezone

    from service.core.access import course as the_course
    from service.exams import sessions
    from service.exams.models import ExamAttempt, OnlineExam

    (tmp_path / "exams").mkdir()
    ids = [f"w{uuid.uuid4().hex[:8]}" for _ in range(2)]
    exam = _build(course, lessons, tmp_path, ids, "exams/written")
    module = the_course().modules[0].model_copy(update={"exams": [str(exam)]})
    monkeypatch.setattr(sessions, "course", lambda: the_course().model_copy(update={"modules": [module]}))
    OnlineExam.objects.filter(name="written").delete()
    ExamAttempt.objects.filter(exam="written").delete()
    now = timezone.now()
    OnlineExam.objects.create(
        name="written",
        opens_at=now - timedelta(minutes=5),
        closes_at=now + timedelta(hours=1),
        minutes=30,
        results=OnlineExam.AT_SUBMIT,
    )
    yield exam
    OnlineExam.objects.filter(name="written").delete()
    ExamAttempt.objects.filter(exam="written").delete()


@pytest.mark.timeout(120)
def test_online_the_written_answers_are_typed_and_graded_by_the_same_rule(online):
    from service.exams import sessions
    from service.exams.models import OnlineExam

    from .test_online_exams import account, send

    OnlineExam.objects.filter(name="written").update(results=OnlineExam.DURING)
    key = _key(online)
    student = key.variants[0].student.student_id
    answers = next(row for row in _rows(online / "key.csv") if row["student_id"] == student)
    client = account(student)
    assert send(client, "/exams/written/").status_code == 200  # started: the exam's page
    page = html.unescape(client.get("/exams/written/").content.decode())
    assert page.count("Your answer (a number, or as the question asks)") == 4
    # Beside each box, what the paper sheet prints beside it (its precision, its units), tied to the box.
    softmax, count = _position(key, student, SOFTMAX)[0], _position(key, student, COUNT)[0]
    assert f'aria-describedby="expected-{softmax}"' in page
    assert f'<span id="expected-{softmax}" class="form-text expected">Answer to 3 decimals.</span>' in page
    assert f'<span id="expected-{count}" class="form-text expected">Answer exactly, in weights.</span>' in page
    assert "verdict" not in page  # nothing saved yet
    scale, _ = _position(key, student, SCALE)
    hostile = '<img src=x onerror="alert(1)"> five'  # the student's own text: shown escaped, never as markup
    for position in range(1, 6):
        value = hostile if position == scale else answers[f"q{position}"]
        assert send(client, "/exams/written/answer", position=position, value=value).status_code == 200
    # Results "during": each saved written answer judged as the choice's is, by the one tolerance rule,
    # and nothing more of the key (the answer it wanted) shown.
    page = client.get("/exams/written/").content.decode()
    assert page.count('class="verdict right"') == 4 and page.count('class="verdict wrong"') == 1
    wrong = page.split(f'id="q{scale}"')[1].split("</section>")[0]
    assert 'class="verdict wrong"' in wrong and answers[f"q{scale}"] not in wrong
    assert "<img" not in page
    send(client, "/exams/written/submit")
    ended = client.get("/exams/written/").content.decode()
    assert "Score: 4 of 5" in html.unescape(ended)
    assert "is not a number: counted wrong" in html.unescape(ended) and "&lt;img" in ended and "<img" not in ended
    graded = sessions.grade_online("written", online)
    assert [(r.student_id, r.correct, r.answered) for r in graded.results] == [(student, 4, 5)]
