"""Code similarity: fingerprints kept when a submission is graded, candidate pairs from an index of
them, copydetect's pairs and shares exactly, and the staff's page that shows the stored report and
queues a new one (a worker computes it), never computing inside the request."""

from __future__ import annotations

import functools
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
import zlib
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.test import Client

from autograder.assignment import course_assignment
from autograder.reports.model import Report
from commands.autograder import main
from course.folder import find_course
from gradebook.book import Gradebook
from gradebook.grading import record_report
from gradebook.models import Fingerprint, SimilarityRun
from gradebook.similarity.fingerprints import code_of
from service.accounts.models import Member
from service.core.access import course

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

SEQUENCES = "sequences-and-attention"
ATTENTION = "attention-not-explanation"


@functools.cache
def spec_of(name: str):
    return course_assignment(find_course(ROOT), name)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(book: Gradebook, name: str, student: str, path: Path) -> None:
    """A graded submission as the grader records it (its results do not matter here)."""
    spec = spec_of(name)
    row = book.run(lambda: book.sync_assignment(spec))
    report = Report(
        student=student,
        assignment=name,
        score=0,
        max_score=spec.max_score,
        questions=[],
        submission=str(path),
        sha256=sha256_of(path),
        reference="numpy",
        sandbox="test",
        graded_at=datetime.now(UTC).isoformat(),
        grader_version="test",
    )
    book.run(lambda: record_report(book, row, report))


def known_with_copies(name: str, folder: Path) -> dict[str, Path]:
    """Every known submission of the assignment (notebooks too, the unreadable one included) and a
    few planted copies: renamed variables, functions in another order, a comment and lines added."""
    known = ASSIGNMENTS / name / "known"
    files = {path.stem: path for path in sorted(known.iterdir()) if path.suffix in {".py", ".ipynb"}}
    folder.mkdir(parents=True)
    first = sorted(p for p in files.values() if p.suffix == ".py")[0]
    text = first.read_text()
    renamed = folder / "renamed.py"
    renamed.write_text(text.replace("scores", "marks").replace("weights", "ws").replace("x", "xx"))
    blocks = text.split("\n\ndef ")
    reordered = folder / "reordered.py"
    reordered.write_text("\n\ndef ".join([blocks[0], *reversed(blocks[1:])]) + "\n")
    padded = folder / "padded.py"
    padded.write_text("# my own work\nimport math\n\n" + sorted(files.values())[5].read_text() + "\nprint('done')\n")
    return {**files, "planted_renamed": renamed, "planted_reordered": reordered, "planted_padded": padded}


def copydetect_pairs(files: dict[str, Path], starter_code: str, threshold: float) -> dict:
    """copydetect's CopyDetector over the same code, run directly: {pair: {student: (share, html)}}."""
    from copydetect import CopyDetector

    from autograder.submissions import Unreadable

    with tempfile.TemporaryDirectory() as folder:
        submitted, starter = Path(folder) / "submitted", Path(folder) / "starter"
        submitted.mkdir()
        starter.mkdir()
        names = {}
        for number, (student, path) in enumerate(sorted(files.items())):
            try:
                code = code_of(path)
            except Unreadable:
                continue
            (submitted / f"{number:05d}.py").write_text(code, encoding="utf-8")
            names[str(submitted / f"{number:05d}.py")] = student
        (starter / "starter.py").write_text(starter_code, encoding="utf-8")
        detector = CopyDetector(
            test_dirs=[str(submitted)],
            boilerplate_dirs=[str(starter)],
            extensions=["py"],
            display_t=threshold,
            autoopen=False,
            silent=True,
            out_file=os.devnull,
        )
        detector.run()
        found = {}
        for share_1, share_2, file_1, file_2, _, _, _ in detector.get_copied_code_list():
            first, second = names[str(file_1)], names[str(file_2)]
            found[frozenset((first, second))] = {first: round(float(share_1), 9), second: round(float(share_2), 9)}
        return found


