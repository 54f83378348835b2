"""``fetch``, ``check`` and ``submit`` from a notebook cell, through the service's API (service/handin/api.py).

The server: ``server=``, else ``$GRADEWRIGHT_URL`` (a hub's administrator sets it for every user's
server: README "On your JupyterHub"), else the server of the last ``autograder login``. The token:
on a JupyterHub the server's own hub token, ``$JUPYTERHUB_API_TOKEN``, sent as JupyterHub's
``Authorization: token ...`` with the hub username it runs as (``$JUPYTERHUB_USER``), which the
service checks with the hub; elsewhere the token ``autograder login`` saved for that server.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from autograder.environment import is_set, read
from autograder.reports.summary import question_score as shown_question_score
from autograder.reports.summary import score_summary

from .errors import GradewrightError, HandInWarned, NotebookExists, Unreachable, WhichAssignment

WAIT_SECONDS = 600  # how long submit() waits for its feedback, and check() for its practice checks
# A request may take a minute (a notebook's upload on a slow link), but a server that does not answer
# the connection at all (a machine that is off, a blocked port) is said to be unreachable in seconds:
# check() and JupyterLab's Check would otherwise hold the student a minute before the practice checks' line.
TIMEOUT = httpx.Timeout(60, connect=5)
HUB_USER_HEADER = "X-Gradewright-Hub-User"  # service/accounts/hub.py CLAIMED_USER_HEADER


@dataclass
class Connection:
    server: str
    headers: dict[str, str]

    def call(self, method: str, path: str, **options: Any) -> httpx.Response:
        url = f"{self.server}{path}"
        try:
            response = httpx.request(method, url, headers=self.headers, timeout=TIMEOUT, **options)
        except httpx.HTTPError as exc:
            raise Unreachable(f"{self.server}: cannot reach the server ({type(exc).__name__})") from None
        if response.status_code >= 400:
            try:
                message = response.json().get("error") or response.status_code
            except (ValueError, AttributeError):
                message = f"the server answered {response.status_code}"
            raise GradewrightError(str(message))
        return response

    def json(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        response = self.call(method, path, **options)
        try:
            data = response.json()
        except ValueError:
            raise Unreachable(f"{self.server}{path}: the server answered {response.status_code}, not JSON") from None
        if not isinstance(data, dict):
            raise Unreachable(f"{self.server}{path}: the server answered something unexpected")
        return data


def connect(server: str | None = None) -> Connection:
    """The service and the credentials to reach it with (see the module's text)."""
    from service.handin.client import LAST, saved_logins

    saved = saved_logins()
    chosen = server or read("GRADEWRIGHT_URL") or saved.get(LAST)
    if not isinstance(chosen, str) or not chosen:
        raise GradewrightError(
            "no server to hand in to: pass server=URL, set GRADEWRIGHT_URL, or run autograder login --server URL"
        )
    chosen = chosen.rstrip("/")
    hub_token = read("JUPYTERHUB_API_TOKEN")
    if hub_token:
        headers = {"Authorization": f"token {hub_token}"}
        if is_set("JUPYTERHUB_USER"):
            headers[HUB_USER_HEADER] = read("JUPYTERHUB_USER")
        return Connection(chosen, headers)
    token = saved.get(chosen, {}).get("token") if isinstance(saved.get(chosen), dict) else None
    if not token:
        raise GradewrightError(f"not signed in to {chosen}: run autograder login --server {chosen}")
    return Connection(chosen, {"Authorization": f"Token {token}"})


def current_notebook() -> Path:
    """The notebook this kernel runs: Jupyter's server says so in ``$JPY_SESSION_NAME``; VS Code in
    ``__vsc_ipynb_file__``."""
    candidates = []
    if is_set("JPY_SESSION_NAME"):
        named = Path(read("JPY_SESSION_NAME"))
        candidates += [named, Path.cwd() / named.name]
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and shell.user_ns.get("__vsc_ipynb_file__"):
            candidates.append(Path(shell.user_ns["__vsc_ipynb_file__"]))
    except ImportError:
        pass
    for candidate in candidates:
        if candidate.suffix == ".ipynb" and candidate.is_file():
            return candidate
    raise GradewrightError("cannot tell which notebook this is: pass notebook='path/to/notebook.ipynb'")


def assignment_of(notebook: Path, known: list[str]) -> str:
    """The notebook's assignment: as fetch() marked it in its metadata, else its file or folder's name."""
    try:
        marked = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {}).get("gradewright", {})
    except (OSError, ValueError, AttributeError):
        marked = {}
    name = marked.get("assignment") if isinstance(marked, dict) else None
    if isinstance(name, str) and name:
        return name
    for guess in (notebook.stem, notebook.parent.name):
        if guess in known:
            return guess
    raise WhichAssignment(
        f"{notebook.name}: which assignment is it? pass assignment=, one of: {', '.join(known)}", known
    )


