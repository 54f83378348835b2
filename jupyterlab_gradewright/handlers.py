"""The server side of JupyterLab's buttons, under ``<base_url>gradewright/``: each calls one function
of gradewright/cell.py in a thread (they wait on the network), with the notebook's path taken within
the server's root folder. A refusal is ``{"error": ...}`` with the service's own words, its status
chosen by the error's type (STATUSES); a notebook that does not say its assignment is answered with
the course's assignments to choose from (``{"error": ..., "assignments": [...]}``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from autograder.reports.summary import score_summary
from gradewright import cell
from gradewright.errors import GradewrightError, NotebookExists, Unreachable, WhichAssignment

# The answer's status for each kind of refusal (the first that matches, most specific first).
STATUSES: list[tuple[type[GradewrightError], int]] = [
    (NotebookExists, 409),  # the panel offers to replace it or keep it
    (WhichAssignment, 422),  # the panel offers the course's assignments
    (Unreachable, 502),
    (GradewrightError, 400),
]


def status_of(error: GradewrightError) -> int:
    return next(status for kind, status in STATUSES if isinstance(error, kind))


class Base(APIHandler):
    @property
    def root(self) -> Path:
        return Path(self.settings["server_root_dir"]).expanduser().resolve()

    def within_root(self, path: object) -> Path:
        if not isinstance(path, str) or not path:
            raise GradewrightError("no notebook named")
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root):
            raise GradewrightError(f"{path}: not within this server's folder")
        return full

    def body(self) -> dict[str, Any]:
        try:
            data = json.loads(self.request.body or b"{}")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise GradewrightError("the request is not a JSON object")
        return data

    async def answer(self, work: Any, *args: Any, status: int = 200, **kwargs: Any) -> None:
        try:
            result = await asyncio.to_thread(work, *args, **kwargs)
        except GradewrightError as refused:
            self.set_status(status_of(refused))
            answer: dict[str, Any] = {"error": str(refused)}
            if isinstance(refused, WhichAssignment):
                answer["assignments"] = refused.known
            self.finish(json.dumps(answer))
            return
        self.set_status(status)
        self.finish(json.dumps(result))


def _job(job: dict[str, Any], server: str) -> dict[str, Any]:
    """The submission as the API gives it, with what the panel shows in the site's words: the score
    and lateness lines (autograder/reports/summary.py, as the submission page writes them)."""
    feedback = cell.Feedback(job, server)
    told = score_summary(job.get("report") or {})
    return {
        **job,
        "page_url": feedback.page,
        "summary": feedback.summary(),
        "score_lines": told.lines() if told is not None else [],
    }


class Assignments(Base):
    @web.authenticated
    async def get(self) -> None:
        await self.answer(lambda: cell.connect().json("GET", "/api/v1/assignments"))


class Fetch(Base):
    @web.authenticated
    async def post(self) -> None:
        try:
            data = self.body()
            name = str(data.get("assignment", ""))
            if not name or "/" in name or name.startswith("."):
                raise GradewrightError("choose an assignment")
        except GradewrightError as refused:
            self.set_status(400)
            self.finish(json.dumps({"error": str(refused)}))
            return

        def fetch() -> dict[str, Any]:
            made = cell.fetch(name, folder=self.root / name, overwrite=data.get("overwrite") is True)
            return {"path": made.relative_to(self.root).as_posix()}

        await self.answer(fetch)


class Check(Base):
    @web.authenticated
    async def post(self) -> None:
        def check() -> dict[str, Any]:
            from autograder.errors import AutograderError
            from autograder.public_tests import check_notebook

            try:
                results = check_notebook(self.within_root(self.body().get("path")))
            except AutograderError as exc:
                raise GradewrightError(str(exc)) from None
            return {"results": [result.model_dump() for result in results]}

        await self.answer(check)


class Submit(Base):
    @web.authenticated
    async def post(self) -> None:
        def submit() -> dict[str, Any]:
            data = self.body()
            assignment = data.get("assignment") if isinstance(data.get("assignment"), str) else None
            feedback = cell.submit(assignment or None, self.within_root(data.get("path")), wait=False)
            return _job(feedback.data, feedback.server)

        await self.answer(submit, status=201)


class Submission(Base):
    @web.authenticated
    async def get(self, job_id: str) -> None:
        def read() -> dict[str, Any]:
            connection = cell.connect()
            return _job(connection.json("GET", f"/api/v1/submissions/{int(job_id)}"), connection.server)

        await self.answer(read)


def setup(server_app: Any) -> None:
    web_app = server_app.web_app
    base = url_path_join(web_app.settings["base_url"], "gradewright")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, "assignments"), Assignments),
            (url_path_join(base, "fetch"), Fetch),
            (url_path_join(base, "check"), Check),
            (url_path_join(base, "submit"), Submit),
            (url_path_join(base, r"submissions/(\d{1,18})"), Submission),
        ],
    )
