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
        [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, *map(str, paths), "--out", str(out),
         "--jobs", "2", "--reference", "numpy", "--timeout", "5"],
        capture_output=True, timeout=600, cwd=ROOT,
    )  # fmt: skip


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
    cells = [{"cell_type": "code", "metadata": {}, "source": f"raise ValueError({'y' * 5000!r})", "outputs": [],
              "execution_count": None} for _ in range(3000)]  # fmt: skip
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
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": SOFTMAX, "outputs": [], "execution_count": None}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
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
    assert tex_to_mathml(r"\sqrt{2}", display=True).startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" '
                                                              'display="block">')  # fmt: skip
