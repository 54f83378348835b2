"""Exams' open questions marked on the staff's console: one answer at a time, anonymous unless
asked, a score from 0 to 1 and a comment, recorded as `course exam marks import` records them and
counted by `course exam grade --gradebook`; never reachable by a student."""

from __future__ import annotations

import csv

import pytest

from course.exams.grade import load_key
from gradebook.exams import grade_exam_into_gradebook, open_answers
from gradebook.models import ExamMark
from service.accounts.models import Member
from service.core.access import book, course
from service.exams import marking as exam_marking
from service.exams.text import question_html, question_title
from service.marking import answers as hand_grading

from .conftest import open_question_drawn
from .served import student

pytestmark = pytest.mark.timeout(120)


def _post(client, url, **fields):
    for page in ("/staff/exams/", "/assignments/sequences-and-attention/"):
        if "csrftoken" not in client.cookies:
            client.get(page)  # a page with a form sets the CSRF cookie, as in a browser
    return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def test_the_staff_mark_an_exams_open_questions_one_answer_at_a_time(exam):
    key = load_key(exam)
    # Its answers, in the roster's order: the students whose variant drew it (open questions vary).
    question, drew = open_question_drawn(key)
    students = [variant.student for variant, _ in drew]
    assert len(students) >= 2
    _, ta = student(Member.TA)

    index = ta.get("/staff/exams/").content.decode()
    assert key.title in index and question in index
    assert f"<td>{len(students)}</td><td>{len(students)}</td>" in index  # answers, all still to mark

    first_url = ta.get(f"/staff/exams/midterm/{question}/")["Location"]
    assert first_url == f"/staff/exams/midterm/{question}/{students[0].student_id}/"
    page = ta.get(first_url).content.decode()
    position = next(q.position for q in key.variants[0].questions if q.question == question)
    assert f"question <strong>q{position}</strong>" in page
    # The question as the student saw it (its math as MathML, never TeX), the page titled by its text.
    stem = key.questions[question].stem
    assert question_html(stem) in page and f"<title>Marking: {question_title(stem)}" in page.replace("&#x27;", "'")
    assert "\\(" not in page and f"<title>Marking {question}" not in page
    groups = ta.get(f"/staff/exam-groups/midterm/{question}/").content.decode()
    assert question_html(stem) in groups and "\\(" not in groups
    assert students[0].name not in page and students[0].student_id not in page.split("<form")[0]  # anonymous
    assert students[0].name in ta.get(first_url + "?names=1").content.decode()

    saved = _post(ta, first_url, score="0.5", comment="half: names the cause, no check", seen="", then="next")
    assert saved["Location"] == f"/staff/exams/midterm/{question}/{students[1].student_id}/"
    mark = ExamMark.objects.get(exam=key.title, student__student_id=students[0].student_id, question=question)
    assert (mark.score, mark.max_score, mark.comment) == (0.5, 1.0, "half: names the cause, no check")
    assert f"<td>{len(students)}</td><td>{len(students) - 1}</td>" in ta.get("/staff/exams/").content.decode()
    assert 'Current mark: <strong id="current">0.5</strong>' in ta.get(first_url).content.decode()
    # The next unmarked answer comes first now.
    assert ta.get(f"/staff/exams/midterm/{question}/")["Location"].endswith(f"/{students[1].student_id}/")

    for bad in ("2", "-0.5", "nan", "half"):
        refused = _post(ta, first_url, score=bad, comment="", seen=mark.marked_at.isoformat(), then="stay")
        assert "between 0 and 1" in ta.get(refused["Location"]).content.decode()
    assert ExamMark.objects.get(pk=mark.pk).score == 0.5  # unchanged

    # Marks given on the page count in `course exam grade --gradebook`, as a filled-in sheet's do.
    responses = exam / "responses-template.csv"
    graded = grade_exam_into_gradebook(book(), exam, responses, exam.parent / "results")
    result = next(r for r in graded.results if r.student_id == students[0].student_id)
    assert result.marked == 0.5 and result.max_score == result.automatic + 2
    with (exam.parent / "results" / "scores.csv").open() as handle:
        row = next(r for r in csv.DictReader(handle) if r["student_id"] == students[0].student_id)
    assert float(row["marked"]) == 0.5


