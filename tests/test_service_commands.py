"""The commands against the real `autograder serve`: `login` and `submit` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import ROOT, needs_sandbox
from .served import PARTIAL, autograder

# A job another test left is never graded or counted here; a served site of the module's own: slow.
pytestmark = [pytest.mark.usefixtures("empty_queue"), pytest.mark.slow]


@needs_sandbox
def test_serve_login_and_submit_through_the_commands(served):
    url, passwords, course_copy, env = served
    login = autograder(
        "login",
        "--server",
        url,
        "--username",
        "student",
        "--password-stdin",
        input=passwords["student"] + "\n",
        env=env,
    )
    assert login.returncode == 0, login.stderr
    saved = Path(env["XDG_CONFIG_HOME"]) / "gradewright" / "servers.json"
    assert oct(saved.stat().st_mode & 0o777) == "0o600" and json.loads(saved.read_text())[url]["token"]
    submitted = autograder("submit", PARTIAL, "--assignment", "sequences-and-attention", "--server", url, env=env)
    assert submitted.returncode == 0, submitted.stderr
    assert (
        "graded" in submitted.stdout and "score: 7.38 / 10" in submitted.stdout
    )  # as the pages round it (course/wording.py)
    assert "attention: 0.38 / 3 partial" in submitted.stdout
    again = ("submit", ROOT / "README.md", "--assignment", "sequences-and-attention", "--server", url)
    warned = autograder(*again, env=env)  # a graded hand-in stands: the site's warning comes first
    assert warned.returncode == 1 and "nothing was handed in" in warned.stdout + warned.stderr
    refused = autograder(*again, "--anyway", env=env)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("hand in a notebook (.ipynb) or a Python file (.py)")
    wrong = autograder(
        "login", "--server", url, "--username", "instructor", "--password-stdin", input="nope\n", env=env
    )
    instructor = autograder(
        "login",
        "--server",
        url,
        "--username",
        "instructor",
        "--password-stdin",
        input=passwords["instructor"] + "\n",
        env=env,
    )
    assert instructor.returncode == 0, instructor.stderr
    assert wrong.returncode == 2 and wrong.stderr.strip().endswith("wrong username or password")
    assert (course_copy / ".gradewright" / "gradebook.db").is_file()


def test_the_running_site_sees_an_edited_due_date(served):
    """The site reads course.toml and assignment.toml again when they change, as the worker does per
    job: a due date edited under the running site is the one its pages and API give at once."""
    import httpx

    url, passwords, course_copy, _ = served
    token = httpx.post(
        f"{url}/api/v1/token", data={"username": "student", "password": passwords["student"]}, timeout=60
    ).json()

    def due() -> str | None:
        listed = httpx.get(
            f"{url}/api/v1/assignments", headers={"Authorization": f"Token {token['token']}"}, timeout=60
        )
        return {row["name"]: row["due"] for row in listed.json()["assignments"]}["sequences-and-attention"]

    manifest = course_copy / "assignments" / "sequences-and-attention" / "assignment.toml"
    before = manifest.read_text()
    assert not (due() or "").startswith("2031-05-17")  # read once already: what the site had kept
    try:
        manifest.write_text("due = 2031-05-17T09:00:00Z\n" + before)
        assert (due() or "").startswith("2031-05-17T")
    finally:
        manifest.write_text(before)
    assert not (due() or "").startswith("2031-05-17")
