"""Accounts a newcomer can manage from the command line: `autograder accounts list` and `password`,
a second start that says the accounts exist, `login` without a terminal, `submit` to the server of
the last login, and a wrong assignment's name answered with the right ones."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import needs_sandbox
from .served import PARTIAL, autograder, free_port

pytestmark = pytest.mark.timeout(300)


@pytest.mark.slow
def test_accounts_are_listed_and_a_password_is_set(served):
    url, passwords, course_copy, env = served
    listed = autograder("--course", course_copy, "accounts", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.startswith("│")]
    assert any("instructor" in row and "Instructor" in row for row in rows), listed.stdout
    assert any(row.split("│")[1].strip() == "student" and "Student" in row for row in rows), listed.stdout
    assert "never" in listed.stdout  # nobody has signed in yet on this copy

    short = autograder(
        "--course", course_copy, "accounts", "password", "student", "--password-stdin", input="abc\n", env=env
    )
    assert short.returncode == 2 and "too short" in short.stderr and len(short.stderr.splitlines()) == 1
    unknown = autograder(
        "--course",
        course_copy,
        "accounts",
        "password",
        "nobody",
        "--password-stdin",
        input="a long new password\n",
        env=env,
    )
    assert unknown.returncode == 2 and "no account named 'nobody'" in unknown.stderr

    old = autograder(
        "login",
        "--server",
        url,
        "--username",
        "student",
        "--password-stdin",
        input=passwords["student"] + "\n",
        env=env,
    )
    assert old.returncode == 0, old.stderr
    changed = autograder(
        "--course",
        course_copy,
        "accounts",
        "password",
        "student",
        "--password-stdin",
        input="a long new password\n",
        env=env,
    )
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.strip() == "student: password set; its API tokens and sessions ended"
    # The token made with the old password ends with it.
    ended = autograder("submit", PARTIAL, "--assignment", "sequences-and-attention", "--no-wait", env=env)
    assert ended.returncode == 2 and ended.stderr.startswith("autograder: "), ended.stderr
    again = autograder(
        "login",
        "--server",
        url,
        "--username",
        "student",
        "--password-stdin",
        input=passwords["student"] + "\n",
        env=env,
    )
    assert again.returncode == 2 and again.stderr.strip().endswith("wrong username or password")
    new = autograder(
        "login", "--server", url, "--username", "student", "--password-stdin", input="a long new password\n", env=env
    )
    assert new.returncode == 0, new.stderr


@needs_sandbox
def test_submit_goes_to_the_last_login_and_a_wrong_name_lists_the_assignments(served):
    url, passwords, course_copy, env = served
    login = autograder(
        "login",
        "--server",
        url,
        "--username",
        "instructor",
        "--password-stdin",
        input=passwords["instructor"] + "\n",
        env=env,
    )
    assert login.returncode == 0, login.stderr
    wrong = autograder("submit", PARTIAL, "--assignment", "sequences-and-attentoin", env=env)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().endswith(
        "no assignment named 'sequences-and-attentoin'; the course's assignments: attention-not-explanation, "
        "sequences-and-attention"
    ), wrong.stderr
    handed = autograder("submit", PARTIAL, "--assignment", "sequences-and-attention", "--no-wait", env=env)
    assert handed.returncode == 0, handed.stderr
    assert f"({url}/submissions/" in handed.stdout


def test_login_without_a_terminal_says_what_to_pass(served, tmp_path):
    url, _, _, env = served
    no_password = autograder("login", "--server", url, "--username", "student", stdin=subprocess.DEVNULL, env=env)
    assert no_password.returncode == 2
    assert no_password.stderr.strip() == (
        "autograder: no terminal to ask for the password on; pipe it with --password-stdin"
    )
    no_name = autograder("login", "--server", url, "--password-stdin", stdin=subprocess.DEVNULL, env=env)
    assert (
        no_name.returncode == 2 and no_name.stderr.strip() == "autograder: no terminal to ask on; pass --username NAME"
    )
    nowhere = autograder("submit", PARTIAL, "--assignment", "x", env={**env, "XDG_CONFIG_HOME": str(tmp_path)})
    assert nowhere.returncode == 2
    assert nowhere.stderr.strip() == "autograder: not logged in to any server: run autograder login --server URL"


def test_a_password_typed_twice_must_match(monkeypatch):
    from commands import autograder as cli
    from service.errors import ServiceError

    typed = iter(["first one here", "second one here"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(typed))
    with pytest.raises(ServiceError, match="the two passwords differ; nothing changed"):
        cli._password(from_stdin=False, confirm=True)


def test_a_second_start_says_the_accounts_exist_and_how_to_reset_one(served):
    _, _, course_copy, env = served
    port = free_port()
    second = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(course_copy),
            "serve",
            "--port",
            str(port),
            "--workers",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        first = second.stdout.readline()
    finally:
        second.terminate()
        second.wait(timeout=30)
    assert first.strip() == (
        "2 accounts exist already: `autograder accounts list` lists them, "
        "`autograder accounts password USER` sets a new password"
    ), first
