"""The gradebook through the real commands: every submission kept, hand grading from a sheet,
history, statistics, rosters, platform downloads and grade files, late work, and bad gradebooks.

The grading runs are real (sandboxed, the shipped course); the main flow runs on SQLite and on
PostgreSQL (skipped, saying why, where no server runs; never skipped on CI)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commands.autograder import main

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox
from .gradebook_view import recorded

KNOWN = ASSIGNMENTS / "attention-not-explanation" / "known"
ASSIGNMENT = "attention-not-explanation"


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["--course", str(ROOT), *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def grade(folder: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(ROOT),
            "grade",
            ASSIGNMENT,
            str(folder),
            "--out",
            str(out),
            "--reference",
            "numpy",
            "--jobs",
            "2",
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert "Traceback" not in completed.stderr
    return completed


def rewritten_answer(notebook: Path, text: str) -> str:
    """The notebook's JSON with its first written answer replaced by ``text``."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "written_link":
            cell["source"] = text
    return json.dumps(data)


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def fill(sheet: Path, filled: Path, scores: dict[tuple[str, str], tuple[str, str]], extra: list[dict] = ()) -> None:
    rows = read_csv(sheet)
    for row in rows:
        row["score"], row["comment"] = scores.get((row["student"], row["question"]), ("", ""))
    rows += [dict(rows[0], **row) for row in extra]
    with filled.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@needs_sandbox
def test_hand_grading_from_a_sheet_on_every_database(tmp_path, capsys, database):
    submitted = tmp_path / "submitted"
    for student, file in (("alice", "correct_source_notebook.ipynb"), ("bob", "released_unchanged.ipynb")):
        (submitted / student / ASSIGNMENT).mkdir(parents=True)
        shutil.copy(KNOWN / file, submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    out = tmp_path / "out"
    graded = grade(submitted, out, *database)
    assert graded.returncode == 0, graded.stderr

    # The report keeps the written answers, by cell; the released stub is no answer.
    report = json.loads((out / "alice.json").read_text())
    written = next(q for q in report["questions"] if q["id"] == "written")
    assert set(written["answers"]) == {"written_link", "written_check"}
    assert "Check by intervention" in written["answers"]["written_check"]
    bob = json.loads((out / "bob.json").read_text())
    assert next(q for q in bob["questions"] if q["id"] == "written")["answers"] == {}

    sheet = tmp_path / "marks.csv"
    code, said, _ = cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *database)
    assert code == 0 and "2 answers to mark" in said
    rows = read_csv(sheet)
    assert [(r["student"], r["question"], r["points"], r["status"], r["score"]) for r in rows] == [
        ("alice", "written", "3", "unmarked", ""),
        ("bob", "written", "3", "unmarked", ""),
    ]
    assert "Check by intervention" in rows[0]["answer"] and rows[1]["answer"] == "(no written answer)"

    filled = tmp_path / "filled.csv"
    fill(
        sheet,
        filled,
        {("alice", "written"): ("2.5", "=good, but no baseline"), ("bob", "written"): ("4", "too many")},
        extra=[{"student": "nobody", "score": "1"}, {"question": "top_pairs", "score": "1"}],
    )
    code, said, err = cli(capsys, "marks", "import", ASSIGNMENT, filled, "--reports", out, *database)
    assert code == 1
    assert "1 mark recorded" in said and "3 rows refused" in said
    assert f"{filled}: row 3: score 4 is outside 0..3" in err
    assert f"{filled}: row 4: no submission of 'nobody' is in the gradebook" in err
    assert f"{filled}: row 5: 'top_pairs' is not a question graded by hand" in err

    # The mark and its comment reach every file written from the gradebook.
    grades = {row["student"]: row for row in read_csv(out / "grades.csv")}
    assert (grades["alice"]["written"], grades["alice"]["score"], grades["alice"]["final_score"]) == (
        "2.5",
        "9.5",
        "9.5",
    )
    assert grades["bob"]["written"] == "0"
    feedback = (out / "alice.feedback.txt").read_text()
    assert "written: 2.5 / 3 (marked by hand)" in feedback and "=good, but no baseline" in feedback
    gradescope = json.loads((out / "alice.gradescope.json").read_text())
    assert gradescope["score"] == 9.5
    written_test = next(t for t in gradescope["tests"] if t["number"] == "4")
    assert written_test["name"] == "Meaningful link or artefact, and how to check (graded by hand)"
    assert (written_test["output"], written_test["score"], written_test["max_score"]) == (
        "=good, but no baseline",
        2.5,
        3,
    )
    bobs = json.loads((out / "bob.gradescope.json").read_text())["tests"][3]
    assert (bobs["score"], bobs["max_score"], "status" in bobs) == (0, 0, False)  # not marked yet: informational
    alice = json.loads((out / "alice.json").read_text())
    mark = next(q for q in alice["questions"] if q["id"] == "written")["mark"]
    assert (mark["score"], mark["comment"], mark["answer_changed"]) == (2.5, "=good, but no baseline", False)

    # A sheet written again shows the mark (its formula-like comment neutralised for spreadsheets).
    cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *database)
    alice_row = read_csv(sheet)[0]
    assert (alice_row["status"], alice_row["marked_score"], alice_row["marked_comment"]) == (
        "marked",
        "2.5",
        "'=good, but no baseline",
    )


