"""The staff's pages of grades: the gradebook with its filters, a student's history, the statistics
and their charts, the exports, the similarity report; none of them a student's."""

from __future__ import annotations

import re

import pytest

from service.accounts.models import Member

from .conftest import needs_sandbox
from .served import grade_queue, graded_hand_in, student

pytestmark = pytest.mark.usefixtures("empty_queue")  # a job another test left is never graded or counted here


@needs_sandbox
def test_the_staff_read_the_gradebook_a_students_history_and_the_statistics(monkeypatch):
    # The tests' process shares one database: past 100 students (a page) alice could be on page 2.
    monkeypatch.setattr("service.grades.views.PER_PAGE", 100_000)
    alice, as_alice, _ = graded_hand_in()
    _, as_ta = student(Member.TA)
    index = as_ta.get("/staff/gradebook/")
    assert index.status_code == 302 and index["Location"] == "/staff/gradebook/sequences-and-attention/"
    page = as_ta.get(index["Location"]).content.decode()
    assert (
        alice.username in page and "7.38" in page and "0.38" in page and "7.375" not in page
    )  # shown by the rounding rule
    late_only = as_ta.get(index["Location"] + "?show=late").content.decode()
    assert alice.username not in late_only
    below = as_ta.get(index["Location"] + "?below=8&sort=score").content.decode()
    assert alice.username in below and alice.username not in as_ta.get(index["Location"] + "?below=5").content.decode()
    history = as_ta.get(f"/staff/students/{alice.username}/").content.decode()
    assert "current" in history and "7.38 / 10" in history and "submission " in history
    stats = as_ta.get("/staff/statistics/sequences-and-attention/").content.decode()
    assert "test_" in stats and "Mean" in stats
    for name in ("questions", "overview"):
        chart = as_ta.get(f"/staff/statistics/sequences-and-attention/{name}.png")
        assert chart["Content-Type"] == "image/png" and chart.content[:4] == b"\x89PNG"
    assert as_ta.get("/staff/statistics/sequences-and-attention/other.png").status_code == 404
    as_ta.get("/staff/exports/")
    canvas = as_ta.post(
        "/staff/exports/",
        {
            "assignment": ["sequences-and-attention"],
            "format": "canvas",
            "csrfmiddlewaretoken": as_ta.cookies["csrftoken"].value,
        },
    )
    lines = canvas.content.decode().splitlines()
    assert canvas["Content-Type"] == "text/csv" and lines[0].startswith("Student,ID,SIS User ID,SIS Login ID,Section,")
    assert lines[1].startswith("Points Possible") and any(line.endswith(",7.38") for line in lines[2:])
    # Similarity: the page queues a report and a worker computes it (more in tests/test_similarity.py).
    as_ta.post(
        "/staff/similarity/sequences-and-attention/",
        {"threshold": "0.9", "csrfmiddlewaretoken": as_ta.cookies["csrftoken"].value},
    )
    grade_queue()
    similar = as_ta.get("/staff/similarity/sequences-and-attention/").content.decode()
    assert re.search(r"\b\d+ (pair shares|pairs share) more than 90% of their code", similar)
    for url in (
        "/staff/gradebook/sequences-and-attention/",
        f"/staff/students/{alice.username}/",
        "/staff/statistics/sequences-and-attention/",
    ):
        assert as_alice.get(url).status_code == 404  # students never see the staff's pages