def question_score(question: dict[str, Any]) -> str:
    """A question's score as the site shows it (``0.38 / 0.5``, of its visible checks alone when only
    some are shown: autograder.reports.summary.question_score), or ``hidden``: what submit()'s
    summary and JupyterLab's panel both show."""
    return shown_question_score(question)


def hand_in_warnings(listed: dict[str, Any], now: datetime | None = None) -> list[str]:
    """What the student is told before a hand-in now, as the API lists the assignment: its
    ``hand_in_warnings``; from a server older than them, that the due time has passed, as the
    site's hand-in page said it."""
    from service.templatetags.pages import moment

    if "hand_in_warnings" in listed:
        return [str(sentence) for sentence in listed.get("hand_in_warnings") or []]
    try:
        due = datetime.fromisoformat(str(listed.get("due")))
    except ValueError:
        return []
    due = due if due.tzinfo else due.replace(tzinfo=UTC)
    if (now or datetime.now(UTC)) <= due:
        return []
    return [f"The due time ({moment(due)}) has passed: a hand-in now is late."]


@dataclass
class Feedback:
    """A submission as the service shows it to its student: shown in a notebook as its summary."""

    data: dict[str, Any]
    server: str
    lines: list[str] = field(default_factory=list)

    @property
    def page(self) -> str:
        from urllib.parse import urljoin

        return urljoin(self.server + "/", str(self.data.get("page", "")))  # the page's address is from the root

    def summary(self) -> str:
        job = self.data
        lines = [f"submission {job['id']} of {job['assignment']}: {job['state']}"]
        report = job.get("report") or {}
        told = score_summary(report)
        if told is not None:
            lines += told.lines()
        elif job["state"] == "graded":
            lines.append(f"hidden tests' results: {report.get('hidden_results', 'not shown')}")
        for question in report.get("questions", []):
            lines.append(f"  {question['id']}: {question_score(question)} {question.get('status', '')}".rstrip())
            # What went wrong, as every face shows it (autograder/explain.py); of a question shown in
            # part, what its visible checks say and what decides the rest.
            if question.get("status") != "passed" or question.get("checks_shown") == "part":
                lines += [f"      {line.strip()}" for line in str(question.get("feedback") or "").splitlines()]
        if job.get("error"):
            lines.append(job["error"])
        lines.append(f"feedback page: {self.page}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_markdown_(self) -> str:  # Jupyter shows this rather than repr()
        head, *rest = self.summary().splitlines()
        return f"**{head}**\n\n```\n" + "\n".join(rest[:-1]) + f"\n```\n\n[The submission's page]({self.page})"


def submit(
    assignment: str | None = None,
    notebook: str | os.PathLike[str] | None = None,
    server: str | None = None,
    wait: bool = True,
    anyway: bool = False,
) -> Feedback:
    """Hand in ``notebook`` (default: this one, as last saved: save it first) for ``assignment``
    (default: the one fetch() marked, or the file's name); with ``wait``, until it is graded. Where
    the server warns of a hand-in now (late, or replacing a better or an on-time grade), nothing is
    handed in (HandInWarned says why) unless ``anyway``."""
    connection = connect(server)
    path = Path(notebook) if notebook is not None else current_notebook()
    listed = [a for a in connection.json("GET", "/api/v1/assignments").get("assignments", []) if isinstance(a, dict)]
    if assignment is None:
        assignment = assignment_of(path, [a["name"] for a in listed])
    warned = hand_in_warnings(next((a for a in listed if a.get("name") == assignment), {}))
    if warned and not anyway:
        raise HandInWarned(warned)
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise GradewrightError(f"{path}: cannot be read ({exc.strerror})") from None
    job = connection.json(
        "POST", "/api/v1/submissions", data={"assignment": assignment}, files={"file": (path.name, content)}
    )
    if wait:  # at most WAIT_SECONDS: a job still waiting says so in its summary, with the page to watch
        job = _followed(connection, job, "/api/v1/submissions/", {"queued", "grading"})
    return Feedback(job, connection.server)


def _followed(connection: Connection, item: dict[str, Any], address: str, waiting: set[str]) -> dict[str, Any]:
    """``item`` (a hand-in's job, a run of the practice checks) asked for again at ``address`` + its id
    each second while its state is one of ``waiting``, for ``WAIT_SECONDS`` at the most."""
    deadline = time.monotonic() + WAIT_SECONDS
    while item.get("state") in waiting and time.monotonic() < deadline:
        time.sleep(1)
        item = connection.json("GET", f"{address}{item['id']}")
    return item


def fetch(
    assignment: str, folder: str | os.PathLike[str] | None = None, overwrite: bool = False, server: str | None = None
) -> Path:
    """The assignment's released notebook, into ``folder`` (default: ``~/<assignment>/``). A notebook
    there already is the student's work: kept, unless ``overwrite=True``."""
    connection = connect(server)
    response = connection.call("GET", f"/api/v1/assignments/{assignment}/notebook")
    disposition = response.headers.get("Content-Disposition", "")
    name = disposition.split("filename=")[-1].strip('"; ') if "filename=" in disposition else f"{assignment}.ipynb"
    name = Path(name).name or f"{assignment}.ipynb"  # a file name only, never a path the answer chose
    target = Path(folder) if folder is not None else Path.home() / assignment
    path = target / name
    if path.exists() and not overwrite:
        raise NotebookExists(f"{path} exists already (your work?): kept; pass overwrite=True to replace it")
    try:
        document = response.json()
    except ValueError:
        raise GradewrightError(f"the server's notebook for {assignment} is not a notebook") from None
    # The site's own marks (a notebook of one's own: whose it is, its values) stay beside the name.
    metadata = document.setdefault("metadata", {})
    marks = metadata.get("gradewright")
    metadata["gradewright"] = {**(marks if isinstance(marks, dict) else {}), "assignment": assignment}
    target.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def check(
    notebook: str | os.PathLike[str] | None = None, question: str | None = None, server: str | None = None
) -> list[Any]:
    """The notebook's public tests, as ``autograder check`` runs them (its code, in a fresh process);
    then, when signed in to a server (``server=``, as ``submit()`` finds it), the assignment's
    practice checks, run there in the sandbox on the notebook as last saved: each one's sentence and
    whether it passed, never its code or its inputs. A run counts in no score and uses no hand-in."""
    from autograder.errors import AutograderError
    from autograder.public_tests import check_notebook

    path = Path(notebook) if notebook is not None else current_notebook()
    try:
        results = check_notebook(path, question)
    except AutograderError as exc:
        raise GradewrightError(str(exc)) from None
    for result in results:
        print(f"{result.question}: {'passed' if result.passed else 'FAILED'} {result.message}".rstrip())
    told = practice_lines(path, question, server)
    if told:
        print("\n".join(told))
    return results


def practice_lines(path: Path, question: str | None, server: str | None) -> list[str]:
    """The notebook's practice checks run on the server, in lines (none where no server is signed in
    to, or the assignment has none); the server's refusal (its hourly limit) said, never raised."""
    try:
        connection = connect(server)
    except GradewrightError:
        return []  # working without a server: the public tests are the whole check
    try:
        listed = [
            a for a in connection.json("GET", "/api/v1/assignments").get("assignments", []) if isinstance(a, dict)
        ]
        assignment = assignment_of(path, [str(a.get("name")) for a in listed])
        if not next((a.get("practice_checks") for a in listed if a.get("name") == assignment), 0):
            return []
        run = connection.json(
            "POST",
            f"/api/v1/assignments/{assignment}/practice",
            data={"question": question or ""},
            files={"file": (path.name, path.read_bytes())},
        )
        run = _followed(connection, run, "/api/v1/practice/", {"queued", "running"})
    except (GradewrightError, OSError) as exc:
        return [f"practice checks: not run ({exc})"]
    return practice_summary(run)


def practice_summary(run: dict[str, Any]) -> list[str]:
    """A run of the practice checks (``GET /api/v1/practice/<id>``) in lines, as check() prints it."""
    checks = [c for c in run.get("checks") or [] if isinstance(c, dict)]
    if run.get("state") in {"queued", "running"}:
        return [
            f"practice checks: still {run.get('state')} on the server; see {run.get('page', 'the assignment page')}"
        ]
    if run.get("error") or run.get("problem"):
        return [f"practice checks: none could run: {run.get('error') or run.get('problem')}"]
    passed = sum(1 for c in checks if c.get("passed"))
    lines = [f"practice checks (run on the server): {passed} of {len(checks)} pass"]
    for c in checks:
        lines.append(
            f"  {c.get('question')}: {'passed' if c.get('passed') else 'FAILED'} {c.get('sentence', '')}".rstrip()
        )
    return lines
