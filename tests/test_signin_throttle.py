"""Sign-in throttling (service/accounts/throttle.py, django-axes): a (username, address) pair is locked after 10
failures, an address alone only after 100 across usernames, a username alone never; a lock holds
even against the right password and ends 15 minutes after the last failure. Each rule through the
sign-in page and the API's token endpoint (Django's test client, an address per client), then the
whole over HTTP: the running service behind a proxy, `autograder login`, and the page in a browser."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client, override_settings

from service.accounts.throttle import ADDRESS_REFUSED, PAIR_REFUSED
from service.settings import ADDRESS_FAILURE_LIMIT, COOL_OFF, PAIR_FAILURE_LIMIT

from .served import commands_env, course_copy, launch_chromium, needs_browser, serve

PASSWORD = "a long password 123"
WRONG_LOGIN = "Please enter a correct username and password"


@pytest.fixture(autouse=True)
def no_failed_sign_ins() -> Iterator[None]:
    """Each test's failures are its own; and a fast password hasher, as each try hashes a password
    (even for a username that does not exist) and these tests make hundreds of tries."""
    AccessAttempt.objects.all().delete()
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield
    AccessAttempt.objects.all().delete()


def account() -> str:
    name = f"t{uuid.uuid4().hex[:10]}"
    User.objects.create_user(name, password=PASSWORD)
    return name


def page(username: str, password: str, address: str, **headers: str):
    """The sign-in page's form, posted from ``address``."""
    return Client(REMOTE_ADDR=address, **headers).post("/accounts/login/", {"username": username, "password": password})


def token(username: str, password: str, address: str):
    """``autograder login``'s request, from ``address``."""
    return Client(REMOTE_ADDR=address).post("/api/v1/token", {"username": username, "password": password})


def signed_in(answer) -> bool:
    return answer.status_code == 302 and answer["Location"] == "/assignments/"


def refused_on_the_page(answer, why: str) -> bool:
    text = answer.content.decode()
    return answer.status_code == 429 and f'<p class="error" role="alert">{why}</p>' in text and "<form" in text


def refused_on_the_api(answer, why: str) -> bool:
    return (
        answer.status_code == 429 and answer["Content-Type"] == "application/json" and answer.json() == {"error": why}
    )


def fail(username: str, address: str, times: int) -> None:
    for _ in range(times):
        answer = page(username, "not the password", address)
        assert answer.status_code == 200 and WRONG_LOGIN in answer.content.decode()


def lock(username: str, address: str) -> None:
    """The pair's ten failures: the tenth is refused as locked."""
    fail(username, address, PAIR_FAILURE_LIMIT - 1)
    assert refused_on_the_page(page(username, "not the password", address), PAIR_REFUSED)


def test_a_pair_is_locked_after_ten_failures_even_against_the_right_password():
    alice = account()
    fail(alice, "10.0.1.1", PAIR_FAILURE_LIMIT - 1)
    assert signed_in(page(alice, PASSWORD, "10.0.1.1"))  # nine typos, then the password: in
    AccessAttempt.objects.all().delete()
    fail(alice, "10.0.1.1", PAIR_FAILURE_LIMIT - 1)
    assert refused_on_the_page(page(alice, "not the password", "10.0.1.1"), PAIR_REFUSED)  # the tenth
    assert refused_on_the_page(page(alice, PASSWORD, "10.0.1.1"), PAIR_REFUSED)  # guessing cannot go on
    assert refused_on_the_api(token(alice, PASSWORD, "10.0.1.1"), PAIR_REFUSED)  # on no path


def test_a_sign_in_forgets_the_students_own_typos():
    alice = account()
    fail(alice, "10.0.2.1", PAIR_FAILURE_LIMIT - 1)
    assert signed_in(page(alice, PASSWORD, "10.0.2.1"))
    fail(alice, "10.0.2.1", PAIR_FAILURE_LIMIT - 1)  # nine more: not ten in a row, so not locked
    assert signed_in(page(alice, PASSWORD, "10.0.2.1"))


