"""A notebook of one's own: values drawn per student (autograder/own_values.py), through the real
commands (`autograder release`, `fetch`, `grade`, `verify`) and the real sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.gradescope import NO_STUDENT, run_in_gradescope
from autograder.own_values import TAG, assigned_values, own_notebook_file, student_values
from autograder.release import release
from commands.autograder import main as autograder_main

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

NAME = "attention-of-your-own"
FOLDER = ASSIGNMENTS / NAME
NOTEBOOK = f"{NAME}.ipynb"


def autograder(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = autograder_main([str(arg) for arg in args])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def parameters_cell(path: Path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    (cell,) = [c for c in notebook["cells"] if TAG in c["metadata"].get("tags", [])]
    return cell


def cell_values(path: Path) -> dict:
    cell = parameters_cell(path)
    return assigned_values(["".join(cell["source"])], ["seq_len", "d_model", "data_seed"])


def test_each_student_gets_the_same_values_every_time_and_their_own(tmp_path, capsys):
    """`autograder fetch`: the same values twice for ada, in a locked cell; other values for grace;
    a notebook there already is kept; `release` keeps the instructor's template."""
    assignment = load_assignment(FOLDER)
    code, out, err = autograder(capsys, "release", FOLDER, "--out", tmp_path / "release")
    assert code == 0, err
    template = tmp_path / "release" / NOTEBOOK
    assert cell_values(template) == {"seq_len": 8, "d_model": 16, "data_seed": 2026}  # the master's own
    assert "gradewright" not in json.loads(template.read_text())["metadata"]

    fetched = {}
    for student, out_dir in (("ada", "ada"), ("grace", "grace"), ("ada", "ada-again")):
        code, out, err = autograder(capsys, "fetch", FOLDER, "--student", student, "--out", tmp_path / out_dir)
        assert code == 0, err
        assert out.strip() == str(tmp_path / out_dir / NOTEBOOK)
        fetched[out_dir] = tmp_path / out_dir / NOTEBOOK
    ada = student_values(assignment, "ada")
    assert cell_values(fetched["ada"]) == cell_values(fetched["ada-again"]) == ada
    assert fetched["ada"].read_bytes() == fetched["ada-again"].read_bytes()
    assert cell_values(fetched["grace"]) == student_values(assignment, "grace") != ada
    cell = parameters_cell(fetched["ada"])
    assert cell["metadata"]["editable"] is False and cell["metadata"]["deletable"] is False
    assert "drawn for you (ada)" in "".join(cell["source"])
    assert json.loads(fetched["ada"].read_text())["metadata"]["gradewright"] == {
        "assignment": NAME,
        "student": "ada",
        "parameters": ada,
    }

    fetched["ada"].write_text("my work", encoding="utf-8")
    code, out, err = autograder(capsys, "fetch", FOLDER, "--student", "ada", "--out", tmp_path / "ada")
    assert code == 2 and "exists already" in err and len(err.strip().splitlines()) == 1
    assert fetched["ada"].read_text() == "my work"
    code, _, err = autograder(capsys, "fetch", FOLDER, "--student", "ada", "--out", tmp_path / "ada", "--overwrite")
    assert code == 0, err
    assert cell_values(fetched["ada"]) == ada


def test_the_sites_copy_of_the_released_notebook_is_the_students_own(tmp_path):
    """What the site's download sends a student: the released file with their values, the same
    notebook `autograder fetch` writes; an assignment without parameters, the file as it is."""
    assignment = load_assignment(FOLDER)
    released = release(assignment, tmp_path / "released")
    fetched = release(assignment, tmp_path / "ada", student="ada")
    assert own_notebook_file(assignment, released, "ada") == fetched.read_bytes()
    plain = load_assignment(ASSIGNMENTS / "sequences-and-attention")
    assert own_notebook_file(plain, released, "ada") == released.read_bytes()


def test_a_class_fetched_at_once_gets_a_folder_each(tmp_path, capsys):
    """Several --student: each student's notebook in a folder of their own, nbgrader's transform once;
    an id that is no plain folder name is refused before anything is written."""
    assignment = load_assignment(FOLDER)
    students = ["ada", "grace", "alan", "ada"]
    code, out, err = autograder(capsys, "fetch", FOLDER, *[f"--student={s}" for s in students], "--out", tmp_path)
    assert code == 0, err
    assert out.splitlines() == [str(tmp_path / student / NOTEBOOK) for student in ("ada", "grace", "alan")]
    for student in ("ada", "grace", "alan"):
        assert cell_values(tmp_path / student / NOTEBOOK) == student_values(assignment, student)
    for bad in ("../x", ".hidden", "a/b"):
        code, _, err = autograder(capsys, "fetch", FOLDER, "--student", "bob", f"--student={bad}", "--out", tmp_path)
        assert code == 2 and "not a plain folder name" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "bob").exists()


