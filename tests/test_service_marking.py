"""The staff's marks: hand grading on the page with the rubric (and the rubric edited there, two
graders on one answer), and an automatic score overridden with a reason the student reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service.accounts.models import Member
from service.core.access import assignments
from service.handin.models import Job

from .conftest import needs_sandbox
from .served import KNOWN_NOTEBOOK, grade_queue, graded_hand_in, hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


@needs_sandbox
def test_hand_grading_on_the_page_with_the_rubric():
    assignment = "attention-not-explanation"
    notebook = json.loads(KNOWN_NOTEBOOK.read_text())
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "written_link":
            cell["source"] = (
                "An artefact. <script>alert(1)</script> **bold** $\\frac{a}{b}$ $\\href{javascript:alert(2)}{y}$ "
                "$\\text{<script>alert(3)</script>}$\n\n```python\ndef f(x):\n    return x\n```\n"
            )
    ada, as_ada = student()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"{ada.username}.ipynb"
    path.write_text(json.dumps(notebook))
    hand_in(as_ada, path, assignment=assignment, name=f"{assignment}.ipynb")
    grade_queue()
    _, first = student(Member.TA)
    _, second = student(Member.INSTRUCTOR)

    index = first.get(f"/staff/marking/{assignment}/").content.decode()
    assert "Meaningful link or artefact" in index
    start = first.get(f"/staff/marking/{assignment}/written/")
    page_url = start["Location"]
    ada_submission = Job.objects.get(student__student_id=ada.username).submission
    page = first.get(page_url).content.decode()
    if f"/{ada_submission.id}/" not in page_url:  # other tests' answers come first: go to Ada's
        page_url = f"/staff/marking/{assignment}/written/{ada_submission.id}/"
        page = first.get(page_url).content.decode()
    assert ada.username not in page  # anonymous unless asked
    assert ada.username in first.get(page_url + "?names=1").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<strong>bold</strong>" in page
    # Math as MathML, only math: the converter's copies of the student's markup are dropped.
    assert "<mfrac><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></mfrac>" in page
    assert "javascript:" not in page and "<script>alert(3)" not in page and "<mtext>alert(3)</mtext>" in page
    assert '<span class="k">def</span>' in page  # code highlighted
    assert "1. +1 Says the strongest pairs are artefacts" in page

    def save(client, rubric, comment, seen=""):
        return client.post(
            page_url,
            {
                "rubric": rubric,
                "adjustment": "0",
                "comment": comment,
                "seen": seen,
                "then": "stay",
                "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
            },
        )

    assert save(first, ["artefacts", "intervention"], "no baseline").status_code == 302
    report = as_ada.get(f"/api/v1/submissions/{Job.objects.get(student__student_id=ada.username).id}").json()
    written = next(q for q in report["report"]["questions"] if q["id"] == "written")
    assert written["score"] == 2 and written["mark"]["rubric"][0].startswith("+1 Says the strongest pairs")
    assert written["mark"]["comment"] == "no baseline"

    # The rubric changes on the page: every mark that used the item follows, without marking again.
    item = next(q for q in assignments()[assignment].questions if q.id == "written").rubric[1]

    def edit(client, **fields):
        return client.post(
            f"/staff/rubric/{assignment}/written/",
            {**fields, "back": page_url, "csrfmiddlewaretoken": client.cookies["csrftoken"].value},
        )

    assert edit(first, item=item.id, text=item.text, points="1.5")["Location"] == page_url
    report = as_ada.get(f"/api/v1/submissions/{Job.objects.get(student__student_id=ada.username).id}").json()
    assert next(q for q in report["report"]["questions"] if q["id"] == "written")["score"] == 2.5
    refused = edit(first, item=item.id, text=item.text, points="99")
    assert "points are within" in first.get(refused["Location"]).content.decode()
    assert edit(as_ada, item=item.id, text="mine", points="3").status_code == 404  # students never
    edit(first, text="Cites a source for the claim", points="0.5")
    assert "Cites a source for the claim" in first.get(page_url).content.decode()
    assert 'value="cites_a_source_for_the_claim"' in first.get(page_url).content.decode()
    edit(first, item=item.id, text=item.text, points=str(item.points))  # as the manifest has it, for the next tests

    # Two graders on one answer: the last save wins, and its grader is told what it replaced.
    second.get(page_url)
    from gradebook.models import Mark

    seen = Mark.objects.get(student__student_id=ada.username, question_id="written").marked_at.isoformat()
    save(first, ["artefacts"], "changed my mind")
    answer = save(second, ["artefacts", "intervention", "baseline"], "all three", seen=seen)
    notice = second.get(answer["Location"]).content.decode()
    assert "had marked this answer at" in notice and "your mark replaced theirs" in notice
    mark = Mark.objects.get(student__student_id=ada.username, question_id="written")
    assert (mark.rubric, mark.comment) == (["artefacts", "intervention", "baseline"], "all three")


@needs_sandbox
def test_the_staff_override_an_automatic_score_with_a_reason_the_student_reads():
    alice, as_alice, job = graded_hand_in()
    _, ta = student(Member.TA)
    page = ta.get(f"/submissions/{job.id}/").content.decode()
    assert 'class="override"' in page

    def override(client, **fields):
        client.get(f"/submissions/{job.id}/")
        return client.post(
            f"/staff/override/{job.id}/", {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value}
        )

    assert (
        override(ta, question="attention", score="3", reason="your masks were right; our test was wrong").status_code
        == 302
    )
    shown = as_alice.get(f"/api/v1/submissions/{job.id}").json()["report"]
    attention = next(q for q in shown["questions"] if q["id"] == "attention")
    assert (attention["score"], attention["mark"]["override"], shown["score"]) == (3, True, 10)
    assert "your masks were right" in as_alice.get(f"/submissions/{job.id}/").content.decode()
    assert 'class="override"' not in as_alice.get(f"/submissions/{job.id}/").content.decode()
    # Set to part of its points: the badge says so in the score's colour, not the grader's "failed".
    override(ta, question="attention", score="1.5", reason="half of the masks")
    shown_page = as_alice.get(f"/submissions/{job.id}/").content.decode()
    assert '1.5 / 3 <span class="badge text-bg-warning">score set by hand</span>' in shown_page, shown_page
    refused = override(ta, question="attention", score="4", reason="too many")
    assert "give a score between 0 and 3" in ta.get(refused["Location"]).content.decode()
    assert override(as_alice, question="attention", score="3", reason="mine").status_code == 404
    override(ta, question="attention", score="", reason="")  # removed: the automatic score again
    assert as_alice.get(f"/api/v1/submissions/{job.id}").json()["report"]["score"] == 7.375
