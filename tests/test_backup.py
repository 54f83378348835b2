"""``autograder gradebook backup|restore``: a backup taken while a grading burst writes, restored on
a fresh folder (and a fresh PostgreSQL database), holds every submission it says it holds, each with
its results, and the mark given before it; hostile archives are refused; what is there is never
overwritten unless asked, and then kept."""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import time
import uuid
from pathlib import Path

import pytest

from gradebook.backup import read_manifest
from gradebook.book import Gradebook

from .conftest import ROOT, needs_sandbox
from .postgres import create_database, drop_database, needs_postgres
from .test_gradebook import ASSIGNMENT, KNOWN, cli, fill, grade, read_csv

BURST = [
    "constant_answers.py",
    "correct_float32.py",
    "correct_projection.py",
    "encoding_before_permuting.py",
    "explanation_epsilon.py",
    "explanation_scaled.py",
    "gap_ignores_encoding.py",
    "top_pairs_ties_reversed.py",
]
WAIT = 240  # seconds the burst may take to show its first submission, or to finish, on a busy machine


def _empty_postgres() -> str:
    return create_database()[0]


def _drop_postgres(url: str) -> None:
    drop_database(url.rsplit("/", 1)[1])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def databases(request, tmp_path):
    """(the gradebook's options, the restored gradebook's options, where each is): the SQLite
    gradebook in the state folder, as the service keeps it, or two PostgreSQL databases."""
    if request.param == "sqlite":
        yield [], [], tmp_path / "state" / "gradebook.db", tmp_path / "restored" / "state" / "gradebook.db"
        return
    urls = [_empty_postgres(), _empty_postgres()]
    try:
        yield ["--database-url", urls[0]], ["--database-url", urls[1]], urls[0], urls[1]
    finally:
        for url in urls:
            _drop_postgres(url)


def _opened(where: Path | str) -> Gradebook:
    return Gradebook.open(url=where) if isinstance(where, str) else Gradebook.open(where)


def _contents(where: Path | str) -> tuple[dict, dict]:
    """({(student, sha256): [(question, score, max_score, status)]}, {(student, question): (score, comment)})."""
    from gradebook.models import Mark, Submission

    with _opened(where) as book:
        submissions = {
            (s.student.student_id, s.sha256): sorted(
                (r.question_id, r.score, r.max_score, r.status) for r in s.results.using(book.alias).all()
            )
            for s in book.objects(Submission).select_related("student")
        }
        marks = {
            (m.student.student_id, m.question_id): (m.score, m.comment)
            for m in book.objects(Mark).select_related("student")
        }
    return submissions, marks


def _submission_count(where: Path | str) -> int:
    """Read without Django, as a watcher outside the grader would."""
    if isinstance(where, str):
        import psycopg

        with psycopg.connect(where) as connection:
            row = connection.execute("SELECT COUNT(*) FROM gradebook_submission").fetchone()
            return row[0] if row else 0
    if not where.exists():
        return 0
    connection = sqlite3.connect(f"file:{where}?mode=ro", uri=True, timeout=30)
    try:
        return connection.execute("SELECT COUNT(*) FROM gradebook_submission").fetchone()[0]
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0
    finally:
        connection.close()