@pytest.mark.parametrize(
    "code, found",
    [
        ("seq_len = 7  # yours\nseq_len = 9\n", {"seq_len": 7}),  # the first assignment, its comment aside
        ("d_model = [8, 12.5, 'x']\n", {"d_model": [8, 12.5, "x"]}),
        ("seq_len = f(3)\nd_model == 8\n    data_seed = 4\nseq_len: int = 5\n", {}),  # run nothing, top level only
        ("seq_len = True\nd_model = None\ndata_seed = {1: 2}\n", {}),  # no value a draw gives
        (
            "seq_len = "
            + " " * 1_000_000
            + "7\nd_model = ((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))\n",
            {"d_model": 1},
        ),
    ],
)
def test_the_notebooks_values_are_read_never_run(code, found):
    """What the grader and the similarity report read of a notebook's values: literal values of
    top-level lines, in the grader's own process, so nothing the student wrote is run, and a line
    too long to be a parameter's is passed over."""
    assert assigned_values([code], ["seq_len", "d_model", "data_seed"]) == found


def test_values_vary_across_students_stay_in_their_ranges_and_follow_the_course_seed():
    assignment = load_assignment(FOLDER)
    drawn = [student_values(assignment, f"student-{n}") for n in range(200)]
    assert len({tuple(values.values()) for values in drawn}) > 190
    assert {values["d_model"] for values in drawn} == {8, 12, 16, 24}
    assert {values["seq_len"] for values in drawn} == set(range(5, 13))
    assert all(1 <= values["data_seed"] <= 999999 for values in drawn)
    next_term = assignment.model_copy(update={"course_seed": "2027"})
    assert [student_values(next_term, f"student-{n}") for n in range(20)] != drawn[:20]
    # The draw is the generated questions' rule: the same in another process.
    script = (
        "from autograder.assignment import load_assignment; from autograder.own_values import student_values; "
        f"print(student_values(load_assignment({str(FOLDER)!r}), 'student-7'))"
    )
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert other.stdout.strip() == str(drawn[7])


