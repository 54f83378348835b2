"""Empty answers in hand grading (issue #40): an answer left blank or as the released notebook gave it
is never offered one by one, counted to mark or grouped; the marking list's one button gives exactly
those 0 with a comment, each a mark like any other, and only the staff may press it. And a group's
save tells of a member another grader marked since the page was read, as the single page does."""

from __future__ import annotations

import html
import re
import uuid

import pytest
from django.test import Client

from gradebook.marking.empty_answers import NO_ANSWER, is_empty_answer
from service.accounts.models import Member
from service.core.access import assignments, book

from .served import student

pytestmark = pytest.mark.timeout(120)
HAND = "attention-not-explanation"
MARKING = f"/staff/marking/{HAND}/"


def test_the_rule_blank_or_the_starter_text_in_every_cell():
    starters = frozenset({"YOUR ANSWER HERE", "Write here."})
    assert is_empty_answer(None) and is_empty_answer({}) and is_empty_answer({"a": " \n\t"})
    assert is_empty_answer({"a": "\nYOUR ANSWER HERE  ", "b": ""}, starters)
    assert is_empty_answer({"a": "Write here.", "b": "YOUR ANSWER HERE"}, starters)
    assert not is_empty_answer({"a": "YOUR ANSWER HERE", "b": "Artefacts."}, starters)
    assert not is_empty_answer({"a": "YOUR ANSWER HERE, edited"}, starters)
    assert not is_empty_answer({"a": "YOUR ANSWER HERE"})  # a starter only where the notebook has it


@pytest.fixture
def answered():
    """Four students' latest answers to the hand-graded question, in this order: written, blank, the
    released notebook's text, and the first written one with a misspelling (one group with it under the
    misspelling rule, at any threshold, and with no other answer: the tag is theirs); none marked."""
    from gradebook.grades import latest_submissions
    from gradebook.models import Mark, Result

    from .course_data import seed

    tag = uuid.uuid4().hex[:8]
    seeded = seed(assignments()[HAND], 4, prefix=f"e{tag}-", accounts=False)
    texts = [f"The pairs are artefacts {tag}.", "  \n", "YOUR ANSWER HERE", f"the pairs are artefatcs {tag}"]
    latest = latest_submissions(book(), HAND)
    ids = []
    for student_id, text in zip(seeded.students, texts, strict=True):
        ids.append(latest[student_id].id)
        Result.objects.filter(submission=latest[student_id], question_id="written").update(
            answers={"written_link": text}
        )
    Mark.objects.filter(student__student_id__in=seeded.students).delete()  # a fresh start: none marked
    return seeded.students, ids, tag