def test_guessing_a_students_password_never_locks_them_out_from_their_own_address():
    alice = account()
    fail(alice, "203.0.113.66", PAIR_FAILURE_LIMIT - 1)
    assert refused_on_the_page(page(alice, "still guessing", "203.0.113.66"), PAIR_REFUSED)
    for _ in range(20):  # the attacker goes on: still only their own pair, longer
        assert refused_on_the_api(token(alice, "guess", "203.0.113.66"), PAIR_REFUSED)
    assert signed_in(page(alice, PASSWORD, "10.0.3.5"))
    assert token(alice, PASSWORD, "10.0.3.5").status_code == 201


def test_a_class_behind_one_nat_making_typos_is_not_locked():
    nat = "10.0.4.1"
    careless = account()
    lock(careless, nat)  # one student locks themselves out, and only themselves
    assert refused_on_the_page(page(careless, PASSWORD, nat), PAIR_REFUSED)
    students = [account() for _ in range(29)]
    for name in students:
        fail(name, nat, 3)
    assert sum(attempt.failures_since_start for attempt in AccessAttempt.objects.all()) == ADDRESS_FAILURE_LIMIT - 3
    for name in students:
        assert signed_in(page(name, PASSWORD, nat)), name
    assert token(account(), PASSWORD, nat).status_code == 201


def test_an_address_is_locked_at_a_hundred_failures_across_usernames():
    sprayer, student = "198.51.100.9", account()
    for number in range(ADDRESS_FAILURE_LIMIT - 1):  # one guess each at many usernames, real or not
        assert page(f"user{number}", "Spring2026!", sprayer).status_code == 200
    assert signed_in(page(student, PASSWORD, sprayer))  # 99: not yet
    assert refused_on_the_page(page("user-last", "Spring2026!", sprayer), ADDRESS_REFUSED)  # the hundredth
    assert refused_on_the_page(page(account(), PASSWORD, sprayer), ADDRESS_REFUSED)  # then everyone there
    assert refused_on_the_api(token(student, PASSWORD, sprayer), ADDRESS_REFUSED)
    assert signed_in(page(student, PASSWORD, "10.0.5.2"))  # and no one elsewhere


def test_a_lock_ends_fifteen_minutes_after_the_last_failure():
    alice, other = account(), account()
    lock(alice, "10.0.6.1")
    for number in range(ADDRESS_FAILURE_LIMIT - PAIR_FAILURE_LIMIT):
        page(f"nobody{number}", "guess", "10.0.6.1")
    assert refused_on_the_page(page(other, PASSWORD, "10.0.6.1"), ADDRESS_REFUSED)

    def last_failure_ago(ago: timedelta) -> None:
        AccessAttempt.objects.update(attempt_time=F("attempt_time") - ago)

    last_failure_ago(COOL_OFF - timedelta(minutes=1))
    for _ in range(5):  # tries while locked: refused, the password unchecked, and the lock not made longer
        assert refused_on_the_page(page(alice, PASSWORD, "10.0.6.1"), ADDRESS_REFUSED)  # 14 minutes: locked still
    AccessAttempt.objects.exclude(username=alice).update(attempt_time=F("attempt_time") - timedelta(minutes=2))
    assert refused_on_the_page(page(alice, PASSWORD, "10.0.6.1"), PAIR_REFUSED)  # the address's ended, not the pair's
    assert signed_in(page(other, PASSWORD, "10.0.6.1"))
    last_failure_ago(timedelta(minutes=2))
    assert signed_in(page(alice, PASSWORD, "10.0.6.1"))


def test_the_api_token_endpoint_is_throttled_alike_with_a_json_error():
    alice, bob = account(), account()
    for _ in range(PAIR_FAILURE_LIMIT - 1):
        wrong = token(alice, "guess", "10.0.7.1")
        assert wrong.status_code == 401 and wrong.json() == {"error": "wrong username or password"}
    assert refused_on_the_api(token(alice, "guess", "10.0.7.1"), PAIR_REFUSED)
    assert refused_on_the_api(token(alice, PASSWORD, "10.0.7.1"), PAIR_REFUSED)
    assert refused_on_the_page(page(alice, PASSWORD, "10.0.7.1"), PAIR_REFUSED)  # one count for both paths
    assert token(bob, PASSWORD, "10.0.7.1").status_code == 201
    assert token(alice, PASSWORD, "10.0.7.2").status_code == 201


