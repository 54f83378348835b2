"""Hostile names and folder layouts, graded through the real command: one student never stops the
batch, names are identities, links are not followed, and nothing a student planted in a name runs
in the instructor's terminal or spreadsheet."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.reports.names import report_stem

from .conftest import ROOT, needs_sandbox

pytestmark = needs_sandbox
ASSIGNMENT = "sequences-and-attention"
SOFTMAX = (
    "import numpy as np\n\n\ndef softmax(x, axis=-1):\n"
    "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n"
)
FORMULA = "=2+5*cmd|' calc'!A0"  # a name a spreadsheet would run as a formula
MARKUP = "[bold red]boss[blink]"
HIDDEN_TEST = ROOT / "assignments" / ASSIGNMENT / "hidden" / "test_softmax.py"


def grade(*paths: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            ASSIGNMENT,
            *map(str, paths),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--reference",
            "numpy",
            "--timeout",
            "5",
        ],
        capture_output=True,
        timeout=600,
        cwd=ROOT,
    )


def reports(out: Path) -> dict[str, dict]:
    found = {}
    for path in out.glob("*.json"):
        if not path.name.endswith(".gradescope.json"):
            report = json.loads(path.read_text(encoding="utf-8"))
            found[report["student"]] = report | {"file": path.name}
    return found


def write(path: Path, text: str = SOFTMAX) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def softmax_score(report: dict) -> float:
    return next(q["score"] for q in report["questions"] if q["id"] == "softmax")


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    """A flat folder of files named by students, every name hostile in its own way."""
    root = tmp_path_factory.mktemp("flat")
    folder = root / "submissions"
    folder.mkdir()
    names = {
        b"caf\xe9-latin1": "not UTF-8",
        ("x" * 200).encode(): "long",
        b"esc\x1b[31mred": "control characters",
        FORMULA.encode(): "formula",
        MARKUP.encode(): "rich markup",
        b"a b": "space",
        b"a_b": "plain twin of 'a b'",
        b"a_b-" + report_stem("a b").rsplit("-", 1)[1].encode(): "forged hash suffix",
    }
    for name in names:
        with open(os.path.join(os.fsencode(folder), name + b".py"), "w") as handle:
            handle.write(SOFTMAX)
    # A notebook of thousands of failing cells with long messages: the report stays small.
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": f"raise ValueError({'y' * 5000!r})",
            "outputs": [],
            "execution_count": None,
        }
        for _ in range(3000)
    ]
    cells.append({"cell_type": "code", "metadata": {}, "source": SOFTMAX, "outputs": [], "execution_count": None})
    write(
        folder / "many_errors.ipynb", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    out = root / "out"
    return {"completed": grade(folder, out=out), "out": out, "reports": reports(out)}


def test_every_student_of_a_flat_folder_is_graded_under_their_own_name(flat):
    completed, found = flat["completed"], flat["reports"]
    assert completed.returncode == 0, completed.stderr
    assert b"Traceback" not in completed.stderr
    expected = {"caf\\xe9-latin1", "x" * 200, "esc\x1b[31mred", FORMULA, MARKUP, "a b", "a_b", "many_errors"}
    assert expected <= set(found)
    assert len(found) == 9  # the forged-suffix twin too: nine students, nine reports
    assert len({report["file"] for report in found.values()}) == 9
    assert all(softmax_score(report) == 2 for report in found.values())
    assert found["a_b"]["file"] == "a_b.json"  # a plain name is its own file name
    assert all(len(report["file"]) < 100 for report in found.values())


def test_the_report_of_a_notebook_of_failing_cells_stays_small(flat):
    path = flat["out"] / "many_errors.json"
    report = json.loads(path.read_text())
    assert len(report["errors"]) == 51 and report["errors"][-1] == "... and 2950 more problems"
    assert all(len(error) < 600 for error in report["errors"])
    assert path.stat().st_size < 100_000


def test_names_reach_the_spreadsheet_and_the_terminal_inert(flat):
    rows = list(csv.reader((flat["out"] / "grades.csv").open(encoding="utf-8")))
    students = [row[0] for row in rows[1:]]
    assert "'" + FORMULA in students and FORMULA not in students
    completed = flat["completed"]
    assert b"\x1b" not in completed.stdout + completed.stderr
    assert b"\\x1b[31mred" in completed.stdout
    assert MARKUP.encode() in completed.stdout  # shown as typed, not turned into style
    feedback = next(flat["out"].glob("esc*.feedback.txt")).read_text()
    assert "\x1b" not in feedback and "\\x1b[31mred" in feedback


@pytest.fixture(scope="module")
def nbgrader_layout(tmp_path_factory):
    root = tmp_path_factory.mktemp("layout")
    submitted = root / "submitted"
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": SOFTMAX, "outputs": [], "execution_count": None}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    write(submitted / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", json.dumps(notebook))  # graded: the released name
    write(submitted / "alice" / ASSIGNMENT / "Untitled.ipynb", "{}")
    write(submitted / "bob" / ASSIGNMENT / "a.py")
    write(submitted / "bob" / ASSIGNMENT / "b.py")
    write(submitted / "carol" / ASSIGNMENT / "submitted" / "dave" / ASSIGNMENT / "x.py")  # still carol's
    write(submitted / ".sneaky" / ASSIGNMENT / "x.py")
    write(submitted / "erin" / ASSIGNMENT / ".ipynb_checkpoints" / "x-checkpoint.ipynb")
    write(submitted / "erin" / ASSIGNMENT / "x.py")
    (submitted / "frank" / ASSIGNMENT).mkdir(parents=True)
    (submitted / "frank" / ASSIGNMENT / "x.py").symlink_to(HIDDEN_TEST)
    outside = write(root / "elsewhere" / ASSIGNMENT / "x.py")
    (submitted / "gina").symlink_to(outside.parent.parent, target_is_directory=True)
    (submitted / "hal" / ASSIGNMENT).mkdir(parents=True)
    os.mkfifo(submitted / "hal" / ASSIGNMENT / "x.ipynb")
    write(submitted / "ivan" / ASSIGNMENT / "x.py")
    out = root / "out"
    return {"completed": grade(submitted, out=out), "out": out, "reports": reports(out)}


def test_one_students_layout_never_stops_the_batch(nbgrader_layout):
    completed, found = nbgrader_layout["completed"], nbgrader_layout["reports"]
    assert completed.returncode == 1  # some could not be graded; every other student was
    assert b"Traceback" not in completed.stderr
    assert set(found) == {"alice", "bob", "carol", "erin", "frank", "gina", "hal", "ivan"}
    for student in ("alice", "carol", "erin", "ivan"):
        assert found[student]["ran"] and softmax_score(found[student]) == 2, student
    assert "2 files were handed in (a.py, b.py)" in found["bob"]["errors"][0]
    assert softmax_score(found["bob"]) == 0
    for student in ("frank", "gina"):
        assert found[student]["errors"] == ["symbolic links are not accepted; hand in the file itself"]
        assert found[student]["score"] == 0
    assert found["hal"]["errors"] == ["not a regular file"]
    stderr = completed.stderr.decode()
    assert "skipped: " in stderr and ".sneaky: a hidden folder" in stderr
    assert ".ipynb_checkpoints: a hidden folder" in stderr
    assert "Untitled.ipynb: a second file of alice" in stderr
    rows = {row["student"]: row for row in csv.DictReader((nbgrader_layout["out"] / "grades.csv").open())}
    assert set(rows) == set(found)


def test_nothing_outside_the_submissions_is_read(nbgrader_layout):
    hidden = HIDDEN_TEST.read_text()
    for path in nbgrader_layout["out"].iterdir():
        if path.suffix in {".json", ".txt"}:
            assert "pytestmark" not in path.read_text() and hidden[:200] not in path.read_text()


def test_a_students_math_becomes_mathml_that_is_only_math():
    from untrusted.mathml import MAX_TEX, tex_to_mathml

    assert tex_to_mathml(r"\text{<b}") == r'<code class="tex">\text{&lt;b}</code>'  # not XML: shown as TeX
    assert tex_to_mathml("x" * (MAX_TEX + 1)).startswith('<code class="tex">')
    styled = tex_to_mathml(r"\mathrm{d}x \style{background:url(javascript:alert(1))}{y} \color{red}{z}")
    assert "<mi" in styled and "javascript" not in styled and "url(" not in styled and "style=" not in styled
    assert tex_to_mathml(r"\sqrt{2}", display=True).startswith(
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'
    )


# Names that would make one student's report file another's, or a path out of --out. The folder names
# come in nbgrader's layout; names no folder can have (a slash, NUL) come from the roster, which maps a
# Canvas download's user id to any student_id the instructor's spreadsheet holds.
FOLDER_NAMES = ["bob", "bob.gradescope", "bob.json", "x", "x.feedback", "Bob", "BOB", "back\\slash", "con", "-rf"]
ROSTER_NAMES = ["../escape", "a/b", "a\\b", "..", ".", "x\x00y", "~/home", "a/../../up"]


@pytest.fixture(scope="module")
def colliding(tmp_path_factory):
    root = tmp_path_factory.mktemp("colliding")
    planted = root / "planted"  # a roster name that is an absolute path: nothing may be written there
    roster_names = [*ROSTER_NAMES, str(planted)]
    submitted = root / "submitted"
    # Each file is its own (a comment with its number), so each report's hash says whose it is; bob and x
    # hand in a correct softmax, the names made to collide with theirs hand in none.
    for number, name in enumerate(FOLDER_NAMES):
        text = SOFTMAX if name in {"bob", "x"} else "def other():\n    return 1\n"
        write(submitted / name / ASSIGNMENT / f"{ASSIGNMENT}.py", f"{text}# {number}\n")
    canvas = root / "canvas"
    for number, _ in enumerate(roster_names):
        write(canvas / f"someone_{7000 + number}_{9000 + number}_{ASSIGNMENT}.py", f"{SOFTMAX}# canvas {number}\n")
    roster = root / "roster.csv"
    with roster.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "name", "email", "canvas_id"])
        for number, name in enumerate(roster_names):
            writer.writerow([name, f"Student {number}", f"s{number}@example.edu", 7000 + number])
    out = root / "out"
    imported = subprocess.run(
        [sys.executable, "-m", "autograder", "roster", "import", str(roster), "--gradebook", str(out / "gradebook.db")],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert imported.returncode == 0, imported.stderr
    before = {path for path in root.rglob("*") if out not in path.parents}
    completed = grade(submitted, canvas, out=out)
    after = {path for path in root.rglob("*") if out not in path.parents}
    return {
        "completed": completed,
        "out": out,
        "root": root,
        "new_outside": after - before,
        "roster_names": roster_names,
    }


@pytest.mark.slow
def test_no_name_writes_outside_the_output_folder(colliding):
    completed = colliding["completed"]
    assert completed.returncode == 0, completed.stderr
    assert b"Traceback" not in completed.stderr
    assert colliding["new_outside"] == set()  # nothing new beside the submissions, nothing above them
    assert not list(colliding["root"].parent.glob("escape*")) and not list(colliding["root"].glob("up*"))
    for path in colliding["out"].rglob("*"):
        assert path.parent == colliding["out"] and path.is_file() and not path.is_symlink(), path


@pytest.mark.slow
def test_every_student_has_three_files_of_their_own(colliding):
    out = colliding["out"]
    expected = {name.replace("\\", "\\\\") for name in FOLDER_NAMES} | set(colliding["roster_names"])
    stems: dict[str, set[str]] = {}
    for path in out.iterdir():
        if path.name in {"grades.csv", "gradebook.db"}:
            continue
        stem, suffix = path.name.split(".", 1)
        assert suffix in {"json", "feedback.txt", "gradescope.json"}, path.name
        stems.setdefault(stem, set()).add(suffix)
    assert len(stems) == len(expected)  # one stem per student: no two share a file
    assert all(suffixes == {"json", "feedback.txt", "gradescope.json"} for suffixes in stems.values())
    owners = {}
    for stem in stems:
        report = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
        gradescope = json.loads((out / f"{stem}.gradescope.json").read_text(encoding="utf-8"))
        assert gradescope["extra_data"]["sha256"] == report["sha256"]  # the same student's, not a namesake's
        owners[report["student"]] = (stem, report)
    assert set(owners) == expected
    # A name ending like another's report file gets a file of its own; the plain names keep theirs.
    assert owners["bob"][0] == "bob" and owners["x"][0] == "x"
    assert softmax_score(owners["bob"][1]) == 2 and softmax_score(owners["x"][1]) == 2
    assert json.loads((out / "bob.gradescope.json").read_text())["score"] == owners["bob"][1]["score"]
    for name in ("bob.gradescope", "bob.json", "x.feedback", "Bob", "BOB", "con", "-rf"):
        assert owners[name][0] != name and "." not in owners[name][0], name
        assert softmax_score(owners[name][1]) == 0
    # Stems differ whatever the file system's case: Bob's and BOB's files are not bob's on macOS.
    assert len({stem.casefold() for stem in stems}) == len(stems)


@pytest.mark.slow
def test_the_spreadsheet_and_the_gradebook_keep_the_real_names(colliding):
    from .gradebook_view import recorded

    expected = {name.replace("\\", "\\\\") for name in FOLDER_NAMES} | set(colliding["roster_names"])
    assert set(recorded(colliding["out"] / "gradebook.db")) == expected
    rows = list(csv.reader((colliding["out"] / "grades.csv").open(encoding="utf-8", newline="")))
    students = {row[0] for row in rows[1:]}
    assert len(rows) - 1 == len(expected)
    assert {"bob.gradescope", "x.feedback", "../escape", "a/b", ".."} <= students