@pytest.mark.slow
@needs_sandbox
@pytest.mark.timeout(900)
def test_a_backup_taken_during_a_grading_burst_restores_every_submission_and_mark(tmp_path, capsys, databases):
    options, restored_options, where, restored_where = databases
    state = tmp_path / "state"
    (state / "uploads" / ASSIGNMENT / "a1").mkdir(parents=True)
    (state / "uploads" / ASSIGNMENT / "a1" / f"{ASSIGNMENT}.ipynb").write_bytes(b'{"an": "upload"}')
    (state / "released").mkdir()
    (state / "secret_key").write_text("the site's key\n")
    gradebook = [*options, "--state", state]  # SQLite: the state folder's gradebook.db, found there

    # Two students graded, and a mark given by hand, before the burst.
    first = tmp_path / "first" / "submitted"
    for student in ("alice", "bob"):
        (first / student / ASSIGNMENT).mkdir(parents=True)
        shutil.copy(KNOWN / "correct_source_notebook.ipynb", first / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    book = options or ["--gradebook", where]
    assert grade(first, tmp_path / "first-out", *book).returncode == 0
    sheet, filled = tmp_path / "marks.csv", tmp_path / "filled.csv"
    assert cli(capsys, "marks", "export", ASSIGNMENT, "--out", sheet, *book)[0] == 0
    fill(sheet, filled, {("alice", "written"): ("2.5", "a fair link")})
    assert cli(capsys, "marks", "import", ASSIGNMENT, filled, *book)[0] == 0

    # The burst: eight students graded in the background, into the same gradebook.
    burst = tmp_path / "burst" / "submitted"
    for number, name in enumerate(BURST):
        (burst / f"student{number:02}" / ASSIGNMENT).mkdir(parents=True)
        shutil.copy(KNOWN / name, burst / f"student{number:02}" / ASSIGNMENT / name)
    grading = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(ROOT),
            "grade",
            ASSIGNMENT,
            str(burst),
            "--out",
            str(tmp_path / "burst-out"),
            "--reference",
            "numpy",
            "--jobs",
            "2",
            *map(str, book),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + WAIT
        while _submission_count(where) <= 2:
            assert grading.poll() is None, f"the burst ended before its first submission: {grading.stderr.read()}"
            assert time.monotonic() < deadline, f"no submission of the burst in {WAIT} s"
            time.sleep(0.05)
        assert grading.poll() is None  # still grading: the backup is taken while it writes
        archive = tmp_path / "course.backup.tar.gz"
        code, said, err = cli(capsys, "gradebook", "backup", archive, *gradebook)
        assert code == 0, err
        _, stderr = grading.communicate(timeout=WAIT)
        assert grading.returncode == 0, stderr
    finally:
        if grading.poll() is None:
            grading.kill()
            grading.wait()

    manifest = read_manifest(archive)
    assert 3 <= manifest.counts.submissions <= 2 + len(BURST)
    assert said.startswith(f"{archive}: {manifest.counts.submissions} submissions (")
    assert manifest.database == ("postgresql" if options else "sqlite") and manifest.counts.marks == 1
    assert os.stat(archive).st_mode & 0o077 == 0  # the grades and the secret key: its owner's only
    with tarfile.open(archive) as opened:
        names = set(opened.getnames())
    assert f"state/uploads/{ASSIGNMENT}/a1/{ASSIGNMENT}.ipynb" in names and "state/secret_key" in names
    assert not any(name.startswith("state/gradebook.db") for name in names)  # the consistent copy only

    # Restored on a fresh folder (and database): everything the backup says it has, as it was.
    restored_state = tmp_path / "restored" / "state"
    restore = ["--state", restored_state, *restored_options]
    code, said, err = cli(capsys, "gradebook", "restore", archive, *restore)
    assert code == 0, err
    assert f"{manifest.counts.submissions} submissions" in said and "1 mark," in said
    if isinstance(restored_where, Path):
        connection = sqlite3.connect(restored_where)
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        connection.close()
    final, final_marks = _contents(where)
    restored, marks = _contents(restored_where)
    assert len(restored) == manifest.counts.submissions and len(final) == 2 + len(BURST)
    for key, results in restored.items():
        assert len(results) == 4 and results == final[key]  # each with all its results, as graded
    assert {student for student, _ in restored} >= {"alice", "bob"}  # those graded before the burst
    assert marks == {("alice", "written"): (2.5, "a fair link")} == final_marks
    assert (restored_state / "secret_key").read_text() == "the site's key\n"
    assert (restored_state / "uploads" / ASSIGNMENT / "a1" / f"{ASSIGNMENT}.ipynb").read_bytes() == b'{"an": "upload"}'
    assert (restored_state / "released").is_dir() and restored_state.stat().st_mode & 0o077 == 0

    # The restored gradebook is a working one: the mark counts in the grades it gives.
    grades_file = tmp_path / "grades.csv"
    book_restored = restored_options or ["--gradebook", restored_where]
    assert cli(capsys, "grades", "export", ASSIGNMENT, "--format", "csv", "--out", grades_file, *book_restored)[0] == 0
    assert {row["student_id"]: row[ASSIGNMENT] for row in read_csv(grades_file)}["alice"] == "9.5"

    # Restoring again over it is refused, and with --force what was there is kept, renamed.
    code, _, err = cli(capsys, "gradebook", "restore", archive, *restore)
    assert code == 2 and "holds" in err and "--force" in err and len(err.strip().splitlines()) == 1
    code, said, err = cli(capsys, "gradebook", "restore", archive, *restore, "--force")
    assert code == 0, err
    assert "kept what was there as" in said
    assert any(path.name.startswith("state.replaced-") for path in restored_state.parent.iterdir())
    assert len(_contents(restored_where)[0]) == manifest.counts.submissions


def _small_backup(tmp_path, capsys) -> Path:
    """A backup of a gradebook holding a roster (no grading: quick), with a state folder."""
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\nalice,Alice,alice@example.org\n", encoding="utf-8")
    state = tmp_path / "state"
    state.mkdir()
    (state / "secret_key").write_text("key")
    assert cli(capsys, "roster", "import", roster, "--gradebook", state / "gradebook.db")[0] == 0
    archive = tmp_path / "small.tar.gz"
    code, said, err = cli(capsys, "gradebook", "backup", archive, "--state", state)
    assert code == 0, err
    assert said == f"{archive}: 0 submissions (0 results), 0 marks, 1 student; the state folder {state}, 1 file\n"
    return archive


def _hostile(tmp_path: Path, good: Path, add) -> Path:
    """The good backup with one more member, written by ``add(archive)``."""
    bad = tmp_path / f"bad-{uuid.uuid4().hex[:6]}.tar.gz"
    with tarfile.open(good) as source, tarfile.open(bad, "w:gz") as target:
        for member in source.getmembers():
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
        add(target)
    return bad


def _file(name: str, data: bytes = b"x"):
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))

    return add


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE):
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, target
        archive.addfile(info)

    return add


