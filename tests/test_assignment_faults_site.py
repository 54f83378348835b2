"""A hidden test's own fault on the site (issue #46): the submission's page shows it to the staff,
with the test's traceback, and never to the student, on the page or through the API."""

from __future__ import annotations

import json

import pytest

from gradebook.models import Result

from .test_forms import GRADED, course, text_of  # noqa: F401 - course: the seeded course, a fixture

pytestmark = pytest.mark.timeout(300)

TRACEBACK = "  averages.master.ipynb: cell 14 (# HIDDEN TESTS), line 21, in test_zero_values\n    values = np.zeros(4)"


def test_the_staff_see_a_hidden_tests_own_fault_and_the_student_does_not(course):  # noqa: F811
    job = course["jobs"][GRADED]
    result = Result.objects.filter(submission=job.submission).exclude(tests=[]).first()
    assert result is not None
    fault = {
        "question": result.question_id,
        "test": result.tests[0]["name"],
        "error": "NameError: name 'np' is not defined",
        "where": "averages.master.ipynb: cell 14 (# HIDDEN TESTS), line 21",
        "traceback": f"{TRACEBACK}\nNameError: name 'np' is not defined",
    }
    result.tests = [{**result.tests[0], "status": "error", "fault": fault}, *result.tests[1:]]
    result.save()

    staff = course["ta"].get(f"/submissions/{job.id}/")
    assert staff.status_code == 200
    shown = text_of(staff)
    assert "The assignment's tests failed (not the student's code)" in shown
    assert f"{fault['test']} raised NameError: name 'np' is not defined at {fault['where']}" in shown
    assert "values = np.zeros(4)" in shown
    api = json.loads(course["instructor"].get(f"/api/v1/submissions/{job.id}").content)
    assert api["report"]["test_faults"] == [fault]

    own = course["student"]
    page = own.get(f"/submissions/{job.id}/").content.decode()
    assert "np.zeros" not in page and "assignment's tests failed (not the student" not in page
    answer = json.loads(own.get(f"/api/v1/submissions/{job.id}").content)
    assert "test_faults" not in answer["report"] and "np.zeros" not in json.dumps(answer)