def ours(report) -> dict:
    return {
        frozenset((p.first, p.second)): {
            p.first: round(p.first_share, 9),
            p.second: round(p.second_share, 9),
        }
        for p in report.pairs
    }


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", [SEQUENCES, ATTENTION])
def test_the_index_finds_exactly_copydetects_pairs_and_shares_on_the_shipped_corpus(tmp_path, name):
    from autograder.release import release
    from gradebook.similarity.report import similarity

    files = known_with_copies(name, tmp_path / "planted")
    starter_code = code_of(release(spec_of(name), tmp_path / "released"))
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        for student, path in files.items():
            record(book, name, student, path)
        for threshold in (0.3, 0.5, 0.9):
            report = similarity(book, spec_of(name), threshold)
            expected = copydetect_pairs(files, starter_code, threshold)
            assert len(expected) >= 3  # the planted copies at least: a comparison that says something
            assert ours(report) == expected  # the same pairs, the same shares
            assert all(pair.fragments for pair in report.pairs)  # each shown with its fragments
            assert report.candidates <= report.all_pairs
        listed = {student for pair in ours(report) for student in pair}
        assert {"planted_renamed", "planted_reordered", "planted_padded"} <= listed
        assert report.compared + len(report.unreadable) == len(files)


def _random_program(rng: random.Random) -> str:
    """Code of nobody's: arithmetic on random numbers, so no two of them share a 25-token run."""
    lines = []
    for number in range(40):
        a, b = rng.randrange(10**6), rng.randrange(10**6)
        lines.append(f"value_{number} = {a} {rng.choice('+-*')} {b} {rng.choice('+-*')} value_{max(number - 1, 0)}")
    return "value_0 = 0\n" + "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_one_new_submission_against_300_stored_ones_compares_only_those_sharing_a_fingerprint(tmp_path):
    from copydetect import CodeFingerprint, compare_files

    from autograder.release import release
    from gradebook.similarity.report import similar_to

    rng = random.Random(30)
    folder = tmp_path / "stored"
    folder.mkdir()
    known = sorted((ASSIGNMENTS / SEQUENCES / "known").glob("*.py"))
    new = ASSIGNMENTS / SEQUENCES / "known" / "correct_loops.py"
    stored: dict[str, Path] = {}
    for number in range(300):
        path = folder / f"{number:03d}.py"
        if number < len(known) - 1:  # the other known submissions: variants of one solution
            shutil.copy([k for k in known if k != new][number], path)
        elif number in {100, 200}:  # two copies of the new one, one with its names changed
            path.write_text(new.read_text().replace("scores", "s").replace("weights", "w"))
        else:
            path.write_text(_random_program(rng))
        stored[f"student{number:03d}"] = path
    starter_file = tmp_path / "starter.py"
    starter_file.write_text(code_of(release(spec_of(SEQUENCES), tmp_path / "released")))
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        for student, path in stored.items():
            record(book, SEQUENCES, student, path)
        record(book, SEQUENCES, "newcomer", new)
        report = similar_to(book, spec_of(SEQUENCES), "newcomer", 0.5)
    # Which stored submissions share a fingerprint with it, and which copydetect lists with it
    # (its own fingerprints and compare_files, pair by pair).
    boilerplate = list(CodeFingerprint(str(starter_file), 25, 1).hashes)
    mine = CodeFingerprint(str(new), 25, 1, boilerplate)
    theirs = {s: CodeFingerprint(str(p), 25, 1, boilerplate) for s, p in stored.items()}
    sharing = {s for s, held in theirs.items() if set(mine.hashes) & set(held.hashes)}
    expected = {s for s, held in theirs.items() if max(compare_files(mine, held)[1]) > 0.5}
    assert {"student100", "student200"} <= expected <= sharing and len(sharing) < 40
    # 300 stored, only some of those sharing a fingerprint compared: those that may be listed.
    assert report.compared == 301 and len(expected) <= report.candidates < 40
    listed = {pair.second if pair.first == "newcomer" else pair.first for pair in report.pairs}
    assert listed == expected


