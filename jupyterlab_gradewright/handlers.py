"""The server side of JupyterLab's buttons, under ``<base_url>gradewright/``: each calls one function
of gradewright/cell.py in a thread (they wait on the network), with the notebook's path taken within
the server's root folder. A refusal is ``{"error": ...}`` with the service's own words, its status
chosen by the error's type (STATUSES); a notebook that does not say its assignment is answered with
the course's assignments to choose from (``{"error": ..., "assignments": [...]}``)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from autograder.reports.summary import score_summary
from gradewright import cell
from gradewright.errors import GradewrightError, HandInWarned, NotebookExists, Unreachable, WhichAssignment

# The answer's status for each kind of refusal (the first that matches, most specific first).
STATUSES: list[tuple[type[GradewrightError], int]] = [
    (NotebookExists, 409),  # the panel offers to replace it or keep it
    (WhichAssignment, 422),  # the panel offers the course's assignments
    (HandInWarned, 428),  # the panel shows the warnings, and hands in only if the student confirms
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
            if isinstance(refused, HandInWarned):
                answer["warnings"] = refused.warnings
            self.finish(json.dumps(answer))
            return
        self.set_status(status)
        self.finish(json.dumps(result))


def _job(job: dict[str, Any], server: str) -> dict[str, Any]:
    """The submission as the API gives it, with what the panel shows in the site's words: the score
    and lateness lines (autograder/reports/summary.py, as the submission page writes them), and
    each question's score as the site rounds it (``shown``: gradewright.cell.question_score), so
    that the panel never rounds a number itself."""
    feedback = cell.Feedback(job, server)
    report = job.get("report") or {}
    told = score_summary(report)
    shown = dict(job)
    if isinstance(report, dict) and isinstance(report.get("questions"), list):
        questions = [
            {**question, "shown": cell.question_score(question)} if isinstance(question, dict) else question
            for question in report["questions"]
        ]
        shown["report"] = {**report, "questions": questions}
    return {
        **shown,
        "page_url": feedback.page,
        "summary": feedback.summary(),
        "score_lines": told.lines() if told is not None else [],
    }


def _listed(answer: dict[str, Any]) -> dict[str, Any]:
    """The course's assignments as the API lists them, each with the line Fetch offers it by: its
    title and due time as the site writes them ("Attention (due 3 Dec 2026, 20:00 UTC)")."""
    from service.templatetags.pages import moment

    listed = [entry for entry in answer.get("assignments") or [] if isinstance(entry, dict) and entry.get("name")]
    for entry in listed:
        due = moment(entry.get("due"))
        entry["label"] = f"{entry.get('title') or entry['name']} ({f'due {due}' if due else 'no due time'})"
    labels = [entry["label"] for entry in listed]
    for entry in listed:  # two alike (the same title and due time): told apart by their names
        if labels.count(entry["label"]) > 1:
            entry["label"] += f" [{entry['name']}]"
    return {**answer, "assignments": listed}


class Assignments(Base):
    @web.authenticated
    async def get(self) -> None:
        await self.answer(lambda: _listed(cell.connect().json("GET", "/api/v1/assignments")))


def fetched(root: Path, name: str, overwrite: bool) -> dict[str, Any]:
    """The assignment's notebook fetched into ``root/name/``; its path, and a notebook there already
    (NotebookExists), named from ``root`` (the student's notebooks' folder), not from the server's."""
    try:
        made = cell.fetch(name, folder=root / name, overwrite=overwrite)
    except NotebookExists as exists:
        raise NotebookExists(str(exists).replace(f"{root}{os.sep}", "", 1)) from None
    return {"path": made.relative_to(root).as_posix()}


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

        await self.answer(fetched, self.root, name, data.get("overwrite") is True)


class Check(Base):
    @web.authenticated
    async def post(self) -> None:
        def check() -> dict[str, Any]:
            from autograder.errors import AutograderError
            from autograder.public_tests import check_notebook

            path = self.within_root(self.body().get("path"))
            try:
                results = check_notebook(path)
            except AutograderError as exc:
                raise GradewrightError(str(exc)) from None
            # Then the practice checks, run on the server when signed in, as check() in a cell does.
            return {
                "results": [result.model_dump() for result in results],
                "practice": cell.practice_lines(path, None, None),
            }

        await self.answer(check)


class Submit(Base):
    @web.authenticated
    async def post(self) -> None:
        def submit() -> dict[str, Any]:
            data = self.body()
            assignment = data.get("assignment") if isinstance(data.get("assignment"), str) else None
            # Warned (late, or a better or an on-time grade replaced): 428 with the warnings, which the
            # panel shows; it hands in only when the student confirms (anyway).
            anyway = data.get("anyway") is True
            feedback = cell.submit(assignment or None, self.within_root(data.get("path")), wait=False, anyway=anyway)
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
