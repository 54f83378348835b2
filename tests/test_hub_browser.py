"""A real JupyterHub (DummyAuthenticator, SimpleLocalProcessSpawner, configurable-http-proxy from
npm) with the site registered as its service, started by the hub as README "On your JupyterHub" has
it: students sign in at the hub, reach the site through the hub's OAuth with no second password,
hand in from a cell with their server's hub token, and are refused another's submission."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .served import CHROMIUM, course_copy, free_port, launch_chromium, needs_browser, screenshots_folder

PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
needs_hub = pytest.mark.skipif(
    (shutil.which("jupyterhub") is None or not PROXY.exists()) and not os.environ.get("GRADEWRIGHT_REQUIRE_BROWSER"),
    reason="JupyterHub or configurable-http-proxy (npm, in node_modules/) is not installed: .ci/run installs them",
)
pytestmark = [needs_hub, pytest.mark.slow, pytest.mark.timeout(900)]
CORRECT = ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_fresh_notebook.ipynb"
ASSIGNMENT = "sequences-and-attention"
STUDENTS = ("ada", "alan", "katherine")
EXTENSION = ROOT / "jupyterlab_gradewright"
SOFTMAX = "def softmax(x, axis=-1): e = np.exp(x - np.max(x, axis=axis, keepdims=True)); return e / e.sum(axis=axis, keepdims=True)"
INSTRUCTOR = "grace"


def wait_for(url: str, what: str, process: subprocess.Popen, log: Path, seconds: float = 300) -> None:
    """Until ``url`` answers 200 (the proxy answers 404 until the hub has given it its routes), or a clear failure."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the hub ended ({process.returncode}) before {what} was up:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    pytest.fail(f"{what} ({url}) not up after {seconds:.0f} seconds:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def real_hub(tmp_path_factory):
    """The hub at its public address, with the site at /services/gradewright/: (the public address,
    a hub API token of a test service that may make users' tokens, the folder of users' homes)."""
    home = tmp_path_factory.mktemp("hub")
    course = course_copy(home)
    public, hub_api, proxy_api, site = (free_port() for _ in range(4))
    tester = secrets.token_hex(32)
    passed_on = {
        key: os.environ[key]
        for key in ("PATH", "PYTHONPATH", "LANG", "GRADEWRIGHT_REFERENCE_CACHE")
        if key in os.environ
    }
    # Users' servers load JupyterLab's Fetch/Check/Submit as `pip install` would put them: the built
    # extension where JupyterLab looks, and its server side enabled (the package's own files).
    labextensions = home / "jupyter" / "labextensions" / "jupyterlab-gradewright"
    shutil.copytree(EXTENSION / "labextension", labextensions)
    server_config = home / "jupyter-config" / "jupyter_server_config.d"
    server_config.mkdir(parents=True)
    for name in ("jupyterlab_gradewright.json", "nbgrader_off_for_students.json"):  # pyproject.toml's data files
        shutil.copy(EXTENSION / "jupyter-config" / name, server_config)
    servers_env = {
        **passed_on,
        "JUPYTER_PATH": str(home / "jupyter"),
        "JUPYTER_CONFIG_PATH": str(home / "jupyter-config"),
        "GRADEWRIGHT_URL": f"http://127.0.0.1:{public}/services/gradewright",
    }
    config = home / "jupyterhub_config.py"
    config.write_text(
        textwrap.dedent(f"""
        import sys
        c.JupyterHub.ip = "127.0.0.1"
        c.JupyterHub.port = {public}
        c.JupyterHub.hub_ip = "127.0.0.1"
        c.JupyterHub.hub_port = {hub_api}
        c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api}"
        c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
        c.JupyterHub.db_url = "sqlite:///{home}/jupyterhub.sqlite"
        c.JupyterHub.cookie_secret_file = "{home}/jupyterhub_cookie_secret"
        c.JupyterHub.pid_file = "{home}/jupyterhub.pid"
        c.JupyterHub.authenticator_class = "dummy"
        c.Authenticator.allow_all = True
        c.JupyterHub.spawner_class = "simple"
        c.SimpleLocalProcessSpawner.home_dir_template = "{home}/homes/{{username}}"
        c.Spawner.args = ["--allow-root"]  # the tests run as root; the spawner makes no system users
        c.Spawner.default_url = "/lab"
        c.Spawner.environment = {servers_env!r}
        c.JupyterHub.load_groups = {{"instructors": {{"users": [{INSTRUCTOR!r}]}}}}
        # README "On your JupyterHub": the site as a service the hub starts, its OAuth client
        # approved without a consent page, every user allowed to sign in to it.
        c.JupyterHub.services = [
            {{
                "name": "gradewright",
                "url": "http://127.0.0.1:{site}",
                "command": [sys.executable, "-m", "autograder", "--course", {str(course)!r}, "serve",
                            "--port", "{site}", "--workers", "1"],
                "environment": {passed_on!r},
                "oauth_no_confirm": True,
            }},
            {{"name": "tester", "api_token": {tester!r}}},
        ]
        c.JupyterHub.load_roles = [
            {{"name": "user", "scopes": ["self", "access:services!service=gradewright"]}},
            {{"name": "server", "scopes": ["users:activity!user", "access:servers!server",
                                          "access:services!service=gradewright"]}},
            {{"name": "tester", "services": ["tester"], "scopes": ["admin:users", "tokens", "admin:servers"]}},
        ]
    """)
    )
    (home / "roster.csv").write_text(
        "student_id,name,email\n" + "".join(f"{name},{name.title()},{name}@example.edu\n" for name in STUDENTS)
    )
    log = home / "hub.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTERHUB_", "AUTOGRADER_", "GRADEWRIGHT_DATABASE_URL"))
    }
    # The roster first, into the course's gradebook (the site's database), before the site starts.
    (course / ".gradewright").mkdir(mode=0o700)
    imported = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "roster",
            "import",
            str(home / "roster.csv"),
            "--gradebook",
            str(course / ".gradewright" / "gradebook.db"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert imported.returncode == 0, imported.stderr
    with log.open("w") as out:
        process = subprocess.Popen(
            ["jupyterhub", "-f", str(config)],
            cwd=home,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{public}"
        wait_for(f"{url}/hub/api/", "the hub", process, log)
        wait_for(f"{url}/services/gradewright/api/v1/openapi.json", "the site, as the hub's service", process, log)
        yield url, tester, home / "homes"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the proxy, the site and users' servers it started
        except ProcessLookupError:
            pass


def hub_token(url: str, tester: str, name: str) -> str:
    """A hub token of ``name``'s, as their server has in $JUPYTERHUB_API_TOKEN."""
    admin = {"Authorization": f"token {tester}"}
    user = httpx.post(f"{url}/hub/api/users/{name}", headers=admin, timeout=30)  # made if new (409 if there)
    assert user.status_code in {201, 409}, user.text[:300]
    made = httpx.post(
        f"{url}/hub/api/users/{name}/tokens", headers=admin, timeout=30, json={"note": "the test's", "expires_in": 3600}
    )
    assert made.status_code == 201, made.text[:300]
    return made.json()["token"]


def in_a_cell(code: str, url: str, token: str, user: str, home: Path, **extra: str) -> subprocess.CompletedProcess:
    """``code`` run as a notebook kernel on the user's server runs it: their hub token and name in
    the environment, the site's address from the hub's administrator (Spawner.environment)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTERHUB_", "AUTOGRADER_", "GRADEWRIGHT_DATABASE_URL"))
    }
    env.update(
        HOME=str(home),
        JUPYTERHUB_API_TOKEN=token,
        JUPYTERHUB_USER=user,
        GRADEWRIGHT_URL=f"{url}/services/gradewright",
        XDG_CONFIG_HOME=str(home / ".config"),
        **extra,
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=home, env=env)


@needs_sandbox
def test_a_student_hands_in_from_a_cell_with_the_hubs_token_and_another_student_is_refused_it(real_hub):
    url, tester, homes = real_hub
    ada, alan = hub_token(url, tester, "ada"), hub_token(url, tester, "alan")
    fetched = in_a_cell(f"from gradewright import fetch; print(fetch({ASSIGNMENT!r}))", url, ada, "ada", homes / "ada")
    assert fetched.returncode == 0, fetched.stderr
    notebook = Path(fetched.stdout.strip())
    assert notebook == homes / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    released = json.loads(notebook.read_text())
    assert released["metadata"]["gradewright"] == {"assignment": ASSIGNMENT}
    # The student's work: the answer cells edited (here, those of a known correct notebook).
    released["cells"] = json.loads(CORRECT.read_text())["cells"]
    notebook.write_text(json.dumps(released))
    again = in_a_cell(f"from gradewright import fetch; fetch({ASSIGNMENT!r})", url, ada, "ada", homes / "ada")
    assert again.returncode == 1 and again.stderr.strip().endswith(
        f"{notebook} exists already (your work?): kept; pass overwrite=True to replace it"
    )
    assert json.loads(notebook.read_text())["cells"] == released["cells"]
    submitted = in_a_cell(
        "from gradewright import submit; feedback = submit(); print(feedback); print(feedback.data['id'])",
        url,
        ada,
        "ada",
        homes / "ada",
        JPY_SESSION_NAME=str(notebook),
    )
    assert submitted.returncode == 0, submitted.stderr
    lines = submitted.stdout.splitlines()
    job_id = int(lines[-1])
    assert lines[0] == f"submission {job_id} of {ASSIGNMENT}: graded", submitted.stdout
    assert "Score: 10 / 10" in lines, submitted.stdout
    assert f"feedback page: {url}/services/gradewright/submissions/{job_id}/" in lines
    # The second student, with their own hub token: not the first's submission, nor posing as her.
    theirs = httpx.get(
        f"{url}/services/gradewright/api/v1/submissions/{job_id}",
        headers={"Authorization": f"token {alan}"},
        timeout=30,
    )
    assert theirs.status_code == 404 and theirs.json() == {"error": "no such submission"}
    posing = httpx.get(
        f"{url}/services/gradewright/api/v1/submissions/{job_id}",
        timeout=30,
        headers={"Authorization": f"token {alan}", "X-Gradewright-Hub-User": "ada"},
    )
    assert posing.status_code == 403 and "another user's, not 'ada''s" in posing.json()["error"]
    # A revoked token: refused (once the site's few seconds of memory of it have passed).
    admin = {"Authorization": f"token {tester}"}
    for token in httpx.get(f"{url}/hub/api/users/alan/tokens", headers=admin, timeout=30).json()["api_tokens"]:
        httpx.delete(f"{url}/hub/api/users/alan/tokens/{token['id']}", headers=admin, timeout=30)
    time.sleep(6)
    revoked = httpx.get(
        f"{url}/services/gradewright/api/v1/submissions", headers={"Authorization": f"token {alan}"}, timeout=30
    )
    assert revoked.status_code == 401 and "expired, was revoked" in revoked.json()["error"]
    refused = in_a_cell(
        "from gradewright import submit; submit()", url, alan, "alan", homes / "alan", JPY_SESSION_NAME=str(notebook)
    )
    assert (
        refused.returncode == 1
        and "gradewright.errors.GradewrightError: the hub does not accept this token" in refused.stderr
    )
    # Each refusal above is an answer, not an error: the site's output (in the hub's) carries no
    # traceback for them (the hub's 403 to a token check once wrote 30 lines there).
    output = (homes.parent / "hub.log").read_text(encoding="utf-8", errors="replace")
    assert f"job {job_id} graded" in output and "Traceback" not in output, output[-4000:]


def graded_hand_in(url: str, token: str) -> int:
    """The known correct notebook handed in through the API with a hub token, once graded: its id."""
    headers = {"Authorization": f"token {token}"}
    made = httpx.post(
        f"{url}/services/gradewright/api/v1/submissions",
        headers=headers,
        timeout=60,
        data={"assignment": ASSIGNMENT},
        files={"file": ("mine.ipynb", CORRECT.read_bytes())},
    )
    assert made.status_code == 201, made.text
    job = made.json()
    deadline = time.monotonic() + 300
    while job["state"] in {"queued", "grading"} and time.monotonic() < deadline:
        time.sleep(1)
        job = httpx.get(
            f"{url}/services/gradewright/api/v1/submissions/{job['id']}", headers=headers, timeout=30
        ).json()
    assert job["state"] == "graded", job
    return int(job["id"])


def sign_in_at_the_hub(page, url: str, name: str) -> None:
    """The hub's own sign-in page (DummyAuthenticator: any password), then the user's JupyterLab."""
    page.goto(f"{url}/hub/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", "anything")
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(f"{url}/user/{name}/lab**", timeout=240_000)


@needs_sandbox
@needs_browser
def test_hub_users_reach_the_site_through_the_hubs_oauth_with_their_roles(real_hub, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    assert CHROMIUM
    url, tester, _ = real_hub
    shots = screenshots_folder(tmp_path)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            ada = browser.new_context().new_page()
            sign_in_at_the_hub(ada, url, "ada")
            ada.goto(f"{url}/services/gradewright/")  # no second password: the hub's OAuth signs her in
            ada.wait_for_url(f"{url}/services/gradewright/assignments/", timeout=60_000)
            expect(ada.locator(f'a[href="/services/gradewright/assignments/{ASSIGNMENT}/"]')).to_be_visible()
            ada.screenshot(path=str(shots / "hub-site-signed-in.png"))
            # Her hand-in (with her hub token, as JupyterLab's Submit sends it): its page shows her
            # its feedback; the second student is answered 404, as for a submission that does not exist.
            own = graded_hand_in(url, hub_token(url, tester, "ada"))
            ada.goto(f"{url}/services/gradewright/submissions/{own}/")
            expect(ada.get_by_text("10 / 10").first).to_be_visible(timeout=30_000)
            ada.screenshot(path=str(shots / "hub-site-feedback.png"), full_page=True)
            alan = browser.new_context().new_page()
            sign_in_at_the_hub(alan, url, "alan")
            alan.goto(f"{url}/services/gradewright/assignments/")
            alan.wait_for_url(f"{url}/services/gradewright/assignments/", timeout=60_000)
            answer = alan.goto(f"{url}/services/gradewright/submissions/{own}/")
            assert answer is not None and answer.status == 404
            # The hub's instructors group: the site's instructor, who sees the gradebook.
            grace = browser.new_context().new_page()
            sign_in_at_the_hub(grace, url, INSTRUCTOR)
            answer = grace.goto(f"{url}/services/gradewright/staff/gradebook/{ASSIGNMENT}/")
            assert answer is not None and answer.status == 200
            denied = alan.goto(f"{url}/services/gradewright/staff/gradebook/{ASSIGNMENT}/")
            assert denied is not None and denied.status in {403, 404}
        finally:
            browser.close()


@needs_sandbox
@needs_browser
def test_in_jupyterlab_a_student_fetches_edits_checks_submits_and_sees_the_feedback(real_hub, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, tester, homes = real_hub
    shots = screenshots_folder(tmp_path)
    notebook = homes / "katherine" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context(viewport={"width": 1600, "height": 900})
            lab = context.new_page()
            sign_in_at_the_hub(lab, url, "katherine")
            expect(lab.locator(".jp-Launcher").first).to_be_visible(timeout=120_000)

            def fetch_from_the_palette() -> None:
                lab.keyboard.press("Control+Shift+C")
                lab.locator(".lm-CommandPalette-input").fill("Fetch an assignment")
                lab.keyboard.press("Enter")
                dialog = lab.locator(".jp-Dialog")
                # Offered by its title and due time (handlers.py _listed), not by its id.
                title = tomllib.loads((ASSIGNMENTS / ASSIGNMENT / "assignment.toml").read_text())["title"]
                offered = dialog.locator("option", has_text=f"{title} (").first.inner_text()
                dialog.locator("select").select_option(label=offered)
                dialog.get_by_role("button", name="OK").click()

            # Only Gradewright's tools: nbgrader (a dependency of the project) shows no menu or panel.
            expect(lab.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")).to_have_count(0)
            fetch_from_the_palette()
            panel = lab.locator(".jp-NotebookPanel").first
            expect(panel).to_be_visible(timeout=60_000)
            assert notebook.is_file()
            # The student's edit: softmax (the notebook's fifth cell, its first answer cell) answered.
            answer_cell = panel.locator(".jp-Notebook .jp-Cell").nth(4)
            answer_cell.locator(".cm-content").click()
            lab.keyboard.press("Control+A")
            lab.keyboard.type(SOFTMAX)
            toolbar = panel.locator(".jp-NotebookPanel-toolbar")
            expect(toolbar.get_by_text("Submit", exact=True)).to_be_visible()
            expect(toolbar.get_by_text("Validate", exact=True)).to_have_count(0)  # nbgrader's button
            toolbar.get_by_text("Check", exact=True).click()
            checked = lab.locator(".jp-Dialog")
            expect(checked.get_by_text("Public tests")).to_be_visible(timeout=180_000)
            expect(checked.locator(".jp-Dialog-body p").first).to_contain_text("softmax: ")
            checked.get_by_role("button", name="Ok").click()
            assert SOFTMAX in notebook.read_text()  # Check saved it first
            toolbar.get_by_text("Submit", exact=True).click()
            feedback = lab.locator(".jp-gradewright-feedback")
            expect(feedback.get_by_text("State: graded")).to_be_visible(timeout=300_000)
            expect(feedback.locator(".jp-gradewright-score")).to_contain_text("Score: ")
            softmax_row = feedback.locator("tr:not(.jp-gradewright-question-feedback)", has_text="softmax")
            expect(softmax_row).to_contain_text("2 / 2")  # her answer, graded
            expect(softmax_row).to_contain_text("passed")
            # Under each question that did not pass, what went wrong first (here a known mistake: the stub
            # still raising), then its failing checks as a list (issue #41).
            under = feedback.locator(".jp-gradewright-question-feedback").first
            expect(under.locator("p").first).to_contain_text("still raises NotImplementedError")
            expect(under.locator("li").first).to_contain_text("raised NotImplementedError")
            news = lab.get_by_role("button", name="No", exact=True)  # JupyterLab's offer of its news
            if news.is_visible():
                news.click()
            lab.screenshot(path=str(shots / "jupyterlab-feedback.png"))
            shown = feedback.locator(".jp-gradewright-score").inner_text()
            # Fetching again offers to keep the student's notebook, and keeps it.
            fetch_from_the_palette()
            expect(lab.get_by_text("Replace your notebook?")).to_be_visible(timeout=30_000)
            lab.get_by_role("button", name="Keep mine").click()
            assert SOFTMAX in notebook.read_text()
            # The panel's link: the submission's page on the site, through the hub's OAuth.
            with context.expect_page() as opened:
                feedback.get_by_role("link", name="Open the submission page").click()
            site = opened.value
            site.wait_for_url(f"{url}/services/gradewright/submissions/**", timeout=60_000)
            expect(site.get_by_text(shown.removeprefix("Score: ").split(" /")[0]).first).to_be_visible()
            job_id = int(site.url.rstrip("/").split("/")[-1])
            # A notebook not fetched from the course (no mark, a name of its own): Submit offers the
            # course's assignments, and hands it in for the one chosen.
            document = json.loads(notebook.read_text())
            document["metadata"].pop("gradewright", None)
            (homes / "katherine" / "my-copy.ipynb").write_text(json.dumps(document))
            lab.goto(f"{url}/user/katherine/lab/tree/my-copy.ipynb?reset")  # a workspace of this notebook alone
            copy_toolbar = lab.locator(".jp-NotebookPanel-toolbar:visible").first
            expect(copy_toolbar.get_by_text("Submit", exact=True)).to_be_visible(timeout=120_000)
            copy_toolbar.get_by_text("Submit", exact=True).click()
            which = lab.locator(".jp-Dialog")
            expect(which.get_by_text("Hand this notebook in for which assignment?")).to_be_visible(timeout=60_000)
            which.locator("select").select_option(ASSIGNMENT)
            which.get_by_role("button", name="OK").click()
            # Her graded hand-in counts now: the server's warning (a hand-in replaces it, even if it
            # scores lower) is shown first, and she hands in only once she confirms.
            warned = lab.locator(".jp-gradewright-warnings")
            expect(warned).to_contain_text("A hand-in now replaces", timeout=60_000)
            lab.get_by_role("button", name="Hand in anyway").click()
            expect(lab.locator(".jp-gradewright-feedback").last.get_by_text(f"of {ASSIGNMENT}").first).to_be_visible(
                timeout=60_000
            )
        finally:
            browser.close()
    # The second student, with their own hub token, is refused the first's submission.
    theirs = httpx.get(
        f"{url}/services/gradewright/api/v1/submissions/{job_id}",
        timeout=30,
        headers={"Authorization": f"token {hub_token(url, tester, 'ada')}"},
    )
    assert theirs.status_code == 404 and theirs.json() == {"error": "no such submission"}
