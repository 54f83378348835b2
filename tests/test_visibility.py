"""What a student may see, and when (issue #51): one rule (autograder.visibility.student_view), and
every face outside the site built from it shows no more than it allows, for every visibility value,
before the due time, after it and once published: the report the API gives (the site's pages, the
JupyterLab panel and ``autograder submit`` read it), ``submit()``'s summary, the Gradescope results,
and the grade files. Each check not shown is marked by a name, a sentence and a message of its own,
and no face may hold any of them; every face says what decides the points it does not show."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from autograder.assignment import Assignment, Question
from autograder.errors import AssignmentError
from autograder.reports.gradescope import results as gradescope_results
from autograder.reports.model import QuestionResult, Report
from autograder.reports.model import TestOutcome as Outcome
from autograder.visibility import GRADESCOPE, VISIBILITIES, Published, student_view
from gradewright.cell import Feedback

DUE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BEFORE, AFTER = DUE - timedelta(hours=1), DUE + timedelta(hours=1)
MOMENTS = {
    "before the due time": (BEFORE, Published()),
    "after the due time": (AFTER, Published()),
    "published, before the due time": (BEFORE, Published(assignment=True)),
    "published, after the due time": (AFTER, Published(assignment=True)),
}


def spec(visibility: str | None = None, checks: dict | None = None, **settings) -> Assignment:
    """Two questions: ``open`` with one check of each visibility value (its own visibility each),
    ``plain`` with two checks under the assignment's visibility."""
    questions = [
        Question(id="open", points=4, functions=["f"], checks=checks if checks is not None else {}),
        Question(id="plain", points=2, functions=["g"]),
    ]
    if visibility is not None:
        settings["visibility"] = visibility
    return Assignment(name="vis", title="Visibility", notebook="vis.ipynb", questions=questions, due=DUE, **settings)


def outcome(question: str, name: str, passed: bool) -> Outcome:
    return Outcome(
        question=question,
        name=name,
        description=f"SENTENCE-{name}.",
        status="passed" if passed else "failed",
        message="" if passed else f"MESSAGE-{name}.",
    )


def report_for(assignment: Assignment) -> Report:
    """``open``'s checks: one per visibility value, all passing but the hidden one; ``plain``'s: one
    passing and one failing. Scores as the grader computes them."""
    open_tests = [outcome("open", f"test_{value}", value != "hidden") for value in VISIBILITIES]
    plain_tests = [outcome("plain", "test_plain_one", True), outcome("plain", "test_plain_two", False)]
    questions = [
        QuestionResult(
            id="open",
            score=3.0,
            max_score=4.0,
            status="partial",
            feedback="A NAMED MISTAKE.\n3 of 4 checks passed.\n- MESSAGE-test_hidden. Checked: SENTENCE-test_hidden.",
            tests=open_tests,
        ),
        QuestionResult(
            id="plain",
            score=1.0,
            max_score=2.0,
            status="partial",
            feedback="1 of 2 checks passed.\n- MESSAGE-test_plain_two. Checked: SENTENCE-test_plain_two.",
            tests=plain_tests,
        ),
    ]
    return Report(
        student="s1",
        assignment=assignment.name,
        score=4.0,
        max_score=6.0,
        questions=questions,
        submission="s1.ipynb",
        sha256="0" * 64,
        reference="numpy",
        sandbox="none",
        graded_at="2026-11-30T10:00:00+00:00",
        grader_version="test",
        feedback=assignment.feedback,
        visibility=assignment.visibility_rules,
    )


def unseen_markers(view) -> list[str]:
    """The name, sentence and message of every check the view does not show."""
    hidden = []
    for question, result in zip(view.questions, REPORT.questions, strict=True):
        for check, test in zip(question.checks, result.tests, strict=True):
            if not check.shown:
                hidden += [test.name, f"SENTENCE-{test.name}", f"MESSAGE-{test.name}"]
    return hidden


def faces(view, report: Report) -> dict[str, str]:
    """Every face outside the site's pages, as text: the API's report, ``submit()``'s summary,
    JupyterLab's panel's data and what ``autograder submit`` prints."""
    import json

    data = view.as_report(report)
    job = {"id": 1, "assignment": report.assignment, "state": "graded", "report": data, "page": "/s/1"}
    from jupyterlab_gradewright.handlers import _job as panel

    return {
        "the API's report": json.dumps(data),
        "submit()": Feedback(job, "http://site").summary(),
        "JupyterLab's panel": json.dumps(panel(job, "http://site")),
        "autograder submit": autograder_submit({**job, "server": "http://site"}),
    }


def autograder_submit(job: dict) -> str:
    """What ``autograder submit`` prints of ``job``, as the server answered it."""
    import contextlib
    import io

    import pytest

    from commands.autograder import main
    from service.handin import client

    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setattr(client, "submit", lambda *args, **options: job)
        main(["submit", "notebook.ipynb", "--assignment", "vis"])
    return printed.getvalue()


SETTINGS = {
    "open": {f"test_{value}": value for value in VISIBILITIES},
}
REPORT = report_for(spec(checks=SETTINGS["open"], publish="by_staff"))


