"""The trust boundary, round three (issue #43): what a worker reports is checked against what the
grader knows (sandbox/reported.py), the rerun of failing checks changes feedback's wording and never a
score, the reference's work on a submission's arguments has a budget of its own, and a correct file in
an unusual encoding is read as Python reads it. The forged line numbers, the amplified rerun and the
million tiny values are attacked in the hostile batch (tests/test_sandbox_attacks.py, forged_reports.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.budgeted import run_within_budget
from autograder.errors import BadReturn
from autograder.sandbox.reported import FIELDS, Cell, CellError, code_line, describe_exception
from autograder.sandbox.session import DecodingTimeout, decode_returned
from autograder.submissions import extract_bytes, strip_magics

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

HOSTILE = Path(__file__).parent / "hostile"
CELLS = [Cell(index=1, source="# a comment\nimport numpy as np\n\ndef f(x):\r\n    return x\rf(1)\n")]


@pytest.mark.parametrize(
    "cell, line, shown",
    [
        (1, 2, True),  # code
        (1, 5, True),  # after a \r\n: a line as Python counts it
        (1, 6, True),  # after a lone \r: a line too
        (1, 1, False),  # a comment
        (1, 3, False),  # blank
        (1, 605708, False),  # past the end: a hidden input, as a line number
        (2, 2, False),  # a cell the grader never sent
        (1, 0, False),
        (1, True, False),
        (1, "2", False),
    ],
)
def test_a_reported_line_is_shown_only_when_it_is_a_line_of_code_of_the_cell_it_names(cell, line, shown):
    assert (code_line(CELLS, cell, line) is not None) is shown
    said = describe_exception({"type": "ValueError", "cell": cell, "line": line}, CELLS)
    assert said == (f"ValueError at line {line} of your code" if shown else "ValueError")
    error = CellError.from_worker({"cell": cell, "type": "NameError", "message": "x", "line": line}, CELLS)
    assert error is None if cell != 1 else error.line == (line if shown else None)


def test_every_field_that_reaches_feedback_has_its_rule_named_once():
    assert describe_exception({"type": "SECRET_42", "own_class": 1}, CELLS) == "an exception"
    assert all(rule.strip() for rule in FIELDS.values())
    assert {"call: error.cell, error.line", "call: error.type", "watched: calls[].name"} <= set(FIELDS)


def test_reading_an_answer_stops_at_the_calls_deadline():
    many = list(range(5000))
    assert decode_returned("f", many, [], deadline=None) == many
    with pytest.raises(DecodingTimeout):
        decode_returned("f", many, [], deadline=0.0)  # a deadline long past
    assert issubclass(DecodingTimeout, BadReturn)


def test_trusted_work_on_chosen_arguments_runs_within_its_budget():
    assert run_within_budget(lambda: {"a": 1}, 5, 64) == {"a": 1}
    assert run_within_budget(lambda: float(np.ones((20_000, 20_000)).sum()), 5, 64) is None  # 3 GB: refused
    assert run_within_budget(lambda: 1 / 0, 5, 64) is None


def test_a_byte_order_mark_and_old_mac_line_endings_are_python_too():
    source = "%matplotlib inline\rimport math\r\rdef f():\r    !ls\r    return math.pi\r"
    (cell,) = extract_bytes(b"\xef\xbb\xbf" + source.encode(), ".py").cells
    assert cell.source == "pass\rimport math\r\rdef f():\r    pass\r    return math.pi\r"
    namespace: dict = {}
    exec(compile(cell.source, "<cell 1>", "exec"), namespace)
    assert namespace["f"]() == pytest.approx(3.14159, abs=1e-5)
    assert strip_magics("a = 1\r\n%time b = 2\r\nc = 3") == "a = 1\r\npass\r\nc = 3"


@needs_sandbox
@pytest.mark.slow  # one batch in the real sandbox: about ten seconds
def test_a_rerun_changes_wording_never_a_score_and_unusual_encodings_are_graded(tmp_path):
    """With charge_dependents = false, a softmax that is right only while watched (sys.getprofile())
    scores what the same code without the trick scores; a correct file with a byte order mark and a
    first line that is a magic, saved with carriage returns only, scores full marks."""
    for folder in ("sequences-and-attention", "references"):
        shutil.copytree(ASSIGNMENTS / folder, tmp_path / folder)
    manifest = tmp_path / "sequences-and-attention" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("charge_dependents = true", "charge_dependents = false"))
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    shutil.copy(HOSTILE / "watch" / "detects_the_watch.py", submissions)
    shutil.copy(ASSIGNMENTS / "sequences-and-attention" / "known" / "unstable_softmax_used.py", submissions)
    correct = (ASSIGNMENTS / "sequences-and-attention" / "known" / "correct_vectorised.py").read_text()
    (submissions / "windows_and_old_mac.py").write_bytes(
        b"\xef\xbb\xbf" + ("%matplotlib inline\n" + correct).replace("\n", "\r").encode()
    )
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(tmp_path / "sequences-and-attention"), str(submissions)]
        + ["--out", str(out), "--jobs", "2", "--reference", "numpy"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    reports = {path.stem: json.loads(path.read_text()) for path in out.glob("*.json") if path.stem.count(".") == 0}
    aware, unaware = reports["detects_the_watch"], reports["unstable_softmax_used"]
    statuses = {q["id"]: q["status"] for q in aware["questions"]}
    assert statuses == {q["id"]: q["status"] for q in unaware["questions"]}
    assert statuses["attention"] == statuses["self_attention"] == "not_graded"
    assert aware["score"] == unaware["score"]
    # The rerun still words the feedback: watched, the trick's softmax looked right.
    attention = next(q for q in aware["questions"] if q["id"] == "attention")
    assert "returns the right values" in attention["feedback"]
    assert reports["windows_and_old_mac"]["score"] == 10, reports["windows_and_old_mac"]["errors"]


def _autograder(*args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_check_refuses_a_malformed_notebook_in_the_words_grade_uses(tmp_path):
    notebook = json.loads((ASSIGNMENTS / "sequences-and-attention" / "known" / "released_unchanged.ipynb").read_text())
    notebook["cells"][2] = ["not", "a", "cell"]
    broken = tmp_path / "broken.ipynb"
    broken.write_text(json.dumps(notebook))
    completed = _autograder("check", broken, "--allow-unsandboxed", cwd=tmp_path)
    said = "this file is not a Jupyter notebook: cell 3 is not a cell (not a JSON object)"
    assert completed.returncode == 2 and completed.stderr == f"autograder: {broken}: {said}\n"
    from autograder.submissions import Unreadable, extract

    with pytest.raises(Unreadable, match=r"^" + said.replace("(", r"\(").replace(")", r"\)") + "$"):
        extract(broken)  # what grade puts in the report: the same reader, the same words


def test_check_says_it_is_unsandboxed_and_refuses_root_and_hidden_tests(tmp_path, monkeypatch):
    from autograder import public_tests

    assert "WITHOUT the sandbox" in _autograder("check", "--help").stdout
    notebook = ASSIGNMENTS / "sequences-and-attention" / "known" / "released_unchanged.ipynb"
    completed = _autograder("check", notebook)  # inside the project's course, beside its hidden tests
    assert completed.returncode == 2 and "not run:" in completed.stderr and "--allow-unsandboxed" in completed.stderr
    assert "NotImplementedError" not in completed.stdout  # none of the notebook's code ran
    monkeypatch.setattr(public_tests.os, "geteuid", lambda: 1000)
    assert "holds hidden tests" in (public_tests.unsafe_place(notebook) or "")
    own = tmp_path / "mine.ipynb"
    shutil.copy(notebook, own)
    monkeypatch.chdir(tmp_path)
    assert public_tests.unsafe_place(own) is None  # a student's own folder
    monkeypatch.setattr(public_tests.os, "geteuid", lambda: 0)
    assert "as root" in (public_tests.unsafe_place(own) or "")


@pytest.mark.slow  # a Gradescope bundle exported and run: about ten seconds
def test_gradescope_says_when_it_grades_without_the_sandbox(tmp_path):
    """Where bubblewrap cannot start (no bwrap on the PATH here), the results say the submission ran
    unsandboxed, in the output its student and staff see, and in the run's log."""
    from .test_gradescope import laid_out

    root = laid_out(tmp_path)
    shutil.copy(ASSIGNMENTS / "attention-not-explanation" / "known" / "correct_projection.py", root / "submission")
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    environment = {**os.environ, "GRADEWRIGHT_ROOT": str(root), "PYTHON": sys.executable, "PATH": str(no_bwrap)}
    completed = subprocess.run(
        ["/bin/bash", str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["output"].startswith("Graded without the sandbox: it cannot start in this container")
    assert "bubblewrap" in results["output"] and "Graded without the sandbox" in completed.stderr
    assert results["score"] > 0


MARKUP = "Mallory [link=http://evil.example/]Reset[/link] [bold red]ADMIN[/]"
ACCOUNT_WITH_MARKUP = """
import sys
from pathlib import Path
from service.setup import prepare
prepare(Path(sys.argv[1]), sys.argv[2], demo=False)
from django.contrib.auth.models import User
User.objects.create_user("mallory", first_name=sys.argv[3])
from commands.autograder import main
sys.exit(main(["--course", sys.argv[1], "accounts", "list", "--database-url", sys.argv[2]]))
"""


@pytest.mark.slow  # a course's database made and migrated: ten seconds or more on a busy machine
def test_rich_markup_in_a_name_is_shown_as_written_on_the_staffs_terminal(tmp_path):
    from untrusted.text import for_terminal

    assert subprocess.run(["course", "init", "demo"], cwd=tmp_path, capture_output=True, timeout=120).returncode == 0
    listed = subprocess.run(
        [sys.executable, "-c", ACCOUNT_WITH_MARKUP, tmp_path / "demo", f"sqlite:///{tmp_path / 'db.sqlite3'}", MARKUP],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert listed.returncode == 0, listed.stderr
    assert MARKUP in listed.stdout  # as written: no link made, no style applied
    from rich.console import Console

    console = Console(record=True, width=300, color_system="truecolor", force_terminal=True)
    console.print(for_terminal(MARKUP + "\x1b]8;;http://evil.example/\x07"))
    shown = console.export_text()
    assert MARKUP in shown and "\x1b" not in shown and "\\x1b]8;;" in shown


def test_the_docs_name_every_reported_field_and_its_rule():
    page = (ROOT / "docs" / "explanation" / "sandbox.md").read_text()
    assert [field for field, rule in FIELDS.items() if f"| `{field}` | {rule} |" not in page] == []


def test_rich_markup_in_a_lesson_title_is_listed_as_written(tmp_path):
    assert subprocess.run(["course", "init", "demo"], cwd=tmp_path, capture_output=True, timeout=120).returncode == 0
    lesson = tmp_path / "demo" / "lessons" / "averages.lesson.json"
    document = json.loads(lesson.read_text())
    document["lesson"]["title"] = MARKUP
    lesson.write_text(json.dumps(document))
    listed = subprocess.run(
        ["course", "lessons", "lessons"],
        cwd=tmp_path / "demo",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert listed.returncode == 0, listed.stderr
    assert MARKUP in listed.stdout