def _post(client: Client, url: str, page: str, **fields):
    client.get(page)  # sets the CSRF cookie, as a browser's visit does
    return client.post(url, {**fields, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def _group_pages(client: Client, url: str) -> list[str]:
    """Every group's page the group page at ``url`` lists, largest first."""
    first = client.get(url).content.decode()
    links = re.findall(r'<li class="list-inline-item"><a href="([^"]+)"', first)
    return [first] + [client.get(html.unescape(link)).content.decode() for link in links[1:]]


def _to_mark(page: str) -> int:
    row = re.search(r"<tr><td>[^<]*</td><td>(\d+)</td><td>(\d+)</td>", page)
    assert row, page
    return int(row.group(2))


def test_empty_answers_leave_the_queue_and_the_button_gives_exactly_them_0(answered):
    from gradebook.models import Mark

    students, (written, blank, starter, other) = answered[0], answered[1]
    ta_user, ta = student(Member.TA)

    # Not offered one by one: from the written answer, next skips the blank and the starter text.
    page = ta.get(f"{MARKING}written/{written}/").content.decode()
    assert f'href="{MARKING}written/{other}/" id="next"' in page
    assert f'href="{MARKING}written/{written}/" id="previous"' in ta.get(f"{MARKING}written/{other}/").content.decode()
    saved = _post(ta, f"{MARKING}written/{written}/", MARKING, rubric=["artefacts"], adjustment="0", then="next")
    assert saved["Location"] == f"{MARKING}written/{other}/"  # save and next: past the empty ones
    start = ta.get(f"{MARKING}written/")["Location"]
    assert f"/{blank}/" not in start and f"/{starter}/" not in start
    # Nor grouped: no group's page has them, and the group pages say so.
    groups = _group_pages(ta, f"/staff/groups/{HAND}/written/")
    assert all("empty answers left out" in page for page in groups)
    ours = [page for page in groups if f'value="{written}"' in page]
    assert len(ours) == 1 and f'value="{other}"' in ours[0]  # a misspelling apart: one group
    assert not any(f'value="{blank}"' in page or f'value="{starter}"' in page for page in groups)

    # Listed on the marking list, with links, and one button for them (a page read before the click).
    index = ta.get(MARKING).content.decode()
    assert re.search(r"\d+ answers are empty", index) and re.search(r"Give the \d+ empty answers 0", index)
    for empty in (blank, starter):
        assert f'href="{MARKING}written/{empty}/"' in index and f'name="answers" value="{empty}"' in index
    assert f'name="answers" value="{written}"' not in index and f'name="answers" value="{other}"' not in index
    to_mark = _to_mark(index)

    # Refused: another student, a visitor not signed in, and a post without the page's CSRF token.
    url = f"{MARKING}written/empty/"
    _, outsider = student()
    assert _post(outsider, url, "/assignments/", answers=[blank, starter]).status_code in (403, 404)
    assert Client().post(url, {"answers": [blank]})["Location"].startswith("/accounts/login/")
    assert ta.post(url, {"answers": [blank]}).status_code == 403
    assert not Mark.objects.filter(student__student_id__in=students).exclude(student__student_id=students[0]).exists()

    # The button: exactly the empty ones get 0 with the comment (a written answer posted is left out).
    done = _post(ta, url, MARKING, answers=[blank, starter, other])
    assert done["Location"] == MARKING
    marks = {m.student.student_id: m for m in Mark.objects.filter(student__student_id__in=students)}
    assert set(marks) == {students[0], students[1], students[2]}  # the written one marked by hand above
    for given in (marks[students[1]], marks[students[2]]):
        assert (given.score, given.rubric, given.comment, given.marked_by) == (0.0, [], NO_ANSWER, ta_user.username)
    after = ta.get(MARKING).content.decode()
    assert "empty answers given 0" in after
    assert _to_mark(after) == to_mark  # never counted to mark: giving them 0 changes nothing there
    assert f'name="answers" value="{blank}"' not in after and f'href="{MARKING}written/{blank}/"' in after

    # Each is still an answer of its own: opened from the list, and marked again by hand.
    single = ta.get(f"{MARKING}written/{starter}/").content.decode()
    assert "An empty answer, not in the queue" in single and "YOUR ANSWER HERE" in single
    _post(ta, f"{MARKING}written/{starter}/", MARKING, rubric=["artefacts"], comment="found it", then="stay")
    assert Mark.objects.get(student__student_id=students[2], question_id="written").comment == "found it"


def test_a_group_save_tells_of_a_member_another_grader_marked_meanwhile(answered):
    from gradebook.models import Mark

    students, (written, _, _, other), tag = answered
    _, first = student(Member.TA)
    second_user, second = student(Member.INSTRUCTOR)
    url = f"/staff/groups/{HAND}/written/"
    page = next(page for page in _group_pages(first, url) if f'value="{written}"' in page)  # other's too
    seen = re.findall(r'name="seen" value="([^"]*)"', page)
    assert f"{written} " in seen and f"{other} " in seen  # neither marked when the page was read
    # Meanwhile, the other grader marks one of them on the single-answer page.
    _post(second, f"{MARKING}written/{written}/", MARKING, rubric=["baseline"], comment="mine", then="stay")
    saved = _post(
        first, url, url, members=[written, other], seen=seen, rubric=["artefacts"], adjustment="0", comment="group"
    )
    told = first.get(saved["Location"]).content.decode()
    assert told.count("your mark replaced theirs") == 1 and f"{second_user.username} had marked answer" in told
    assert Mark.objects.get(student__student_id=students[0], question_id="written").comment == "group"
    # A page read after that save: nothing to tell.
    again = next(page for page in _group_pages(first, url) if f'value="{written}"' in page)
    seen = re.findall(r'name="seen" value="([^"]*)"', again)
    saved = _post(first, url, url, members=[written], seen=seen, rubric=["baseline"], adjustment="0", comment="2")
    assert "your mark replaced theirs" not in first.get(saved["Location"]).content.decode()