@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("default", VISIBILITIES)
def test_no_face_shows_a_check_its_visibility_hides(default, moment):
    assignment = spec(checks=SETTINGS["open"], visibility=default, publish="by_staff")
    report = report_for(assignment)
    now, published = MOMENTS[moment]
    view = student_view(report, assignment.visibility_rules, DUE, now, published)
    shown_by_rule = {
        value
        for value in VISIBILITIES
        if value == "visible"
        or (value == "after_due" and now >= DUE)
        or (value == "after_published" and published.assignment)
    }
    checks = {check.when: check.shown for check in view.questions[0].checks}
    assert checks == {value: value in shown_by_rule for value in VISIBILITIES}
    assert all(check.shown == (default in shown_by_rule) for check in view.questions[1].checks)
    texts = faces(view, report)
    for face, text in texts.items():
        leaked = [marker for marker in unseen_markers(view) if marker in text]
        assert leaked == [], f"{face} shows {leaked} ({default}, {moment})"
        assert "all tests passed" not in text.lower()
        if not view.complete:
            # The named mistake rests on every check of its question: shown only when all are.
            assert "A NAMED MISTAKE" not in text
            assert "more point" in text, f"{face} does not say what decides the points it hides"
    for question in view.questions:  # a question shown in part: the score of its visible checks, as such
        if question.shown == "part":
            assert f"{question.id}: {question.score:g} / {question.max_score:g} " not in texts["submit()"]
            assert (
                f"{question.id}: {question.score:g} / {question.shown_max:g} on the visible checks" in texts["submit()"]
            )
    assert view.summary  # never nothing
    if not view.complete:
        assert view.score is None and "decided by checks you will" in view.summary
        assert texts["submit()"].count(view.summary) == 1


def test_the_totals_are_the_shown_parts_and_say_what_decides_the_rest():
    assignment = spec(visibility="after_due", checks={"test_visible": "visible", "test_after_due": "visible"})
    report = report_for(assignment).model_copy(
        update={"questions": [report_for(assignment).questions[0].model_copy(update={"tests": []})]}
    )
    # A question with four checks, two shown now: 2 of 2 pass; its other 2 points after the due time.
    four = [outcome("open", name, True) for name in ("test_visible", "test_after_due", "test_x", "test_y")]
    question = report.questions[0].model_copy(update={"tests": four, "score": 4.0, "status": "passed"})
    report = report.model_copy(update={"questions": [question], "score": 4.0, "max_score": 4.0})
    view = student_view(report, assignment.visibility_rules, DUE, BEFORE, Published())
    assert (
        view.summary
        == "Visible checks: 2 of 2 visible checks pass; 2 more points are decided by checks you will see after the due time."
    )
    assert (view.shown_score, view.shown_max, view.score) == (2.0, 2.0, None)
    assert view.questions[0].feedback.startswith("2 of 2 visible checks passed.")
    later = student_view(report, assignment.visibility_rules, DUE, AFTER, Published())
    assert later.complete and later.score == 4.0 and later.summary == "Checks: 4 of 4 checks pass."


def test_a_student_shown_nothing_is_told_so_and_why():
    assignment = spec(visibility="hidden")
    report = report_for(assignment)
    view = student_view(report, assignment.visibility_rules, DUE, AFTER, Published(assignment=True))
    assert view.score is None and view.shown_max == 0
    assert view.summary == (
        "Your submission was graded; none of its 6 checks is shown yet; 6 more points are decided by checks you "
        "will not see."
    )


def test_an_extension_is_the_students_own_due_time():
    assignment = spec(visibility="after_due")
    report = report_for(assignment)
    extended = DUE + timedelta(days=2)
    assert not student_view(report, assignment.visibility_rules, extended, AFTER, Published()).complete
    assert student_view(report, assignment.visibility_rules, DUE, AFTER, Published()).complete


def test_hand_marks_are_shown_once_published_the_assignment_or_the_question():
    question = Question(id="essay", points=3, manual=True)
    assignment = Assignment(
        name="vis", title="V", notebook="v.ipynb", questions=[question], publish="by_staff", due=DUE
    )
    from autograder.reports.model import HandMark

    marked = QuestionResult(
        id="essay",
        score=2.0,
        max_score=3.0,
        status="manual",
        feedback="graded by hand",
        answers={"essay_answer": "my words"},
        mark=HandMark(score=2.0, comment="GOOD POINT", marked_at="2026-12-02T10:00:00+00:00"),
    )
    report = report_for(assignment).model_copy(update={"questions": [marked], "score": 2.0, "max_score": 3.0})
    rules = assignment.visibility_rules
    before = student_view(report, rules, DUE, AFTER, Published())
    data = before.as_report(report)
    assert data["score"] is None and data["questions"][0]["mark"] is None and "GOOD POINT" not in str(data)
    assert data["questions"][0]["answers"] == {"essay_answer": "my words"}  # their own words, always
    assert "graded by hand, shown when your grades are published" in before.summary
    for published in (Published(assignment=True), Published(questions=["essay"])):
        after = student_view(report, rules, DUE, AFTER, published).as_report(report)
        assert after["score"] == 2.0 and after["questions"][0]["mark"]["comment"] == "GOOD POINT"