@pytest.mark.slow
@needs_sandbox
def test_a_mark_follows_its_submission_and_is_flagged_when_the_answer_changes(tmp_path, capsys, database):
    folder = tmp_path / "submissions"
    folder.mkdir()
    notebook = folder / "carol.ipynb"
    shutil.copy(KNOWN / "correct_source_notebook.ipynb", notebook)
    out, book = tmp_path / "out", database
    assert grade(folder, out, *book).returncode == 0
    sheet, filled = tmp_path / "marks.csv", tmp_path / "filled.csv"
    cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *book)
    fill(sheet, filled, {("carol", "written"): ("3", "clear")})
    assert cli(capsys, "marks", "import", ASSIGNMENT, filled, *book)[0] == 0

    # A regrade of the same file keeps the mark.
    assert grade(folder, out, "--force", *book).returncode == 0
    assert read_csv(out / "grades.csv")[0]["written"] == "3"

    # A new submission with the same written answer (the code changed) keeps it, unflagged.
    source = json.loads(notebook.read_text())
    source["cells"].append(
        {"cell_type": "code", "metadata": {}, "source": "# tidied", "outputs": [], "execution_count": None}
    )
    notebook.write_text(json.dumps(source))
    assert grade(folder, out, *book).returncode == 0
    cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *book)
    assert read_csv(sheet)[0]["status"] == "marked"

    # A new answer: the old mark stays visible, flagged, until marked again.
    notebook.write_text(rewritten_answer(notebook, "A different answer altogether."))
    assert grade(folder, out, *book).returncode == 0
    cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *book)
    row = read_csv(sheet)[0]
    assert (row["status"], row["marked_score"], "A different answer altogether." in row["answer"]) == (
        "answer changed since marked",
        "3",
        True,
    )
    assert "answer changed since marked" in (out / "carol.feedback.txt").read_text()
    fill(sheet, filled, {("carol", "written"): ("1", "less convincing")})
    assert cli(capsys, "marks", "import", ASSIGNMENT, filled, "--reports", out, *book)[0] == 0
    assert "answer changed" not in (out / "carol.feedback.txt").read_text()
    assert read_csv(out / "grades.csv")[0]["written"] == "1"

    # Every submission is kept, the latest is the current one; history shows them all.
    assert [score for score, _ in recorded(*book[1:])["carol"]] == [7, 7, 7]
    code, said, _ = cli(capsys, "history", "carol", ASSIGNMENT, *book)
    assert code == 0 and "carol: 3 submissions" in said
    assert said.count("8 / 10") == 3  # each submission shows the marks as they stand
    assert said.count("*") == 1


def test_a_marks_sheet_of_another_assignment_changes_nothing(tmp_path, capsys):
    book = tmp_path / "gradebook.db"
    sheet = tmp_path / "other.csv"
    sheet.write_text("assignment,student,question,score,comment\nsequences-and-attention,alice,written,3,\n")
    code, _, err = cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", book)
    assert code == 0
    code, _, err = cli(capsys, "marks", "import", ASSIGNMENT, sheet, "--gradebook", book)
    assert code == 2
    assert err == (
        f"autograder: {sheet}: marks of the assignment 'sequences-and-attention', not of '{ASSIGNMENT}'; "
        "nothing was recorded\n"
    )


