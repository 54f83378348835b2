"""``autograder login`` and ``autograder submit``: the service's API from the command line. The
token is kept in ``~/.config/gradewright/servers.json`` (readable by its owner only)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx

from course.private_files import private_text
from service.errors import ClientError, HandInWarned

WAIT_SECONDS = 600  # how long submit waits for its feedback
LAST = "_last"  # servers.json's key for the server of the last login: submit's default


def config_path() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "gradewright" / "servers.json"


def saved_logins() -> dict[str, Any]:
    """Each server's saved sign-in ({server: {"username", "token"}}, and LAST: the last one used)."""
    path = config_path()
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ClientError(f"{path}: cannot be read ({exc}); delete it and log in again") from None


def _call(method: str, url: str, **options: Any) -> dict[str, Any]:
    try:
        response = httpx.request(method, url, timeout=30, **options)
    except httpx.HTTPError as exc:
        raise ClientError(f"{url}: cannot reach the server ({type(exc).__name__})") from None
    try:
        data = response.json()
    except ValueError:
        raise ClientError(f"{url}: the server answered {response.status_code}, not JSON") from None
    if response.status_code >= 400:
        raise ClientError(f"{url}: {data.get('error', response.status_code)}")
    return data


def login(server: str, username: str, password: str) -> Path:
    """Ask the server for a token and keep it for this server."""
    data = _call("POST", f"{server.rstrip('/')}/api/v1/token", data={"username": username, "password": password})
    saved = saved_logins()
    saved[server.rstrip("/")] = {"username": data["username"], "token": data["token"]}
    saved[LAST] = server.rstrip("/")
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with private_text(path) as handle:  # the tokens: a 0644 file of an older version is made 0600 too
        json.dump(saved, handle, indent=2)
    return path


def submit(
    server: str | None, notebook: Path, assignment: str, wait: bool = True, anyway: bool = False
) -> dict[str, Any]:
    """Upload a notebook to ``server`` (None: the one of the last login); with ``wait``, the
    submission once graded (its report as shown to the student), with the ``server`` it went to.
    Where the server warns of a hand-in now (late, replacing a better or an on-time grade: the
    assignment's ``hand_in_warnings``), nothing is handed in (HandInWarned, with its sentences)
    unless ``anyway``."""
    saved = saved_logins()
    if server is None:
        server = saved.get(LAST)
        if not isinstance(server, str):
            raise ClientError("not logged in to any server: run autograder login --server URL")
    server = server.rstrip("/")
    token = saved.get(server, {}).get("token")
    if not token:
        raise ClientError(f"not logged in to {server}: run autograder login --server {server}")
    headers = {"Authorization": f"Token {token}"}
    try:
        content = notebook.read_bytes()
    except OSError as exc:
        raise ClientError(f"{notebook}: cannot be read ({exc.strerror})") from None
    if not anyway:
        listed = _call("GET", f"{server}/api/v1/assignments", headers=headers).get("assignments", [])
        warned = next((a.get("hand_in_warnings") for a in listed if a.get("name") == assignment), None)
        if warned:
            raise HandInWarned([str(sentence) for sentence in warned])
    job = _call(
        "POST",
        f"{server}/api/v1/submissions",
        headers=headers,
        data={"assignment": assignment},
        files={"file": (notebook.name, content)},
    )
    deadline = time.monotonic() + WAIT_SECONDS
    while wait and job["state"] in {"queued", "grading"}:
        if time.monotonic() > deadline:
            raise ClientError(f"submission {job['id']} is still {job['state']}; see {server}{job['page']}")
        time.sleep(1)
        job = _call("GET", f"{server}/api/v1/submissions/{job['id']}", headers=headers)
    return {**job, "server": server}