@pytest.mark.parametrize(
    "add, said",
    [
        (_file("/etc/gradewright-owned"), "'/etc/gradewright-owned'"),
        (_file("state/../../escaped"), "'state/../../escaped'"),
        (_link("state/key", "/etc/passwd"), "links and special files are refused"),
        (_link("state/hard", "/etc/passwd", tarfile.LNKTYPE), "links and special files are refused"),
        (_link("state/null", "", tarfile.CHRTYPE), "links and special files are refused"),
        (_file("elsewhere.txt"), "not a part of a backup"),
    ],
    ids=["absolute", "dot-dot", "symlink", "hard-link", "device", "foreign"],
)
def test_a_hostile_archive_is_refused_and_nothing_is_restored(tmp_path, capsys, add, said):
    bad = _hostile(tmp_path, _small_backup(tmp_path, capsys), add)
    target = tmp_path / "target"
    code, out, err = cli(capsys, "gradebook", "restore", bad, "--state", target / "state")
    assert (code, out) == (2, "")
    assert err.startswith(f"autograder: {bad}: ") and said in err and "nothing was restored" in err
    assert len(err.strip().splitlines()) == 1
    assert not (target / "state").exists() and not (tmp_path / "escaped").exists()
    assert not list(tmp_path.glob("**/gradewright-owned"))