def test_an_address_in_x_forwarded_for_is_not_believed_by_the_site():
    alice = account()
    for number in range(PAIR_FAILURE_LIMIT):  # a new "address" every try: the connection's is what counts
        page(alice, "guess", "10.0.8.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{number}")
    assert refused_on_the_page(page(alice, PASSWORD, "10.0.8.1", HTTP_X_FORWARDED_FOR="192.0.2.200"), PAIR_REFUSED)


@pytest.mark.parametrize("username", ["x" * 5000, ""], ids=["5000 characters", "empty"])
def test_a_malformed_username_is_a_wrong_sign_in_not_an_error(username):
    answer = token(username, "guess", "10.0.9.1")
    assert answer.status_code == 401 and answer.json() == {"error": "wrong username or password"}
    assert page(username, "guess", "10.0.9.1").status_code == 200


def test_a_username_with_a_nul_is_refused_before_it_is_tried():
    """No database keeps a NUL in text: the site refuses it before any view (service/core/boundary.py)."""
    answer = token("nul\0byte", "guess", "10.0.9.1")
    assert answer.status_code == 400 and answer.json() == {"error": "a NUL character is in the address or a field"}
    assert page("nul\0byte", "guess", "10.0.9.1").status_code == 400
    assert not AccessAttempt.objects.exists()  # not counted: nothing was tried


@pytest.mark.parametrize("proxy", ["", "10.9.9.9"])
def test_waitress_believes_the_forwarded_headers_of_the_named_proxy_only(monkeypatch, proxy):
    """`autograder serve`'s waitress: from GRADEWRIGHT_TRUSTED_PROXY, the client's address and
    X-Forwarded-Proto (which GRADEWRIGHT_HTTPS needs) pass; from anyone else, or with no proxy
    named, neither does."""
    from waitress.server import create_server

    from service.server import proxy_options

    seen: dict = {}

    def site(environ, start_response):
        seen.update(environ)
        start_response("200 OK", [])
        return [b""]

    monkeypatch.setenv("GRADEWRIGHT_TRUSTED_PROXY", proxy)
    server = create_server(site, host="127.0.0.1", port=0, **proxy_options())
    try:
        for peer in ("10.9.9.9", "10.9.9.10"):
            seen.clear()
            forwarded = {"HTTP_X_FORWARDED_FOR": "203.0.113.5", "HTTP_X_FORWARDED_PROTO": "https"}
            server.application({"REMOTE_ADDR": peer, "wsgi.url_scheme": "http", **forwarded}, lambda *_: None)
            believed = peer == proxy
            assert seen["REMOTE_ADDR"] == ("203.0.113.5" if believed else peer)
            assert seen.get("HTTP_X_FORWARDED_PROTO") == ("https" if believed else None)
    finally:
        server.close()


# The running service, over HTTP, behind a proxy: the test is the proxy (127.0.0.1), and says which
# client each request is from in X-Forwarded-For, as a TLS-terminating proxy does.


@pytest.fixture(scope="module")
def behind_a_proxy(tmp_path_factory) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """``autograder serve`` (no workers: nothing is graded here) trusting 127.0.0.1 as its proxy:
    (its address, the demo accounts' passwords, the environment for commands)."""
    home = tmp_path_factory.mktemp("throttle")
    env = commands_env(home, GRADEWRIGHT_TRUSTED_PROXY="127.0.0.1")
    # The log is a file, not a pipe: axes logs every failure, and no one reads a pipe.
    with serve(course_copy(home), env, home / "serve.log", workers=0) as site:
        assert set(site.passwords) == {"instructor", "student"}, site.log.read_text()
        yield site.url, site.passwords, env