def test_feedback_the_older_switch_is_read_as_the_visibility():
    assert spec().visibility_rules.default == "visible"
    assert spec(feedback="after_due").visibility_rules.default == "after_due"
    assert spec(feedback="hidden").visibility_rules.default == "hidden"
    assert spec(feedback="hidden").visibility_rules.publish == "automatic"  # as before: nothing to publish
    assert spec(visibility="after_published").visibility_rules.publish == "by_staff"
    with pytest.raises(ValueError, match="keep visibility alone"):
        spec(feedback="after_due", visibility="visible")


@pytest.mark.parametrize("value", VISIBILITIES)
def test_the_gradescope_results_say_each_checks_visibility_in_gradescopes_words(value):
    assignment = spec(visibility=value, checks={"test_visible": "visible"})
    document = gradescope_results(report_for(assignment))
    tests = {test["name"]: test for test in document["tests"]}
    plain = tests["plain"]
    assert plain["visibility"] == GRADESCOPE[value]
    if value == "visible":  # one visibility: the question is one test, as before
        assert tests["open"]["visibility"] == "visible"
    else:  # the question split by visibility, each part scored by its own checks
        assert tests["open (checks shown at once)"]["visibility"] == "visible"
        assert tests["open (checks shown at once)"]["max_score"] == 1.0
        hidden_part = next(t for name, t in tests.items() if name.startswith("open (") and "at once" not in name)
        assert hidden_part["visibility"] == GRADESCOPE[value] and hidden_part["max_score"] == 3.0
        assert "A NAMED MISTAKE" not in str(document["tests"])
    assert document["visibility"] == "visible"  # the whole is shown once its least hidden test is
    assert sum(test["max_score"] for test in document["tests"]) == 6.0


def test_a_check_setting_names_a_test_of_its_question(tmp_path):
    from autograder.assignment import load_assignment
    from autograder.suite import hidden_suite

    from .conftest import ASSIGNMENTS

    assignment = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    softmax = assignment.question("softmax").model_copy(update={"checks": {"test_no_such_check": "hidden"}})
    broken = assignment.model_copy(
        update={"questions": [softmax if q.id == "softmax" else q for q in assignment.questions]}
    )
    with pytest.raises(AssignmentError, match="checks: test_no_such_check is no hidden test of question 'softmax'"):
        hidden_suite(broken)


def test_a_master_notebook_sets_the_visibility_of_its_assignment_its_questions_and_its_checks(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_raw_cell

    from autograder.assignment import load_assignment
    from autograder.authoring.assign import assign

    def master(checks: str):
        notebook = new_notebook()
        notebook.cells = [
            new_raw_cell('# ASSIGNMENT\nname = "seen"\ntitle = "Seen"\nvisibility = "after_due"'),
            new_raw_cell(f'# BEGIN QUESTION\nid = "total"\npoints = 2\nvisibility = "visible"\n{checks}'),
            new_code_cell("def total(x):\n    ### BEGIN SOLUTION\n    return sum(x)\n    ### END SOLUTION"),
            new_code_cell(
                "# HIDDEN TESTS\nfrom autograder.testing import expect_close\n\n\n"
                'def test_total(student, reference):\n    """A total is right."""\n'
                "    expect_close(student.total([1.0, 2.0]), 3.0, 'the total')\n\n\n"
                'def test_empty(student, reference):\n    """The total of nothing is 0."""\n'
                "    expect_close(student.total([]), 0.0, 'the total')\n"
            ),
        ]
        path = tmp_path / "seen.ipynb"
        nbformat.write(notebook, path)
        return path

    done = assign(master('checks = { test_empty = "practice", test_total = "after_published" }'), tmp_path / "out")
    rules = load_assignment(done.folder).visibility_rules
    assert rules.default == "after_due" and rules.of_question("total") == "visible"
    assert rules.of_check("total", "test_total") == "after_published" and rules.practice == {"total": ["test_empty"]}
    assert rules.publish == "by_staff"  # an after_published check: the staff publish
    with pytest.raises(AssignmentError, match=r"checks: test_totl is no hidden test of question 'total' \(its tests: "):
        assign(master('checks = { test_totl = "hidden" }'), tmp_path / "again")


def test_a_warning_names_a_grades_number_only_when_every_score_is_shown():
    from autograder.visibility import scores_shown

    rules = spec(visibility="after_due", checks={"test_x": "visible"}).visibility_rules
    assert not scores_shown(rules, DUE, BEFORE, Published())
    assert scores_shown(rules, DUE, AFTER, Published())
    staff = spec(checks={"test_x": "after_published"}).visibility_rules
    assert not scores_shown(staff, DUE, AFTER, Published())
    assert scores_shown(staff, DUE, BEFORE, Published(assignment=True))
    assert not scores_shown(spec(visibility="hidden").visibility_rules, DUE, AFTER, Published(assignment=True))