def test_a_restored_file_keeps_no_setuid_bit_and_no_write_for_others(tmp_path, capsys):
    def setuid(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("state/run")
        info.size, info.mode = 1, 0o6777
        archive.addfile(info, io.BytesIO(b"x"))

    archive = _hostile(tmp_path, _small_backup(tmp_path, capsys), setuid)
    target = tmp_path / "target" / "state"
    code, _, err = cli(capsys, "gradebook", "restore", archive, "--state", target)
    assert code == 0, err
    assert (target / "run").stat().st_mode & 0o7777 == 0o755


def test_every_member_of_a_backup_is_its_owners_only(tmp_path, capsys):
    with tarfile.open(_small_backup(tmp_path, capsys)) as opened:
        modes = {member.name: member.mode for member in opened.getmembers()}
    assert modes["gradebook.sqlite3"] == 0o600 and all(mode & 0o077 == 0 for mode in modes.values()), modes


def test_a_file_that_is_not_a_backup_gets_one_line(tmp_path, capsys):
    for name, data in (("notes.tar.gz", b"not a tar"), ("empty.tar.gz", b"")):
        path = tmp_path / name
        path.write_bytes(data)
        code, _, err = cli(capsys, "gradebook", "restore", path, "--state", tmp_path / "state")
        assert code == 2 and err.startswith(f"autograder: {path}: not a Gradewright backup") and "\n" == err[-1:]
    code, _, err = cli(capsys, "gradebook", "restore", tmp_path / "missing.tar.gz", "--state", tmp_path / "s")
    assert (code, err) == (2, f"autograder: {tmp_path / 'missing.tar.gz'}: no such backup\n")


def test_a_restore_into_an_occupied_gradebook_is_refused_unless_forced(tmp_path, capsys):
    archive = _small_backup(tmp_path, capsys)
    other = tmp_path / "other.db"
    roster = tmp_path / "bob.csv"
    roster.write_text("student_id,name,email\nbob,Bob,bob@example.org\n", encoding="utf-8")
    assert cli(capsys, "roster", "import", roster, "--gradebook", other)[0] == 0
    code, _, err = cli(capsys, "gradebook", "restore", archive, "--gradebook", other, "--no-state")
    assert (code, err) == (
        2,
        f"autograder: {other}: a gradebook is there already; pass --force to replace it (it is kept beside, renamed)\n",
    )
    code, said, err = cli(capsys, "gradebook", "restore", archive, "--gradebook", other, "--no-state", "--force")
    assert code == 0, err
    assert said.startswith(f"{other}: 0 submissions (0 results), 0 marks, 1 student, from the backup of ")
    from gradebook.models import Student

    with Gradebook.open(other) as book:
        assert [s.student_id for s in book.objects(Student).all()] == ["alice"]
    kept = [path for path in tmp_path.iterdir() if path.name.startswith("other.db.replaced-")]
    assert len(kept) == 1 and f"kept what was there as {kept[0]}" in said
    with Gradebook.open(kept[0]) as book:
        assert [s.student_id for s in book.objects(Student).all()] == ["bob"]


def test_a_postgresql_backup_without_pg_dump_says_so(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, _, err = cli(
        capsys,
        "gradebook",
        "backup",
        tmp_path / "b.tar.gz",
        "--no-state",
        "--database-url",
        "postgresql://someone:secret@127.0.0.1:5432/course",
    )
    assert code == 2
    assert err == (
        "autograder: pg_dump is not installed: a PostgreSQL gradebook is backed up and restored with "
        "PostgreSQL's own tools (Debian: apt install postgresql-client)\n"
    )
    assert not (tmp_path / "b.tar.gz").exists()


@needs_postgres
def test_a_pg_dump_of_another_version_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    """pg_dump refuses a server newer than itself; its words come through, in one line, with what to do."""
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "pg_dump"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "pg_dump (PostgreSQL) 9.6.0"; exit 0; fi\n'
        'echo "pg_dump: error: aborting because of server version mismatch" >&2\n'
        'echo "pg_dump: detail: server version: 15.18; pg_dump version: 9.6.0" >&2\n'
        "exit 1\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    url = _empty_postgres()
    try:
        roster = tmp_path / "roster.csv"
        roster.write_text("student_id,name,email\nalice,Alice,a@example.org\n", encoding="utf-8")
        assert cli(capsys, "roster", "import", roster, "--database-url", url)[0] == 0
        code, _, err = cli(capsys, "gradebook", "backup", tmp_path / "b.tar.gz", "--no-state", "--database-url", url)
    finally:
        _drop_postgres(url)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "pg_dump failed: pg_dump: error: aborting because of server version mismatch" in err
    assert "use PostgreSQL's tools of the server's version or newer" in err and "gradewright:gradewright" not in err
    assert not (tmp_path / "b.tar.gz").exists()


def test_links_in_the_state_folder_are_left_out_of_the_backup(tmp_path, capsys):
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("not the course's")
    state = tmp_path / "state"
    (state / "reports").mkdir(parents=True)
    (state / "reports" / "alice.json").write_text("{}")
    (state / "reports" / "link.json").symlink_to(secret)
    (state / "outside").symlink_to(tmp_path, target_is_directory=True)
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email\nalice,Alice,alice@example.org\n", encoding="utf-8")
    assert cli(capsys, "roster", "import", roster, "--gradebook", state / "gradebook.db")[0] == 0
    archive = tmp_path / "b.tar.gz"
    code, said, err = cli(capsys, "gradebook", "backup", archive, "--state", state)
    assert code == 0, err
    assert said.endswith(f"the state folder {state}, 1 file\n")
    with tarfile.open(archive) as opened:
        assert sorted(opened.getnames()) == [
            "gradebook.sqlite3",
            "manifest.json",
            "state",
            "state/reports",
            "state/reports/alice.json",
        ]


def test_a_backup_of_a_newer_format_is_refused(tmp_path, capsys):
    archive = tmp_path / "newer.tar.gz"
    data = b'{"format": 2, "database": "sqlite"}'
    with tarfile.open(archive, "w:gz") as opened:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        opened.addfile(info, io.BytesIO(data))
    code, _, err = cli(capsys, "gradebook", "restore", archive, "--gradebook", tmp_path / "g.db", "--no-state")
    assert (code, err) == (
        2,
        f"autograder: {archive}: a backup of a newer Gradewright (format 2); upgrade Gradewright\n",
    )
    assert not (tmp_path / "g.db").exists()