@pytest.mark.timeout(120)
def test_a_fingerprint_is_kept_when_graded_and_made_on_first_use_for_older_submissions(tmp_path):
    from gradebook.similarity.report import similarity

    original = ASSIGNMENTS / SEQUENCES / "known" / "correct_loops.py"
    copy = tmp_path / "copy.py"
    copy.write_text(original.read_text() + "\n# mine\n")
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        record(book, SEQUENCES, "ada", original)
        record(book, SEQUENCES, "alan", copy)
        record(book, SEQUENCES, "grace", original)  # the same file: one fingerprint for both
        kept = book.objects(Fingerprint).filter(sha256__in=[sha256_of(original), sha256_of(copy)])
        assert kept.count() == 2 and book.objects(Fingerprint).count() == 2
        book.objects(Fingerprint).all().delete()  # as a gradebook graded before fingerprints were kept
        report = similarity(book, spec_of(SEQUENCES), 0.5)
        assert {frozenset((p.first, p.second)) for p in report.pairs} == {
            frozenset(("ada", "alan")),
            frozenset(("ada", "grace")),
            frozenset(("alan", "grace")),
        }
        # Fingerprinted now, and kept (the submissions' two files, and the released notebook's code).
        assert book.objects(Fingerprint).filter(sha256__in=[sha256_of(original), sha256_of(copy)]).count() == 2
        assert book.objects(Fingerprint).count() == 3


# The staff's page, on the service's own database.
def _member(role: str) -> tuple[User, Client]:
    user = User.objects.create_user(f"u{uuid.uuid4().hex[:10]}", password="a long password 123")
    row = None
    if role == Member.STUDENT:
        from gradebook.models import Student

        row = Student.objects.create(student_id=user.username, on_roster=True)
    Member.objects.create(user=user, role=role, student=row)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return user, client