def forwarded_token(url: str, username: str, password: str, client: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": client} if client else {}
    return httpx.post(
        f"{url}/api/v1/token", data={"username": username, "password": password}, headers=headers, timeout=60
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_running_service_throttles_by_the_address_its_proxy_forwards(behind_a_proxy):
    url, passwords, env = behind_a_proxy
    for _ in range(PAIR_FAILURE_LIMIT - 1):
        assert forwarded_token(url, "student", "guess", "203.0.113.7").status_code == 401
    tenth = forwarded_token(url, "student", "guess", "203.0.113.7")
    assert tenth.status_code == 429 and tenth.json() == {"error": PAIR_REFUSED}
    assert forwarded_token(url, "student", passwords["student"], "203.0.113.7").status_code == 429
    assert forwarded_token(url, "student", passwords["student"], "203.0.113.8").status_code == 201  # elsewhere: in
    assert forwarded_token(url, "student", passwords["student"]).status_code == 201  # the proxy's own address


@pytest.mark.timeout(300)
def test_sixteen_guesses_at_once_get_the_answers_sixteen_one_by_one_would(behind_a_proxy):
    """The running service's eight threads take a burst of guesses together; the pair's tries are
    made one after another, so nine are checked and the rest refused, as one by one."""
    url, passwords, env = behind_a_proxy
    start = threading.Barrier(16)

    def guess(_: int) -> int:
        start.wait(timeout=60)
        return forwarded_token(url, "student", "guess", "203.0.113.50").status_code

    with ThreadPoolExecutor(16) as pool:
        statuses = sorted(pool.map(guess, range(16)))
    assert statuses == [401] * (PAIR_FAILURE_LIMIT - 1) + [429] * (16 - PAIR_FAILURE_LIMIT + 1)
    # Ten passwords were checked, not sixteen: a try while locked is refused before its password is.
    served = Path(env["XDG_CONFIG_HOME"]).parent / "course" / ".gradewright" / "gradebook.db"
    with sqlite3.connect(served) as database:
        (checked,) = database.execute(
            "SELECT failures_since_start FROM axes_accessattempt WHERE username = 'student' AND ip_address = ?",
            ["203.0.113.50"],
        ).fetchone()
    assert checked == PAIR_FAILURE_LIMIT
    assert forwarded_token(url, "student", passwords["student"], "203.0.113.50").status_code == 429


def autograder_login(url: str, username: str, password: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", "login", "--server", url, "--username", username, "--password-stdin"],
        input=password + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
@needs_browser
def test_a_locked_student_reads_why_in_autograder_login_and_on_the_page(behind_a_proxy, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, passwords, env = behind_a_proxy
    for _ in range(PAIR_FAILURE_LIMIT):  # from the proxy's own address, as the browser and the command are
        forwarded_token(url, "student", "guess")
    login = autograder_login(url, "student", passwords["student"], env)
    assert login.returncode == 2 and login.stderr.strip().endswith(PAIR_REFUSED), login.stderr
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            tab = browser.new_page()
            tab.goto(f"{url}/accounts/login/")
            tab.fill("input[name=username]", "student")
            tab.fill("input[name=password]", passwords["student"])
            tab.get_by_role("button", name="Sign in").click()
            expect(tab.locator("[role=alert]")).to_have_text(PAIR_REFUSED)
            expect(tab.locator("h1")).to_have_text("Sign in")
            tab.screenshot(path=tmp_path / "locked.png")
            # The instructor, at the same address, signs in.
            tab.fill("input[name=username]", "instructor")
            tab.fill("input[name=password]", passwords["instructor"])
            tab.get_by_role("button", name="Sign in").click()
            expect(tab.locator("h1")).to_have_text("Assignments")
        finally:
            browser.close()
    assert autograder_login(url, "instructor", passwords["instructor"], env).returncode == 0
    assert Path(env["XDG_CONFIG_HOME"], "gradewright", "servers.json").is_file()
