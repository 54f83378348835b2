"""A course that stays on Gradescope grades with the same suites: ``autograder export gradescope``
writes the bundle Gradescope's autograder takes, and ``autograder gradescope-run`` is what its
``run_autograder`` calls for each submission.

The bundle (the zip's root is Gradescope's ``/autograder/source``):

    setup.sh          installs the project into /autograder/venv (Gradescope's Ubuntu 24.04 image)
    run_autograder    grades /autograder/submission into /autograder/results/results.json
    project/          this project's source: pyproject.toml and everything it names (its wheel's packages
                      and its shared data, such as the JupyterLab extension's built bundle), so that
                      ``pip install`` of it works as it does here
    course/           a course.toml naming only this assignment, the assignment's folder (its hidden
                      suite and source notebook), its references, and the grader's secret, so that a
                      submission draws the same hidden inputs, and gets the same verdicts, as here

Inside Gradescope's container, each submission runs in a container of its own: that container is the
sandbox (bubblewrap is used where it can start; where it cannot, as in Gradescope's containers, the
worker runs with the same limits and protocol but without the namespaces).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import tomli_w

from untrusted.text import storable

from .assignment import Assignment
from .errors import AutograderError
from .grading import grade_submission
from .known import MISTAKE_KEY, VERDICTS_FILE
from .references import load_reference, resolve_reference
from .reports.gradescope import results
from .sandbox.process import end_everything_started
from .sandbox.runners import (
    UNSANDBOXED_UID_BASE,
    UNSANDBOXED_UID_SPAN,
    UnsafeRunner,
    make_runner,
    missing_for_sandbox,
    unprivileged_user,
)
from .sandbox.runtime import ensure_runtime
from .secret import SECRET_FILE, grader_secret
from .submissions import find_submissions
from .suite import hidden_suite

# What the bundle leaves out of the project's folders: build products and the extension's npm tree and UI tests.
SKIPPED_NAMES = ("__pycache__", "*.pyc", ".*", "node_modules", "ui-tests", "*.egg-info")
SKIPPED = shutil.ignore_patterns(*SKIPPED_NAMES)
SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, when the autograder is built (base image: Ubuntu 24.04, Python 3.12).
# VENV_OPTIONS is for trying it outside Gradescope (--system-site-packages reuses installed packages).
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip bubblewrap
python3 -m venv ${VENV_OPTIONS:-} /autograder/venv
/autograder/venv/bin/pip install --quiet /autograder/source/project
"""
RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission: the student's files are in $ROOT/submission, the results
# go to $ROOT/results/results.json. GRADEWRIGHT_ROOT and PYTHON are for trying it outside Gradescope.
set -uo pipefail
ROOT="${{GRADEWRIGHT_ROOT:-${{AUTOGRADER_ROOT:-/autograder}}}}"
PYTHON="${{PYTHON:-$ROOT/venv/bin/python}}"
exec "$PYTHON" -m autograder --course "$ROOT/source/course" gradescope-run {name} --root "$ROOT"
"""
COURSE = """# The course of this Gradescope autograder: one assignment, as exported by Gradewright.
title = {title}
[[modules]]
number = 1
title = {title}
lessons = "lessons"
assignments = ["assignments/{name}"]
[sandbox]
packages = {packages}
"""


def export_bundle(assignment: Assignment, project_root: Path, title: str, out: Path) -> Path:
    """Write Gradescope's autograder zip for ``assignment`` to ``out``."""
    hidden_suite(assignment)  # a suite that cannot be collected is refused here, not in Gradescope's container
    secret = grader_secret(assignment)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder)
        for name, text in (("setup.sh", SETUP), ("run_autograder", RUN.format(name=assignment.name))):
            (source / name).write_text(text, encoding="utf-8")
        project = source / "project"
        project.mkdir()
        copy_project(project_root, project)
        course = source / "course"
        (course / "lessons").mkdir(parents=True)
        (course / "course.toml").write_text(
            COURSE.format(
                title=json.dumps(title), name=assignment.name, packages=json.dumps(list(assignment.sandbox_packages))
            ),
            encoding="utf-8",
        )
        folder_copy = course / "assignments" / assignment.name
        # The master notebook (autograder assign's source, known versions and all) is not the grader's.
        shutil.copytree(assignment.folder, folder_copy, ignore=shutil.ignore_patterns("*.master.ipynb", *SKIPPED_NAMES))
        keep_known_mistakes(assignment, folder_copy / "known")
        for path in assignment.reference_paths.values():
            if path.is_file():
                target = folder_copy / os.path.relpath(path, assignment.folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
        (course / "assignments" / SECRET_FILE).write_text(secret, encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    info = zipfile.ZipInfo.from_file(path, path.relative_to(source).as_posix())
                    executable = path.name in {"setup.sh", "run_autograder"}
                    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    bundle.writestr(info, path.read_bytes())
    return out


def keep_known_mistakes(assignment: Assignment, known: Path) -> None:
    """The bundle's known/ (a copy of the assignment's): only what names a known mistake in feedback, as
    ``autograder grade`` does (mistakes.py): verdicts.toml's entries with a ``mistake`` sentence and
    their files. The rest (correct submissions, the project's own test material) is left out."""
    source = assignment.folder / "known" / VERDICTS_FILE
    shutil.rmtree(known, ignore_errors=True)
    try:
        table = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no known mistakes (or a list `autograder verify` reports): feedback without them, as grade's
    kept = {file: entry for file, entry in table.items() if isinstance(entry, dict) and MISTAKE_KEY in entry}
    files = [source.parent / file for file in kept]
    if not kept or not all(path.is_file() for path in files):
        return
    known.mkdir(parents=True)
    for path in files:
        shutil.copy(path, known / path.name)
    (known / VERDICTS_FILE).write_text(tomli_w.dumps(kept), encoding="utf-8")


def copy_project(root: Path, to: Path) -> None:
    """Copy what ``root/pyproject.toml`` names into ``to``: its readme, its wheel's packages (hatchling's
    ``[tool.hatch.build.targets.wheel] packages``) and its ``shared-data``, whatever they are (the
    JupyterLab extension's built bundle among them), so that a package added to pyproject.toml is in the
    bundle without a list here to keep in step. The extension's build is skipped where its bundle is
    there (skip-if-exists), so Gradescope's install needs no Node."""
    settings = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = settings.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    shutil.copy(root / "pyproject.toml", to / "pyproject.toml")
    readme = settings.get("project", {}).get("readme")
    if isinstance(readme, str):
        shutil.copy(root / readme, to / readme)
    for package in wheel.get("packages", []):
        shutil.copytree(root / package, to / package, ignore=SKIPPED, dirs_exist_ok=True)
    for source in wheel.get("shared-data", {}):
        path = root / source
        if not path.exists():
            raise AutograderError(f"{root / 'pyproject.toml'}: data file {source} is missing (build it first)")
        if path.is_dir():
            shutil.copytree(path, to / source, ignore=SKIPPED, dirs_exist_ok=True)
        else:
            (to / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, to / source)


def project_root() -> Path:
    """This project's source tree, which the bundle carries: the folder above the package, when it
    runs from its source (an editable install); an installed wheel has no pyproject.toml to copy."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        raise AutograderError(f"{root}: export gradescope needs the project's source (pip install -e .)")
    return root


def export_for_course(assignment: Assignment, out: Path, course: Path | None = None) -> Path:
    """``autograder export gradescope``: the bundle of this project's source, titled as the course
    (``course``, else the course.toml here or above), else, outside any course, as the assignment."""
    from course.errors import CourseError
    from course.folder import find_course

    root = project_root()
    try:
        title = find_course(course).title
    except CourseError:
        title = assignment.title
    return export_bundle(assignment, root, title, out)


UNSANDBOXED = (
    "Graded without the sandbox: it cannot start in this container, so the submission ran with the "
    "grader's limits but not its namespaces, in the container Gradescope gives each submission"
)
# What stands for a run of the hidden tests' text (or the references', or the grader's secret) in a text
# the submission's code shaped: its errors, its output. A run shorter than SECRET_RUN characters, or with
# fewer than half of them letters or digits, says nothing of them ("import numpy", spaces).
HIDDEN_TEXT = "[hidden]"
SECRET_RUN = 16


def run_in_gradescope(assignment: Assignment, root: Path) -> Path:
    """Grade the submission in ``root/submission`` into ``root/results/results.json``, as Gradescope
    expects; a submission that cannot be graded gets a results file saying why, never a crash.

    Without the sandbox (Gradescope's containers have no user namespaces for bubblewrap), the student's
    code still runs as another user than the grader where the grader is root (``unprivileged_user``;
    the course's folder is then closed to it), and whatever it started, in its own session or not, is
    killed and collected before the results are written (``end_everything_started``); the results are
    written where it cannot write, and nothing of the hidden tests reaches a text its code shapes."""
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = root / "submission"
    try:
        found = find_submissions([folder], preferred=assignment.released_notebook).submissions
    except AutograderError as exc:
        _write(out, {"score": 0, "output": f"Nothing to grade: {storable(str(exc))}"})
        return out
    if len(found) != 1:
        names = ", ".join(sorted(s.path.name for s in found))
        _write(out, {"score": 0, "output": f"Hand in one notebook, {assignment.released_notebook}; found {names}."})
        return out
    submission = found[0]
    if assignment.parameters:  # a notebook of one's own: graded with the values drawn for its student
        student = gradescope_student(root)
        if student is None:
            _write(out, {"score": 0, "output": NO_STUDENT})
            print(NO_STUDENT, file=sys.stderr)
            return out
        submission = submission.model_copy(update={"student": student})
    packages = tuple(assignment.sandbox_packages)
    # Gradescope's containers cannot start bubblewrap: the worker then runs without namespaces, in the
    # container Gradescope gives each submission, and the results say so, never silently.
    missing = missing_for_sandbox()
    runner = make_runner(unsafe=bool(missing), packages=packages)
    user = None
    if missing:
        user = _student_user(packages)
        if user is not None:
            _close_to_others(assignment.folder.parent, out.parent)
        runner = UnsafeRunner(user, packages, contained=True)
    reference = load_reference(assignment, resolve_reference("auto", assignment))
    secret = grader_secret(assignment)
    try:
        report = grade_submission(assignment, submission, runner, reference, assignment.limits, secret)
    finally:
        if missing and not end_everything_started(user):
            print("some of the submission's processes could not be ended", file=sys.stderr)
    graded = _scrubbed(results(report), _secret_runs(assignment, secret))
    if missing:
        said = f"{UNSANDBOXED} (missing here: {'; '.join(missing)})."
        graded["output"] = f"{said}\n{graded.get('output', '')}".rstrip("\n")
        print(said, file=sys.stderr)  # Gradescope's log of the run, for the staff
    _write(out, graded)
    return out


NO_STUDENT = (
    "Not graded: this assignment's values are drawn for each student, and Gradescope's "
    "submission_metadata.json names no student (sid or email) to draw them for."
)


def gradescope_student(root: Path) -> str | None:
    """The id the values of a notebook of one's own are drawn for, from what Gradescope writes beside
    the submission (``submission_metadata.json``, never the student's files): the first submitter's
    student id (``sid``, the roster's), else their email; None when it names neither."""
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        users = metadata.get("users") or []
        first = users[0] if isinstance(users[0], dict) else {}
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        return None
    for key in ("sid", "email"):
        value = first.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def _student_user(packages: tuple[str, ...]) -> int | None:
    """The uid the student's code runs as without the sandbox: another than the grader's where the
    grader is root and that uid can run the sandbox's runtime here; else None (said in the log)."""
    user = unprivileged_user(UNSANDBOXED_UID_BASE, UNSANDBOXED_UID_SPAN)
    if user is None:
        return None
    import subprocess

    try:
        runtime = ensure_runtime(packages)
        probe = subprocess.run(
            [f"{runtime}/bin/python3", "-I", "-B", "-c", "import numpy"],
            env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{runtime}/lib"},
            user=user,
            group=user,
            extra_groups=[],
            cwd="/",
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"the submission runs as the grader's user: uid {user} cannot run here ({exc})", file=sys.stderr)
        return None
    if probe.returncode != 0:
        print(f"the submission runs as the grader's user: uid {user} cannot run the runtime here", file=sys.stderr)
        return None
    return user


def _close_to_others(*folders: Path) -> None:
    """The course's assignments (hidden tests, references, the secret) readable by the grader alone, and
    the results' folder writable by the grader alone."""
    for folder, mode in zip(folders, (0o700, 0o755), strict=True):
        os.chmod(folder, mode)


def _secret_runs(assignment: Assignment, secret: str) -> frozenset[str]:
    """Every run of ``SECRET_RUN`` characters of the hidden tests, the references and the grader's
    secret, line by line (each stripped), that says something (half of it letters or digits)."""
    files = [path for path in assignment.hidden_path.rglob("*") if path.is_file()]
    files += [path for path in assignment.reference_paths.values() if path.is_file()]
    lines = [secret.strip()]
    for path in files:
        try:
            lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    runs = set()
    for line in (line.strip() for line in lines):
        for start in range(len(line) - SECRET_RUN + 1):
            run = line[start : start + SECRET_RUN]
            if sum(char.isalnum() for char in run) * 2 >= SECRET_RUN:
                runs.add(run)
    return frozenset(runs)


def scrubbed(text: str, runs: frozenset[str]) -> str:
    """``text`` with every stretch made of ``runs`` (any run of SECRET_RUN characters of the hidden
    text) replaced by ``HIDDEN_TEXT``: a whole line, a line cut short by a bound, lines run together."""
    hidden = [False] * len(text)
    for start in range(len(text) - SECRET_RUN + 1):
        if text[start : start + SECRET_RUN] in runs:
            hidden[start : start + SECRET_RUN] = [True] * SECRET_RUN
    if not any(hidden):
        return text
    kept: list[str] = []
    for position, char in enumerate(text):
        if not hidden[position]:
            kept.append(char)
        elif position == 0 or not hidden[position - 1]:
            kept.append(HIDDEN_TEXT)
    return "".join(kept)


def _scrubbed(graded: dict, runs: frozenset[str]) -> dict:
    """The results with the hidden text taken out of the text a submission's code can shape: the
    output, where its errors are (its cells' own messages, raised before any hidden input exists). The
    tests' outputs are the grader's own words, from the checks' descriptions in the hidden tests, and
    name no value the submission returned: they are kept as they are."""
    if isinstance(graded.get("output"), str):
        graded["output"] = scrubbed(graded["output"], runs)
    return graded


def _write(out: Path, graded: dict) -> None:
    """results.json, whole or not at all: written beside it, then moved over it (a link planted there is
    replaced, never followed)."""
    temporary = out.with_name(f".{out.name}.{os.getpid()}")
    temporary.unlink(missing_ok=True)
    temporary.write_text(json.dumps(graded, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, out)