def _roster(tmp_path: Path, rows: str = "") -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(
        "student_id,name,email,canvas_id,moodle_id,sis_id\n"
        "s001,Ada Lovelace,ada@example.edu,1001,51,SIS-1\n"
        "s002,Alan Turing,alan@example.edu,1002,52,SIS-2\n"
        "s003,Grace Hopper,grace@example.edu,1003,53,SIS-3\n" + rows,
        encoding="utf-8",
    )
    return path


def _assignment_with(tmp_path: Path, line: str) -> Path:
    """A copy of the assignment whose assignment.toml starts with ``line``."""
    folder = tmp_path / "assignment"
    shutil.copytree(ASSIGNMENTS / ASSIGNMENT, folder, ignore=shutil.ignore_patterns("__pycache__", "known"))
    manifest = folder / "assignment.toml"
    manifest.write_text(line + "\n" + manifest.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def test_canvas_columns_carry_the_assignment_id_where_it_is_known(tmp_path, capsys):
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    assert cli(capsys, "roster", "import", _roster(tmp_path), *book)[0] == 0
    assignment = _assignment_with(tmp_path, "canvas_assignment_id = 4321")
    out = tmp_path / "canvas.csv"
    code, said, err = cli(
        capsys, "grades", "export", assignment, "sequences-and-attention", "--format", "canvas", "--out", out, *book
    )
    assert code == 0 and said == f"{out}: 3 students, 2 assignments\n"
    header = next(csv.reader(out.open(encoding="utf-8")))
    assert header[5:] == [
        "Module 10 assignment: attention is not an explanation (4321)",
        "Module 10 notebook: attention built by hand",
    ]
    assert err == (
        "warning: Canvas matches 1 column by title only, and makes a new assignment where no title is "
        "the same: Module 10 notebook: attention built by hand (set canvas_assignment_id in "
        "assignment.toml, or launch it once from a link placed in Canvas by deep linking, to match by "
        "id)\n"
    )
    code, said, err = cli(capsys, "grades", "export", assignment, "--format", "canvas", "--out", out, *book)
    assert (code, err) == (0, "")  # every column matched by id, every student by their ids


@pytest.mark.parametrize("value", ['"4321"', "43.5", "0", "true"])
def test_a_canvas_assignment_id_that_is_not_a_whole_number_is_one_line_naming_the_file(tmp_path, capsys, value):
    assignment = _assignment_with(tmp_path, f"canvas_assignment_id = {value}")
    code, said, err = cli(
        capsys,
        "grades",
        "export",
        assignment,
        "--format",
        "canvas",
        "--out",
        tmp_path / "c.csv",
        "--gradebook",
        tmp_path / "gradebook.db",
    )
    assert (code, said) == (2, "")
    assert err.startswith(f"autograder: {assignment / 'assignment.toml'}: canvas_assignment_id: Input should be ")
    assert len(err.splitlines()) == 1 and not (tmp_path / "c.csv").exists()


def test_moodle_leaves_the_id_number_empty_without_an_sis_id_and_says_how_to_map(tmp_path, capsys):
    """Moodle stops the whole import at an ID number it does not know, and gives a row whose mapped
    field is empty to the row above's student: every row can be matched by one field, and the rows
    empty in the other come first, where an import mapped by it stops at once."""
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    roster = _roster(
        tmp_path, "s004,Mary Somerville,mary@example.edu,,,\ns005,Nobody Known,,,,\ns006,No Mail,,,,SIS-6\n"
    )
    assert cli(capsys, "roster", "import", roster, *book)[0] == 0
    out = tmp_path / "moodle.csv"
    code, said, err = cli(capsys, "grades", "export", ASSIGNMENT, "--format", "moodle", "--out", out, *book)
    assert code == 0 and said == f"{out}: 6 students, 1 assignment\n"
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert [row[:3] for row in rows] == [
        ["ID number", "Email address", "Full name"],
        ["", "mary@example.edu", "Mary Somerville"],  # first: mapped by ID number, the import stops here
        ["SIS-1", "ada@example.edu", "Ada Lovelace"],
        ["SIS-2", "alan@example.edu", "Alan Turing"],
        ["SIS-3", "grace@example.edu", "Grace Hopper"],
    ]
    assert err.splitlines() == [
        "warning: map the import by Email address on Moodle's import page (mapped by ID number, the import stops "
        "at the first row, whose ID number is empty)",
        "warning: 1 student has no sis_id, so their ID number is empty (s004)",
        "warning: 2 students are left out: Moodle cannot match them by Email address (s005, s006; autograder roster "
        "import gives them an sis_id and email)",
        "warning: 4 grade cells are empty (nothing handed in): Moodle imports an empty cell as no grade, clearing "
        "any grade it has there; --missing zero writes 0, --missing skip leaves out the students who handed in none "
        "of these assignments",
    ]
    # Everyone with an SIS id, someone without an email: for mapping by ID number, that row first.
    book = ["--gradebook", str(tmp_path / "other.db")]
    assert cli(capsys, "roster", "import", _roster(tmp_path, "s006,No Mail,,,,SIS-6\n"), *book)[0] == 0
    code, said, err = cli(
        capsys, "grades", "export", ASSIGNMENT, "--format", "moodle", "--out", out, *book, "--missing", "zero"
    )
    assert [row[:2] for row in csv.reader(out.open(encoding="utf-8"))][1:3] == [
        ["SIS-6", ""],
        ["SIS-1", "ada@example.edu"],
    ]
    assert err == (
        "warning: map the import by ID number on Moodle's import page (mapped by Email address, the import "
        "stops at the first row, whose Email address is empty)\n"
    )


def test_a_moodle_file_no_student_can_be_matched_in_says_so(tmp_path, capsys):
    """Students with neither an sis_id nor an email (graded from files, as the grade files page's
    example is): Moodle could match no row, so the file has none, and the command says why rather
    than writing a header alone without a word."""
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email,canvas_id,moodle_id,sis_id\nq001,Quiet One,,,,\nq002,Quiet Two,,,,\n")
    assert cli(capsys, "roster", "import", roster, *book)[0] == 0
    out = tmp_path / "moodle.csv"
    code, said, err = cli(capsys, "grades", "export", ASSIGNMENT, "--format", "moodle", "--out", out, *book)
    assert code == 0 and said == f"{out}: 2 students, 1 assignment\n"
    assert out.read_text(encoding="utf-8").splitlines()[1:] == []
    assert err == (
        "warning: the file has no rows: Moodle can match none of the 2 students (none has an sis_id or an "
        "email: q001, q002); autograder roster import gives them an sis_id and email\n"
    )


def test_a_roster_with_a_repeated_id_changes_nothing(tmp_path, capsys):
    book = tmp_path / "gradebook.db"
    roster = _roster(tmp_path, "s004,Ada Again,ada2@example.edu,1001,54,SIS-4\n")
    code, _, err = cli(capsys, "roster", "import", roster, "--gradebook", book)
    assert code == 2
    assert err == f"autograder: {roster}: row 5: canvas_id '1001' is repeated; nothing was imported\n"
    code, _, _ = cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", book)
    assert code == 0
    code, _, err = cli(capsys, "history", "s004", "--gradebook", book)
    assert code == 2 and "s004: no such student" in err


@pytest.mark.slow
@needs_sandbox
def test_platform_downloads_map_to_the_roster_and_grade_files_match_the_platforms(tmp_path, capsys):
    book = ["--gradebook", str(tmp_path / "out" / "gradebook.db")]
    assert cli(capsys, "roster", "import", _roster(tmp_path), *book)[0] == 0
    canvas = tmp_path / "canvas"
    canvas.mkdir()
    shutil.copy(KNOWN / "correct_source_notebook.ipynb", canvas / f"lovelaceada_1001_9001_{ASSIGNMENT}.ipynb")
    shutil.copy(KNOWN / "top_pairs_ascending.py", canvas / "turingalan_LATE_1002_9002_answer.py")
    shutil.copy(KNOWN / "correct_projection.py", canvas / "strangerdanger_4242_9003_mine.py")  # not on the roster
    graded = grade(canvas, tmp_path / "out", *book)
    assert graded.returncode == 0, graded.stderr
    assert "warning: strangerdanger_4242 is not on the roster" in graded.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("*.feedback.txt")) == [
        "s001.feedback.txt",
        "s002.feedback.txt",
        "strangerdanger_4242.feedback.txt",
    ]

    moodle = tmp_path / "moodle" / "Grace Hopper_53_assignsubmission_file_"
    moodle.mkdir(parents=True)
    shutil.copy(KNOWN / "correct_projection.py", moodle / "attention.py")
    assert grade(moodle.parent, tmp_path / "out", *book).returncode == 0
    assert (tmp_path / "out" / "s003.json").is_file()

    # Canvas: its gradebook import columns, a Points Possible row, the final score per assignment.
    canvas_file = tmp_path / "canvas.csv"
    code, said, err = cli(
        capsys,
        "grades",
        "export",
        ASSIGNMENT,
        "sequences-and-attention",
        "--format",
        "canvas",
        "--out",
        canvas_file,
        *book,
    )
    assert code == 0 and "4 students, 2 assignments" in said
    assert "no canvas_id" not in err  # the stranger's Canvas id came with their file
    rows = list(csv.reader(canvas_file.open(encoding="utf-8")))
    assert rows[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Module 10 assignment: attention is not an explanation",
        "Module 10 notebook: attention built by hand",
    ]
    assert rows[1] == ["Points Possible", "", "", "", "", "10", "10"]
    by_id = {row[1]: row for row in rows[2:]}
    assert by_id["1001"] == ["Ada Lovelace", "1001", "SIS-1", "ada@example.edu", "", "7", ""]
    assert by_id["1003"][5] == "7"
    assert float(by_id["1002"][5]) < 7  # top_pairs ascending loses its points

    # Moodle: keyed by ID number and email; missing work an empty cell, or zero when asked.
    moodle_file = tmp_path / "moodle.csv"
    code, said, err = cli(
        capsys,
        "grades",
        "export",
        ASSIGNMENT,
        "sequences-and-attention",
        "--format",
        "moodle",
        "--out",
        moodle_file,
        "--missing",
        "zero",
        *book,
    )
    rows = read_csv(moodle_file)
    assert list(rows[0])[:3] == ["ID number", "Email address", "Full name"]
    ada = next(row for row in rows if row["Email address"] == "ada@example.edu")
    assert (ada["ID number"], ada["Module 10 notebook: attention built by hand"]) == ("SIS-1", "0")
    # The stranger has neither an SIS id nor an email: never our own id in ID number, which would stop
    # Moodle's whole import; left out, and said so.
    assert [row["ID number"] for row in rows] == ["SIS-1", "SIS-2", "SIS-3"]
    assert "warning: map the import by ID number on Moodle's import page\n" in err
    assert "1 student is left out: Moodle cannot match them by ID number (strangerdanger_4242;" in err
    assert "grade cells are empty" not in err  # --missing zero: none is
    # An empty cell clears Moodle's grade: said, and --missing skip leaves out who handed in nothing.
    code, said, err = cli(
        capsys, "grades", "export", "sequences-and-attention", "--format", "moodle", "--out", moodle_file, *book
    )
    assert code == 0 and "3 grade cells are empty (nothing handed in): Moodle imports an empty cell as no grade" in err
    code, said, err = cli(
        capsys,
        "grades",
        "export",
        "sequences-and-attention",
        "--format",
        "moodle",
        "--out",
        moodle_file,
        "--missing",
        "skip",
        *book,
    )
    assert code == 0 and "0 students, 1 assignment" in said
    assert "3 students handed in none of these assignments and are left out (--missing skip)" in err
    assert read_csv(moodle_file) == []
    code, said, err = cli(
        capsys, "grades", "export", ASSIGNMENT, "--format", "moodle", "--out", moodle_file, "--missing", "skip", *book
    )
    assert "4 students, 1 assignment" in said and "left out (--missing skip)" not in err

    # Statistics over the current grades.
    code, said, _ = cli(capsys, "stats", ASSIGNMENT, "--out", tmp_path / "stats", *book)
    assert code == 0
    stats = {row["question"]: row for row in read_csv(tmp_path / "stats" / "questions.csv")}
    assert stats["top_pairs"]["students"] == "4"
    assert stats["top_pairs"]["share_full"] == "0.75" and stats["written"]["share_zero"] == "1"
    assert stats["top_pairs"]["most_failed_checks"].startswith("test_")
    assert (tmp_path / "stats" / "questions.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "stats" / "overview.png").read_bytes()[:4] == b"\x89PNG"


@needs_sandbox
def test_late_work_costs_its_penalty_until_an_extension(tmp_path, capsys):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "assignments", course / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    manifest = course / "assignments" / ASSIGNMENT / "assignment.toml"
    due = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
    manifest.write_text(
        f'due = {due.isoformat()}\nlate_penalty = "10% per day"\nlate_until = {(due + timedelta(days=5)).isoformat()}\n'
        + manifest.read_text()
    )
    folder = tmp_path / "submissions"
    folder.mkdir()
    for student, late_by in (
        ("early", -timedelta(hours=1)),
        ("late", timedelta(days=1, hours=2)),
        ("too_late", timedelta(days=9)),
    ):
        path = folder / f"{student}.ipynb"
        shutil.copy(KNOWN / "correct_source_notebook.ipynb", path)
        moment = (due + late_by).timestamp()
        os.utime(path, (moment, moment))
    out = tmp_path / "out"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(manifest.parent),
            str(folder),
            "--out",
            str(out),
            "--reference",
            "numpy",
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    grades = {row["student"]: row for row in read_csv(out / "grades.csv")}
    assert [
        (grades[s]["score"], grades[s]["late_penalty"], grades[s]["final_score"]) for s in ("early", "late", "too_late")
    ] == [("7", "0", "7"), ("7", "1.4", "5.6"), ("7", "7", "0")]
    feedback = (out / "late.feedback.txt").read_text()
    assert (
        "Late penalty: -1.4 (20%: submitted 2026-12-03T01:59:00+00:00, due 2026-12-01T23:59:00+00:00, 2 days"
        in feedback
    )
    assert "Final score: 5.6 / 10" in feedback
    assert "after the last day late work is accepted" in (out / "too_late.feedback.txt").read_text()

    book = ["--gradebook", str(out / "gradebook.db")]
    code, said, _ = cli(capsys, "extend", "late", str(manifest.parent), "--until", "2026-12-03T12:00:00+00:00", *book)
    assert code == 0
    assert cli(capsys, "reports", str(manifest.parent), "--out", out, *book)[0] == 0
    assert {r["student"]: r["final_score"] for r in read_csv(out / "grades.csv")}["late"] == "7"
    assert json.loads((out / "late.json").read_text())["late"]["percent"] == 0
    with pytest.raises(SystemExit) as usage:
        cli(capsys, "extend", "late", str(manifest.parent), "--until", "2026-12-03T12:00:00", *book)
    assert usage.value.code == 2 and "'2026-12-03T12:00:00' has no time zone" in capsys.readouterr().err


@needs_sandbox
def test_two_grade_runs_on_one_gradebook_lose_no_row(tmp_path, database):
    runs = []
    for batch in ("first", "second"):
        folder = tmp_path / batch
        folder.mkdir()
        for number in range(3):
            shutil.copy(KNOWN / "correct_projection.py", folder / f"{batch}{number}.py")
        runs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "autograder",
                    "grade",
                    ASSIGNMENT,
                    str(folder),
                    "--out",
                    str(tmp_path / batch),
                    *database,
                    "--reference",
                    "numpy",
                    "--jobs",
                    "1",
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    assert recorded(*database[1:]) == {f"{b}{n}": [(7, 4)] for b in ("first", "second") for n in range(3)}


def test_bad_gradebooks_are_one_line_and_left_as_they_were(tmp_path, capsys):
    # Today's older format: refused with the way out, then converted with every row.
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as db:
        db.executescript(
            "CREATE TABLE submissions (student TEXT, assignment TEXT, sha256 TEXT, score REAL, max_score REAL, "
            "ran INTEGER, graded_at TEXT, PRIMARY KEY (student, assignment));"
            "CREATE TABLE grades (student TEXT, assignment TEXT, question TEXT, score REAL, max_score REAL, "
            "status TEXT, sha256 TEXT, graded_at TEXT, PRIMARY KEY (student, assignment, question));"
            f"INSERT INTO submissions VALUES ('dora', '{ASSIGNMENT}', 'abc', 4, 10, 1, '2026-11-01T10:00:00+00:00');"
            f"INSERT INTO grades VALUES ('dora', '{ASSIGNMENT}', 'top_pairs', 2, 2, 'passed', 'abc', '2026-11-01');"
            f"INSERT INTO grades VALUES ('dora', '{ASSIGNMENT}', 'permutation', 2, 2, 'passed', 'abc', '2026-11-01');"
        )
    db.close()
    before = old.read_bytes()
    code, _, err = cli(capsys, "history", "dora", "--gradebook", old)
    assert code == 2 and "a gradebook in the older format; convert it with `autograder gradebook upgrade" in err
    assert old.read_bytes() == before
    code, said, _ = cli(capsys, "gradebook", "upgrade", "--gradebook", old)
    assert code == 0 and "1 submission converted" in said
    assert (tmp_path / "old.db.old").read_bytes() == before
    assert recorded(old) == {"dora": [(4, 2)]}
    code, said, _ = cli(capsys, "history", "dora", ASSIGNMENT, "--gradebook", old)
    assert code == 0 and "4 / 10" in said

    # A newer gradebook: refused, untouched.
    with sqlite3.connect(old) as db:
        db.execute(
            "INSERT INTO django_migrations (app, name, applied) VALUES ('gradebook', '9999_future', '2030-01-01')"
        )
    db.close()
    code, _, err = cli(capsys, "history", "dora", "--gradebook", old)
    assert code == 2 and "written by a newer Gradewright (migration 9999_future)" in err

    # Not a gradebook at all, and another program's database.
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    code, _, err = cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", junk)
    assert code == 2 and err.startswith(f"autograder: {junk}: not a gradebook, or a damaged one")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE recipes (name TEXT)")
    db.close()
    code, _, err = cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", other)
    assert code == 2 and "not a gradebook (it holds other tables)" in err
    code, _, err = cli(capsys, "stats", ASSIGNMENT, "--out", tmp_path, "--gradebook", tmp_path / "absent.db")
    assert code == 2 and "no gradebook here" in err and not (tmp_path / "absent.db").exists()


def test_a_locked_gradebook_is_one_line(tmp_path, capsys, monkeypatch):
    book = tmp_path / "gradebook.db"
    assert cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", book)[0] == 0
    monkeypatch.setenv("GRADEWRIGHT_GRADEBOOK_WAIT", "0.5")
    holder = sqlite3.connect(book, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = cli(capsys, "roster", "import", _roster(tmp_path), "--gradebook", book)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2
    assert err == f"autograder: {book}: the gradebook is locked by another grader; try again when it is done\n"


def test_written_answers_are_found_by_their_heading_when_the_metadata_is_gone(tmp_path):
    from autograder.assignment import load_assignment
    from autograder.batch import load_reference
    from autograder.grading import grade_submission
    from autograder.submissions import find_submissions

    from .fake_runner import InProcessRunner

    data = json.loads((KNOWN / "correct_source_notebook.ipynb").read_text(encoding="utf-8"))
    for cell in data["cells"]:
        cell["metadata"] = {}  # a notebook copied into a fresh one loses nbgrader's metadata
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": "Some notes of mine"})
    path = tmp_path / "fresh.ipynb"
    path.write_text(json.dumps(data))
    assignment = load_assignment(ASSIGNMENTS / ASSIGNMENT)
    (submission,) = find_submissions([path]).submissions
    report = grade_submission(assignment, submission, InProcessRunner(), load_reference(assignment, "numpy"))
    written = next(q for q in report.questions if q.id == "written")
    # The two answer cells right after "## 2. Meaningful link or artefact?", and no other cell.
    texts = list(written.answers.values())
    assert len(texts) == 2
    assert texts[0].startswith("The three pairs") and texts[1].startswith("Check by intervention")
    assert "2 written answers to read" in written.feedback


def test_an_exam_taken_online_extended_from_the_command_line(tmp_path, capsys):
    """`autograder extend STUDENT EXAM`: a student's own terms on an exam (the service reads them
    from the gradebook, tests/test_online_exams.py); what is not given stays as it was."""
    from course.exams.build import build_exam

    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "course.toml", course)
    shutil.copytree(ROOT / "lesson_data", course / "lesson_data")
    shutil.copytree(ROOT / "assignments", course / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    (course / "exams").mkdir()
    build_exam(
        _roster(tmp_path),
        course / "exams" / "midterm",
        seed=3,
        questions=2,
        open_questions=0,
        lessons=[course / "lesson_data"],
    )
    with (course / "course.toml").open("a") as manifest:
        manifest.write('exams = ["exams/midterm"]\n')
    book = ["--gradebook", str(tmp_path / "gradebook.db")]

    def cli(capsys, *args) -> tuple[int, str, str]:  # this course's, not the shipped one
        code = main(["--course", str(course), *map(str, args)])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    assert cli(capsys, "roster", "import", _roster(tmp_path), *book)[0] == 0

    assert cli(capsys, "extend", "s001", "midterm", "--extra-minutes", "30", *book)[:2] == (
        0,
        "s001: midterm: 30 more minutes, 1 attempt\n",
    )
    assert cli(capsys, "extend", "s001", "midterm", "--attempts", "2", "--until", "2026-12-09T18:00:00+00:00", *book)[
        :2
    ] == (0, "s001: midterm: 30 more minutes, 2 attempts, their own close 2026-12-09T18:00:00+00:00\n")
    # Each mistake in one line, naming what is wrong; nothing recorded.
    assert cli(capsys, "extend", "s001", "midterm", *book)[::2] == (
        2,
        "autograder: midterm: give more minutes, a later close or more attempts\n",
    )
    assert cli(capsys, "extend", "nobody", "midterm", "--attempts", "3", *book)[0] == 2
    assert cli(capsys, "extend", "s001", ASSIGNMENT, "--attempts", "3", *book)[::2] == (
        2,
        f"autograder: {ASSIGNMENT}: --extra-minutes and --attempts are for an exam taken online; an assignment "
        "takes --until\n",
    )
    assert cli(capsys, "extend", "s001", ASSIGNMENT, *book)[::2] == (
        2,
        f"autograder: {ASSIGNMENT}: give --until, the student's own due time\n",
    )
    with pytest.raises(SystemExit) as usage:
        cli(capsys, "extend", "s001", "midterm", "--extra-minutes", "-5", *book)
    assert usage.value.code == 2 and "'-5' is not a number of minutes" in capsys.readouterr().err
    assert cli(capsys, "extend", "s001", "midterm", "--extra-minutes", "0", *book)[1] == (
        "s001: midterm: 0 more minutes, 2 attempts, their own close 2026-12-09T18:00:00+00:00\n"
    )


def test_eight_grants_of_an_exam_extension_at_once_make_one_row(database):
    """The exam's page or `autograder extend` eight times at once for a student with none yet: one
    row, no error, and it holds one of the values given (none half-written)."""
    import threading

    from django.db import connections

    from gradebook.book import Gradebook
    from gradebook.extensions import extend_exam
    from gradebook.models import ExamExtension, Student

    option, where = database
    url = where if option == "--database-url" else None
    with Gradebook.open(None if url else Path(where), url) as book:
        book.objects(Student).create(student_id="s1")
        gate, failures = threading.Barrier(8), []

        def grant(attempts: int) -> None:
            try:
                gate.wait(timeout=30)
                extend_exam(book, "s1", "midterm", attempts=attempts)
            except Exception as exc:  # the test's own report: any error at all is the failure
                failures.append(repr(exc))
            finally:
                connections[book.alias].close()

        threads = [threading.Thread(target=grant, args=(n,)) for n in range(2, 10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert failures == []
        rows = list(book.objects(ExamExtension).filter(exam="midterm"))
        assert len(rows) == 1 and rows[0].attempts in range(2, 10)