def test_a_paper_exams_students_without_a_graded_sheet_leave_the_list(exam):
    """Before the sheets are graded every student is listed; after, one who handed none in is not
    (unless their answer was marked already), and the page says how many."""
    key = load_key(exam)
    question, drew = open_question_drawn(key)
    students = [variant.student.student_id for variant, _ in drew]
    assert len(students) >= 3
    _, ta = student(Member.TA)
    roster = len(key.variants)
    assert f"every student on the roster is listed ({roster} students)" in ta.get("/staff/exams/").content.decode()
    marked, absent = students[0], students[1]
    _post(ta, f"/staff/exams/midterm/{question}/{marked}/", score="1", comment="", seen="", then="stay")

    template = (exam / "responses-template.csv").read_text(encoding="utf-8").splitlines()
    handed_in = [line for line in template if not line.startswith((f"{marked},", f"{absent},"))]
    assert len(handed_in) == len(template) - 2
    responses = exam.parent / "responses.csv"
    responses.write_text("\n".join(handed_in) + "\n", encoding="utf-8")
    grade_exam_into_gradebook(book(), exam, responses, exam.parent / "results")

    listed = [a.student_id for a in open_answers(book(), exam) if a.question == question]
    assert listed == [s for s in students if s != absent]  # the marked answer stays, with its mark
    index = ta.get("/staff/exams/").content.decode()
    assert f"the answers of the {roster - 2} students whose sheet" in index
    assert "2 other students on the roster handed none in" in index
    assert f"<td>{len(students) - 1}</td><td>{len(students) - 2}</td>" in index  # answers, to mark
    assert ta.get(f"/staff/exams/midterm/{question}/{absent}/").status_code == 404
    queue = ta.get(f"/staff/exams/midterm/{question}/")["Location"]
    assert queue.endswith(f"/{students[2]}/")


def test_two_graders_on_one_answer_the_last_save_wins_and_is_told(exam):
    key = load_key(exam)
    question, _ = open_question_drawn(key)
    url = f"/staff/exams/midterm/{question}/{key.variants[0].student.student_id}/"
    _, first = student(Member.TA)
    _, second = student(Member.INSTRUCTOR)
    _post(first, url, score="1", comment="full", seen="", then="stay")
    seen = ExamMark.objects.get(exam=key.title, question=question).marked_at.isoformat()
    _post(first, url, score="0", comment="changed my mind", seen=seen, then="stay")
    answer = _post(second, url, score="0.75", comment="mostly", seen=seen, then="stay")
    notice = second.get(answer["Location"]).content.decode()
    assert "another grader had marked this answer at" in notice and "your mark replaced theirs" in notice
    (mark,) = [
        a
        for a in open_answers(book(), exam)
        if a.question == question and a.student_id == key.variants[0].student.student_id
    ]
    assert (mark.score, mark.comment) == (0.75, "mostly")


def test_a_student_reaches_no_exam_page_and_an_unknown_exam_or_question_is_404(exam):
    key = load_key(exam)
    question, _ = open_question_drawn(key)
    choice = next(q for q in key.variants[0].questions if q.kind == "choice").question
    student_id = key.variants[0].student.student_id
    _, as_student = student()
    for url in ("/staff/exams/", f"/staff/exams/midterm/{question}/", f"/staff/exams/midterm/{question}/{student_id}/"):
        assert as_student.get(url).status_code == 404
    assert _post(as_student, f"/staff/exams/midterm/{question}/{student_id}/", score="1", comment="").status_code == 404
    assert not ExamMark.objects.filter(exam=key.title, student__student_id=student_id).exists()
    _, ta = student(Member.TA)
    assert ta.get(f"/staff/exams/final/{question}/").status_code == 404
    assert ta.get(f"/staff/exams/midterm/{choice}/").status_code == 404  # a check question is graded from the sheet
    assert ta.get(f"/staff/exams/midterm/{question}/nobody/").status_code == 404


def test_an_exam_folder_that_is_not_an_exam_is_named_on_the_page(tmp_path, monkeypatch):
    module = course().modules[0].model_copy(update={"exams": [str(tmp_path / "final")]})
    monkeypatch.setattr(exam_marking, "course", lambda: course().model_copy(update={"modules": [module]}))
    monkeypatch.setattr(hand_grading, "course", lambda: course().model_copy(update={"modules": [module]}))
    _, ta = student(Member.TA)
    page = ta.get("/staff/exams/").content.decode()
    assert f"{tmp_path / 'final' / 'key.json'}: no such file; is {tmp_path / 'final'} a folder made by" in page