def _post(client: Client, url: str, data: dict):
    client.get(url)
    return client.post(url, {**data, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


@pytest.mark.timeout(300)
def test_the_page_shows_the_stored_report_and_queues_a_run_a_worker_computes(monkeypatch):
    import gradebook.similarity.report as engine
    from service.handin.worker import similarity_queued

    book = Gradebook("default", "the service's database")
    name = ATTENTION
    SimilarityRun.objects.filter(assignment=name).delete()
    tag = uuid.uuid4().hex[:6]
    original = ASSIGNMENTS / name / "known" / "correct_projection.py"
    for student in ("ada", "alan"):
        record(book, name, f"{student}-{tag}", original)
    _, staff = _member(Member.TA)
    url = f"/staff/similarity/{name}/"

    def never(*_args, **_kwargs):
        raise AssertionError("the page computed similarity inside the request")

    monkeypatch.setattr(engine, "similarity", never)
    monkeypatch.setattr(engine, "similar_to", never)
    monkeypatch.setattr(engine, "fingerprints", never)
    page = staff.get(url)
    assert page.status_code == 200 and "No report yet" in page.content.decode() and "Refresh" not in page
    assert _post(staff, url, {"threshold": "2"}).status_code == 302  # refused: not a share
    assert not SimilarityRun.objects.filter(assignment=name).exists()
    queued = _post(staff, url, {"threshold": "0.9"})
    assert queued.status_code == 302 and queued["Location"] == url
    run = SimilarityRun.objects.get(assignment=name)
    assert run.state == SimilarityRun.QUEUED and run.threshold == 0.9
    _post(staff, url, {"threshold": "0.9"})  # asked again while it waits: still the one run
    assert SimilarityRun.objects.filter(assignment=name).count() == 1
    page = staff.get(url)
    assert "waiting for a worker" in page.content.decode() and page["Refresh"] == "3"
    SimilarityRun.objects.filter(id=run.id).update(
        state=SimilarityRun.RUNNING, done=5, total=9, heartbeat_at=datetime.now(UTC)
    )
    assert "Comparing: 5 of 9 pairs compared" in staff.get(url).content.decode()
    SimilarityRun.objects.filter(id=run.id).update(state=SimilarityRun.QUEUED, heartbeat_at=None)

    monkeypatch.undo()  # the worker computes
    assert similarity_queued(course(), "test-worker") is True
    assert similarity_queued(course(), "test-worker") is False  # nothing else waits
    run.refresh_from_db()
    assert run.state == SimilarityRun.DONE and run.worker == "test-worker" and run.report["pairs"]
    monkeypatch.setattr(engine, "similarity", never)
    page = staff.get(url)
    text = page.content.decode()
    assert page.status_code == 200 and "Refresh" not in page
    assert (
        re.search(r"\b\d+ (pair shares|pairs share) more than 90% of their code", text)
        and 'class="frag frag-0" id="p1-l-1"' in text
    )
    assert f"ada-{tag}" in text and f"alan-{tag}" in text


@pytest.mark.timeout(120)
def test_a_run_for_an_assignment_the_course_lacks_ends_as_failed_and_says_why():
    from service.handin.worker import similarity_queued

    SimilarityRun.objects.filter(state__in=[SimilarityRun.QUEUED, SimilarityRun.RUNNING]).delete()
    run = SimilarityRun.objects.create(assignment="no-such-assignment", threshold=0.5, requested_at=datetime.now(UTC))
    assert similarity_queued(course(), "test-worker") is True
    run.refresh_from_db()
    assert run.state == SimilarityRun.FAILED and "no-such-assignment" in run.error


def test_the_similarity_page_refuses_anonymous_users_and_students():
    url = f"/staff/similarity/{SEQUENCES}/"
    before = SimilarityRun.objects.count()
    for anonymous in (Client().get(url), Client().post(url, {"threshold": "0.5"})):
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    _, student = _member(Member.STUDENT)
    assert student.get(url).status_code == 404
    assert _post(student, f"/assignments/{SEQUENCES}/", {}).status_code in {200, 302}  # a page they may use
    client_token = student.cookies["csrftoken"].value
    assert student.post(url, {"threshold": "0.5", "csrfmiddlewaretoken": client_token}).status_code == 404
    assert SimilarityRun.objects.count() == before  # nothing queued


@needs_sandbox
@pytest.mark.timeout(400)
def test_the_command_reports_similar_code_in_pairs_escaped_and_keeps_the_report(tmp_path, capsys):
    source = ASSIGNMENTS / SEQUENCES / "known"
    folder = tmp_path / "submissions"
    folder.mkdir()
    shutil.copy(source / "correct_loops.py", folder / "ada.py")
    renamed = (source / "correct_loops.py").read_text().replace("scores", "marks").replace("weights", "ws")
    (folder / "alan.py").write_text(renamed + "\n# <script>alert(1)</script>\n")
    shutil.copy(source / "correct_vectorised.py", folder / "grace.py")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            SEQUENCES,
            str(folder),
            "--out",
            str(tmp_path / "out"),
            "--reference",
            "numpy",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    gradebook = tmp_path / "out" / "gradebook.db"
    with Gradebook.open(gradebook) as book:  # fingerprinted as they were graded
        assert book.objects(Fingerprint).count() == 3
    html = tmp_path / "similar.html"
    code = main(["--course", str(ROOT), "similarity", SEQUENCES, "--gradebook", str(gradebook), "--out", str(html)])
    said = capsys.readouterr().out
    assert code == 0 and "3 submissions compared, 1 pair above 50%" in " ".join(said.split())
    assert "ada" in said and "alan" in said and "grace" not in said  # renamed variables do not hide a copy
    page = html.read_text()
    assert (
        "class='frag frag-0' id='p1-l-1' href='#p1-r-1'" in page and "&lt;script&gt;" in page and "<script>" not in page
    )
    with Gradebook.open(gradebook) as book:  # kept for the page
        run = book.objects(SimilarityRun).get()
        assert run.state == SimilarityRun.DONE and len(run.report["pairs"]) == 1
    code = main(["--course", str(ROOT), "similarity", SEQUENCES, "--gradebook", str(gradebook), "--student", "grace"])
    said = capsys.readouterr().out
    assert code == 0 and "0 pairs above 50%" in " ".join(said.split())
    # One student against the rest: the pair listed; its fragments paired only where HTML is written.
    one = ["--course", str(ROOT), "similarity", SEQUENCES, "--gradebook", str(gradebook), "--student", "ada"]
    for command in (one, [*one, "--out", str(tmp_path / "one.html")]):
        code = main(command)
        said = capsys.readouterr().out
        assert code == 0 and "1 pair above 50%" in " ".join(said.split()) and "alan" in said
    assert "class='frag frag-0'" in (tmp_path / "one.html").read_text()
    code = main(["--course", str(ROOT), "similarity", SEQUENCES, "--gradebook", str(gradebook), "--student", "nobody"])
    assert code != 0 and "nobody" in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_a_huge_hand_in_is_fingerprinted_only_up_to_a_cap(tmp_path):
    from gradebook.similarity.fingerprints import MAX_CODE, fingerprint_file

    huge = tmp_path / "huge.py"
    huge.write_text("value = other + 1\n" * 60_000)  # about 1 MB of code
    code = fingerprint_file(huge)
    assert not code.unreadable and len(code.raw) == MAX_CODE and 0 < len(code.hashes) <= MAX_CODE
    unreadable = tmp_path / "binary.py"
    unreadable.write_bytes(b"\x00\xff" * 10)
    assert fingerprint_file(unreadable).unreadable and len(fingerprint_file(unreadable).hashes) == 0


@pytest.mark.timeout(300)
def test_the_command_keeps_the_report_on_every_database(tmp_path, capsys, database):
    """SQLite and PostgreSQL (the fingerprints are binary columns; the report is JSON)."""
    url = database[1] if database[0] == "--database-url" else None
    original = ASSIGNMENTS / SEQUENCES / "known" / "correct_vectorised.py"
    copy = tmp_path / "copy.py"
    copy.write_text(original.read_text().replace("weights", "w") + "\n")
    with Gradebook.open(None if url else Path(database[1]), url) as book:
        record(book, SEQUENCES, "ada", original)
        record(book, SEQUENCES, "alan", copy)
    assert main(["--course", str(ROOT), "similarity", SEQUENCES, *database]) == 0
    assert "1 pair above 50%" in " ".join(capsys.readouterr().out.split())
    with Gradebook.open(None if url else Path(database[1]), url) as book:
        from gradebook.similarity.report import report_of_run, runs_of

        last, pending = runs_of(book, SEQUENCES)
        report = report_of_run(last)
        assert pending is None and report is not None and report.candidates == 1
        assert {report.pairs[0].first, report.pairs[0].second} == {"ada", "alan"}
        assert book.objects(Fingerprint).filter(sha256=sha256_of(copy)).exists()


@pytest.mark.timeout(120)
def test_the_class_comparison_gives_copydetects_shares_on_many_pairs(tmp_path):
    """The class's comparison (``_Index``: each share from one side, many pairs at once) against
    copydetect's compare_files pair by pair, and against ``_shares``: programs made of lines drawn
    from a small pool (so pairs share runs of many lengths), lines repeated within a program
    (repeated k-grams, which copydetect drops but the last of once the starter's are left out),
    the starter's lines in some, and an empty file and one shorter than a k-gram."""
    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    from gradebook.similarity.fingerprints import fingerprint
    from gradebook.similarity.report import _Entries, _Index, _prepared, _shares

    rng = random.Random(30)
    pool = [f"total_{n} = scale(values[{n}], weights[{n % 3}]) + {n * 7}" for n in range(30)]
    starter_lines = ["import numpy as np", "def answer(values, weights):", "    return None"]
    texts = {"empty": "", "short": "x = 1\n"}
    for number in range(38):
        lines = [rng.choice(pool) for _ in range(rng.randrange(3, 25))]
        if number % 3 == 0:  # a line repeated: repeated k-grams
            lines += [lines[0]] * rng.randrange(2, 5)
        if number % 2 == 0:  # the starter's code in it
            lines[rng.randrange(len(lines)) : 0] = starter_lines
        texts[f"p{number:02d}"] = "\n".join(lines) + "\n"
    starter_text = "\n".join(starter_lines) + "\n"
    (tmp_path / "starter.py").write_text(starter_text)
    for name, text in texts.items():
        (tmp_path / f"{name}.py").write_text(text)
    names = sorted(texts)
    boilerplate = np.unique(fingerprint(starter_text).hashes)
    prints = [_prepared(fingerprint(texts[name]), boilerplate) for name in names]
    index = _Index(prints, _Entries.of(prints))
    pairs = np.array([(i, j) for i in range(len(names)) for j in range(i + 1, len(names))], dtype=np.int64)
    first_shares, second_shares = index.shares(pairs)

    theirs = list(CodeFingerprint(str(tmp_path / "starter.py"), 25, 1).hashes)
    detected = {name: CodeFingerprint(str(tmp_path / f"{name}.py"), 25, 1, theirs) for name in names}
    sharing = 0
    for (i, j), share_i, share_j in zip(pairs.tolist(), first_shares.tolist(), second_shares.tolist(), strict=True):
        assert (share_i, share_j) == _shares(prints[i], prints[j])[:2]
        expected = compare_files(detected[names[i]], detected[names[j]])[1]
        assert share_i == pytest.approx(float(expected[0]), abs=1e-12), (names[i], names[j])
        assert share_j == pytest.approx(float(expected[1]), abs=1e-12), (names[i], names[j])
        sharing += share_i > 0
    # A comparison that says something: most pairs share some code, few all of it, the empty none.
    assert sharing > len(pairs) // 2 and 0 < (first_shares > 0.5).sum() < len(pairs)
    assert not first_shares[pairs[:, 0] == names.index("empty")].any()
    assert len(prints[names.index("p00")].positions) < len(fingerprint(texts["p00"]).hashes)  # the starter's left out


@pytest.mark.timeout(120)
def test_fingerprinting_and_pairing_in_a_fresh_process_leave_matplotlib_unimported():
    # copydetect's package imports matplotlib (0.6 s of a fresh process) for plots never drawn here:
    # its utils are loaded on their own, and shared with the package when it is imported after.
    script = """
import sys
from gradebook.similarity.fingerprints import copydetect_utils, fingerprint
from gradebook.similarity.report import _paired, _prepared
import numpy as np
one = fingerprint("def total(values):\\n    return sum(v * 2 for v in values)\\n" * 3)
two = fingerprint("def total(items):\\n    return sum(i * 2 for i in items)\\n" * 3)
found = _paired(_prepared(one, np.zeros(0, dtype=np.int64)), _prepared(two, np.zeros(0, dtype=np.int64)))
assert found, found
assert "matplotlib" not in sys.modules, "matplotlib imported"
assert "copydetect.detector" not in sys.modules
from copydetect import CopyDetector
assert copydetect_utils() is sys.modules["copydetect.utils"]
import copydetect.detector
assert copydetect.detector.filter_code is copydetect_utils().filter_code
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=100, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.timeout(180)
def test_a_pairs_fragments_use_the_offsets_kept_at_grading_and_older_rows_find_them_again(tmp_path, monkeypatch):
    import gradebook.similarity.report as similarity_module
    from gradebook.similarity.fingerprints import filtered

    original = ASSIGNMENTS / SEQUENCES / "known" / "correct_loops.py"
    copy = tmp_path / "copy.py"
    copy.write_text("# mine\n" + original.read_text().replace("scores", "marks") + "\nprint('done')\n")
    spec = spec_of(SEQUENCES)
    with Gradebook.open(tmp_path / "gradebook.db") as book:
        record(book, SEQUENCES, "ada", original)
        record(book, SEQUENCES, "alan", copy)
        similarity_module.similarity(book, spec, 0.5)  # the starter's fingerprint kept too
        for path in (original, copy):
            row = book.objects(Fingerprint).get(sha256=sha256_of(path))
            kept = np.frombuffer(zlib.decompress(bytes(row.offsets)), dtype="<i4").reshape(-1, 2)
            assert kept.shape[0] > 10 and (kept == filtered(code_of(path))[1]).all()
        # Paired from the kept offsets: the tokenizer never runs during the report.
        calls: list[str] = []
        monkeypatch.setattr(similarity_module, "filtered", lambda raw: calls.append(raw) or filtered(raw))
        with_kept = similarity_module.similarity(book, spec, 0.5)
        assert calls == [] and len(with_kept.pairs) == 1
        assert with_kept.pairs[0].fragments
        # A gradebook whose rows were kept before offsets were: found again, the same fragments.
        book.objects(Fingerprint).update(offsets=None)
        again = similarity_module.similarity(book, spec, 0.5)
        assert len(calls) == 2
        assert again.pairs[0].model_dump(exclude={"computed_at"}) == with_kept.pairs[0].model_dump(
            exclude={"computed_at"}
        )
