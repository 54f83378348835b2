"""The real `autograder serve` in Debian's chromium (Playwright): a student signs in by their link,
hands in and watches it graded; the staff mark, edit the rubric, answer a review, override a score
and compare. GRADEWRIGHT_SCREENSHOTS=docs/screenshots refreshes the README's screenshots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import ROOT, needs_sandbox
from .served import CORRECT, KNOWN_NOTEBOOK, launch_chromium, needs_browser, roster_links, screenshots_folder

# A job another test left is never graded or counted here; a served site of the module's own: slow.
pytestmark = [pytest.mark.usefixtures("empty_queue"), pytest.mark.slow]


@needs_sandbox
@needs_browser
def test_a_student_in_the_browser_signs_in_hands_in_and_watches_it_graded(served, tmp_path):
    """Set GRADEWRIGHT_SCREENSHOTS=docs/screenshots to refresh the README's screenshots."""
    from playwright.sync_api import expect, sync_playwright

    shots = screenshots_folder(tmp_path)
    link_of = roster_links(served, tmp_path)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # Two students, each in a browser of their own (contexts share no cookies).
            ada = browser.new_context(accept_downloads=True).new_page()
            alan = browser.new_context().new_page()
            for page, student_id in ((ada, "correct_source_notebook"), (alan, "released_unchanged")):
                page.goto(link_of[student_id])
                page.fill("#id_new_password1", "correct horse battery")
                page.fill("#id_new_password2", "correct horse battery")
                page.click("text=Set my password")
                expect(page.locator("h1")).to_have_text("Assignments")
            ada.screenshot(path=shots / "assignments.png")

            # Alan hands in; Ada will not see it.
            alan.click("text=Module 10 notebook: attention built by hand")
            alan.set_input_files("input[name=notebook]", str(CORRECT))
            alan.get_by_role("button", name="Hand in").click()
            expect(alan.locator("#state")).to_be_visible()
            alans_page = alan.url

            ada.click("text=Module 10 assignment: attention is not an explanation")
            # Due 30 hours ago at 10% a day (tests/conftest.py): the page's warning before a hand-in says so.
            expect(ada.locator(".hand-in-warnings")).to_contain_text(
                re.compile(
                    r"The due time \(\d+ \w+ \d{4}, \d\d:\d\d UTC\) has passed: a hand-in now is late and loses 20% of its score\."
                )
            )
            with ada.expect_download() as download:
                ada.click("text=Download the notebook")
            released = json.loads(Path(download.value.path()).read_text())
            assert download.value.suggested_filename == "attention-not-explanation.ipynb"
            assert "YOUR ANSWER HERE" in json.dumps(released) and "BEGIN SOLUTION" not in json.dumps(released)

            ada.set_input_files("input[name=notebook]", str(ROOT / "README.md"))  # the wrong file first
            ada.get_by_role("button", name="Hand in").click()
            expect(ada.locator("[role=alert]")).to_have_text("hand in a notebook (.ipynb) or a Python file (.py)")
            ada.set_input_files("input[name=notebook]", str(KNOWN_NOTEBOOK))
            ada.get_by_role("button", name="Hand in").click()
            expect(ada.locator("#state")).to_have_text(re.compile("^(queued|grading|graded)$"), timeout=10_000)
            expect(ada.locator("text=Score: 7 / 10")).to_be_visible(timeout=120_000)
            expect(ada.locator("p.late")).to_contain_text("Late by 2 days: penalty 1.4 (20%); final score 5.6 / 10")
            expect(ada.locator("td.passed").first).to_contain_text("2 / 2")
            ada.screenshot(path=shots / "feedback.png", full_page=True)

            response = ada.goto(alans_page)
            assert response is not None and response.status == 404
        finally:
            browser.close()