def _solved(fetched: Path, into: Path, edit: dict | None = None) -> None:
    """``fetched`` with the solution's functions in a cell of their own at the end (and its
    parameters cell's lines replaced as ``edit`` says), handed in at ``into``."""
    notebook = json.loads(fetched.read_text(encoding="utf-8"))
    solution = (FOLDER / "known" / "correct.py").read_text(encoding="utf-8")
    functions = solution[solution.index("def attention") :]
    for cell in notebook["cells"]:
        if edit and TAG in cell["metadata"].get("tags", []):
            source = "".join(cell["source"])
            for old, new in edit.items():
                source = source.replace(old, new)
            cell["source"] = source
    notebook["cells"].append({"cell_type": "code", "id": "solved", "metadata": {}, "outputs": [], "source": functions})
    into.mkdir(parents=True)
    (into / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")


@pytest.mark.slow
@needs_sandbox
def test_each_notebook_is_graded_with_its_students_values_and_a_swapped_one_is_caught(tmp_path, capsys):
    """ada hands in her own notebook, solved; grace hands in ada's; alan hands in his own with its
    values edited to ada's. Each is graded with the values drawn for its student: ada passes, and
    the other two fail the question whose answer rests on the values, their reports saying the
    notebook's values are not theirs (data, never an exception)."""
    assignment = load_assignment(FOLDER)
    for student in ("ada", "alan"):
        assert autograder(capsys, "fetch", FOLDER, "--student", student, "--out", tmp_path / student)[0] == 0
    ada, alan = student_values(assignment, "ada"), student_values(assignment, "alan")
    submitted = tmp_path / "submitted"
    _solved(tmp_path / "ada" / NOTEBOOK, submitted / "ada" / NAME)
    _solved(tmp_path / "ada" / NOTEBOOK, submitted / "grace" / NAME)
    edit = {f"{name} = {alan[name]!r}": f"{name} = {ada[name]!r}" for name in alan}
    _solved(tmp_path / "alan" / NOTEBOOK, submitted / "alan" / NAME, edit)
    assert cell_values(submitted / "alan" / NAME / NOTEBOOK) == ada

    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", FOLDER, submitted, "--out", tmp_path / "graded"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    said = completed.stderr.splitlines()
    assert sorted(line for line in said if "values are not theirs" in line) == [
        f"{student}: the notebook's values are not theirs ({', '.join(differing)})"
        for student in ("alan", "grace")
        for differing in [[n for n in ada if student_values(assignment, student)[n] != ada[n]]]
    ], completed.stderr
    reports = {s: json.loads((tmp_path / "graded" / f"{s}.json").read_text()) for s in ("ada", "grace", "alan")}
    statuses = {s: {q["id"]: q["status"] for q in r["questions"]} for s, r in reports.items()}
    assert statuses["ada"] == {"attention": "passed", "your_sequence": "passed"}
    assert reports["ada"]["score"] == 4
    assert reports["ada"]["own_values"] == {"student": ada, "notebook": ada, "matches": True, "differing": []}
    assert not [e for e in reports["ada"]["errors"] if "values" in e]
    for student in ("grace", "alan"):
        own = student_values(assignment, student)
        report = reports[student]
        # The general function passes at the student's own sizes; the answer computed from the
        # notebook's (ada's) values does not match the one computed from the student's own.
        assert statuses[student] == {"attention": "passed", "your_sequence": "failed"}, report
        differing = [name for name in own if own[name] != ada[name]]
        assert report["own_values"] == {"student": own, "notebook": ada, "matches": False, "differing": differing}
        sentence = next(e for e in report["errors"] if e.startswith("This notebook's values are not"))
        name = differing[0]
        assert f"{name} is {ada[name]!r} there, {own[name]!r} for you" in sentence
        assert sentence in (tmp_path / "graded" / f"{student}.feedback.txt").read_text()

    # The similarity report names each notebook that is not its student's, and whose values it holds.
    code, out, err = autograder(
        capsys, "similarity", FOLDER, "--gradebook", tmp_path / "graded" / "gradebook.db", "--out", tmp_path / "s.html"
    )
    assert code == 0, err
    assert "grace's notebook holds ada's values" in out and "alan's notebook holds ada's values" in out
    assert "ada's notebook" not in out
    assert "grace&#x27;s notebook holds ada&#x27;s values" in (tmp_path / "s.html").read_text()


@needs_sandbox
def test_gradescope_grades_with_the_values_of_the_student_its_metadata_names(tmp_path, capsys, monkeypatch):
    """Gradescope's run: the student is the one its submission_metadata.json names (never a file of
    the submission); without one, the results say why nothing was graded."""
    monkeypatch.setenv("GRADEWRIGHT_SECRET", "a secret of the test's")
    assert autograder(capsys, "fetch", FOLDER, "--student", "ada", "--out", tmp_path / "ada")[0] == 0
    root = tmp_path / "autograder"
    _solved(tmp_path / "ada" / NOTEBOOK, root / "submission")
    results = {}
    for sid in ("ada", "grace", ""):
        metadata = {"users": [{"email": "", "sid": sid, "name": "A student"}]}
        (root / "submission_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
        results[sid] = json.loads(run_in_gradescope(load_assignment(FOLDER), root).read_text())
    assert results["ada"]["score"] == 4, results["ada"]
    assert results["grace"]["score"] == 2 and "not the ones drawn for you" in results["grace"]["output"]
    assert results[""] == {"score": 0, "output": NO_STUDENT}


@needs_sandbox
def test_verify_grades_the_known_versions_with_the_templates_values(capsys):
    """The known versions are written with the master's values: verify grades them with those (as
    any student id, they would fail), and every verdict holds."""
    code, out, err = autograder(capsys, "verify", FOLDER, "--secrets", "1")
    assert code == 0, out + err
    assert "every verdict holds" in out


@needs_sandbox
def test_verify_grades_the_solution_with_values_drawn_for_students(tmp_path, capsys):
    """A range the solution cannot take (no tokens at all) fails verify, naming the values drawn,
    though every known version passes with the template's."""
    folder = tmp_path / NAME
    shutil.copytree(FOLDER, folder)
    manifest = folder / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("range = [\n    5,\n    12,\n]", "range = [0, 1]"))
    code, out, err = autograder(capsys, "verify", folder, "--secrets", "1")
    assert code == 1, out + err
    failing = [line for line in out.splitlines() if line.startswith("FAIL correct.py with the values drawn for")]
    assert failing and all("seq_len = 0" in line for line in failing), out
    assert "ok   correct.py" in out and "fail with values drawn for students" in out


def test_parameters_without_their_cell_or_with_a_bad_draw_are_one_line_errors(tmp_path, capsys):
    folder = tmp_path / NAME
    shutil.copytree(FOLDER, folder)
    source = folder / "source" / NOTEBOOK
    notebook = json.loads(source.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        cell["metadata"].pop("tags", None)
    source.write_text(json.dumps(notebook), encoding="utf-8")
    for command in ("release", "fetch"):
        args = ["--student", "ada"] if command == "fetch" else []
        code, _, err = autograder(capsys, command, folder, *args, "--out", tmp_path / "out")
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert str(source) in err and "no code cell is tagged 'parameters'" in err
        assert "Traceback" not in err

    master = folder / f"{NAME}.master.ipynb"
    notebook = json.loads(master.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        cell["metadata"].pop("tags", None)
    master.write_text(json.dumps(notebook), encoding="utf-8")
    code, _, err = autograder(capsys, "assign", master, "--out", tmp_path / "assigned")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{master}: cell 1 (# ASSIGNMENT" in err and "tag exactly one code cell 'parameters'" in err
    assert not (tmp_path / "assigned").exists()

    manifest = folder / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("range = [\n    5,\n    12,\n]", "range = [12, 5]"))
    code, _, err = autograder(capsys, "fetch", folder, "--student", "ada", "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(manifest) in err and "parameters.seq_len" in err and "above its high end" in err
    renamed = manifest.read_text().replace("range = [12, 5]", "range = [5, 12]").replace("d_model]", "lambda]")
    manifest.write_text(renamed)
    code, _, err = autograder(capsys, "fetch", folder, "--student", "ada", "--out", tmp_path / "out")
    assert code == 2 and "'lambda' is not a name a notebook's cell can assign" in err, err