@needs_sandbox
@needs_browser
def test_the_staff_in_the_browser_mark_edit_the_rubric_answer_a_review_override_and_compare(served, tmp_path):
    """Set GRADEWRIGHT_SCREENSHOTS=docs/screenshots to refresh the staff's screenshots."""
    from playwright.sync_api import expect, sync_playwright

    url, passwords, _, _ = served
    shots = screenshots_folder(tmp_path)
    link = roster_links(served, tmp_path)["correct_projection"]
    assignment = "attention-not-explanation"
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            grace = browser.new_context().new_page()
            grace.goto(link)
            grace.fill("#id_new_password1", "correct horse battery")
            grace.fill("#id_new_password2", "correct horse battery")
            grace.click("text=Set my password")
            grace.click("text=Module 10 assignment: attention is not an explanation")
            grace.set_input_files("input[name=notebook]", str(KNOWN_NOTEBOOK))
            grace.get_by_role("button", name="Hand in").click()
            expect(grace.locator("text=Score:")).to_be_visible(timeout=120_000)
            submission_page = grace.url
            grace.select_option("#review select[name=question]", "explanation")
            grace.fill("#review textarea", "My explanation check failed; I think it is right.")
            grace.get_by_role("button", name="Send to the staff").click()
            expect(grace.locator("text=My explanation check failed")).to_be_visible()

            staff = browser.new_context().new_page()
            staff.goto(f"{url}/accounts/login/")
            staff.fill("input[name=username]", "instructor")
            staff.fill("input[name=password]", passwords["instructor"])
            staff.get_by_role("button", name="Sign in").click()
            staff.goto(f"{url}/staff/gradebook/{assignment}/")
            expect(staff.locator("h1")).to_contain_text("Gradebook")
            staff.screenshot(path=shots / "gradebook.png", full_page=True)

            # Hand grading: an item by its key, saved; then the item's points changed on the page.
            staff.goto(f"{url}/staff/marking/{assignment}/")
            with staff.expect_event("load"):  # its keys work once its script has run
                staff.click("a:has-text('Mark')")
            expect(staff.locator("#mark")).to_be_visible()
            staff.locator("body").press("1")
            expect(staff.locator('input[data-key="1"]')).to_be_checked()
            staff.get_by_role("button", name="Save", exact=True).click()
            expect(staff.locator("text=Current mark: 1")).to_be_visible()
            staff.screenshot(path=shots / "marking.png", full_page=True)
            staff.click("text=Edit the rubric")
            staff.fill("input[aria-label='points of item 1']", "0.5")
            staff.get_by_role("button", name="Save item 1").click()
            expect(staff.locator("[role=alert]").first).to_contain_text("saved; applied to 1 mark using it")
            expect(staff.locator("text=Current mark: 0.5")).to_be_visible()

            # The review request, answered; an automatic score overridden with a reason.
            staff.goto(f"{url}/staff/reviews/")
            staff.screenshot(path=shots / "reviews.png", full_page=True)
            staff.goto(submission_page)
            staff.fill("form[action*='/review'] textarea[name=message]", "Looked again: it checks the wrong axis.")
            staff.get_by_role("button", name="Answer").click()
            expect(staff.locator("text=Looked again: it checks the wrong axis.")).to_be_visible()
            form = staff.locator("form.override", has=staff.locator("input[value=explanation]"))
            form.locator("input[name=score]").fill("3")
            form.locator("input[name=reason]").fill("right idea, a tolerance too tight")
            form.locator("button").click()
            expect(staff.locator("form.override input[name=reason]").nth(1)).to_have_value(
                "right idea, a tolerance too tight"
            )
            staff.screenshot(path=shots / "submission-staff.png", full_page=True)

            # An exam's open question, marked by keyboard: a score, then Ctrl+Enter saves and moves on.
            staff.goto(f"{url}/staff/exams/")
            expect(staff.locator("h1")).to_contain_text("Exams")
            staff.screenshot(path=shots / "exams.png", full_page=True)
            with staff.expect_event("load"):  # its keys work once its script has run
                staff.click("a:has-text('Mark') >> nth=0")
            expect(staff.locator("text=Answer 1 of")).to_be_visible()
            staff.fill("#mark input[name=score]", "0.5")
            staff.fill("#mark textarea[name=comment]", "names the cause; no check proposed")
            staff.screenshot(path=shots / "exam-marking.png", full_page=True)
            with staff.expect_event("load", timeout=30_000):  # saved, then the next answer
                staff.locator("#mark textarea[name=comment]").press("Control+Enter")
            expect(staff.locator("text=Answer 2 of")).to_be_visible()
            staff.click("#previous")
            expect(staff.locator("#current")).to_have_text("0.5")

            for page_name in ("similarity", "statistics"):
                staff.goto(f"{url}/staff/{page_name}/{assignment}/")
                expect(staff.locator("h1")).to_contain_text(page_name.title())
                if page_name == "similarity":  # queued from the page; the worker computes it; the page reloads itself
                    staff.click("button:has-text('Compare again')")
                    expect(staff.locator("#report")).to_contain_text("% of their code", timeout=120_000)
                staff.screenshot(path=shots / f"{page_name}.png", full_page=True)

            # The student reads the answer and the overridden score with its reason.
            grace.goto(submission_page)
            expect(grace.locator("text=Looked again: it checks the wrong axis.")).to_be_visible()
            expect(grace.locator("text=right idea, a tolerance too tight")).to_be_visible()
        finally:
            browser.close()
