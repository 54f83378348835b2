"""Every defence of the sandbox, attacked by a hostile submission graded through the real command.

The hostile submissions live in tests/hostile/. They are graded in one batch beside an honest
submission, which must come out untouched: once with the zygote (the default), once with a sandbox
started for each submission (where the zygote cannot start).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.suite import hidden_suite

from .conftest import ASSIGNMENTS, ROOT, needs_sandbox

pytestmark = needs_sandbox
HOSTILE = Path(__file__).parent / "hostile"
GRADER_SECRET = "grader-secret-7f3a"
# Below the bound on the batch's peak memory, so that a sandboxed submission filling its memory (which
# the peak counts too) never passes for the grader decoding a forged answer naively (3 GB).
SANDBOX_MEMORY_MIB = 768


class Server:
    """A TCP server on the grading machine that counts who reached it."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()


# A batch graded per runner; a sandbox started per submission takes most of a minute: slow.
@pytest.fixture(scope="module", params=["zygote", pytest.param("a sandbox per submission", marks=pytest.mark.slow)])
def batch(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("attack")
    submissions, out = root / "submissions", root / "out"
    submissions.mkdir()
    secret_file = root / "server-secret.txt"
    secret_file.write_text(GRADER_SECRET)
    server = Server()
    tokens = {
        "__HIDDEN_TEST__": str(ASSIGNMENTS / "sequences-and-attention" / "hidden" / "test_softmax.py"),
        "__REFERENCE__": str(ASSIGNMENTS / "references" / "numpy_reference.py"),
        "__OTHER_SUBMISSION__": str(submissions / "honest.py"),
        "__OUTPUT_DIR__": str(out),
        "__PROJECT__": str(ROOT),
        "__ASSIGNMENTS__": str(ASSIGNMENTS),
        "__SERVER_SECRET_FILE__": str(secret_file),
        "__PORT__": str(server.port),
    }
    for source in HOSTILE.glob("*.py"):
        text = source.read_text()
        for token, value in tokens.items():
            text = text.replace(token, value)
        (submissions / source.name).write_text(text)
    temporary = root / "tmp"  # the grader's TMPDIR: it must leave nothing there
    temporary.mkdir()
    # A fixed secret: the hostile submissions' answers depend on the inputs drawn (shapes_and_strings.py
    # answers with an array sized by its input, too large to send for some draws), so each run draws the same.
    environment = {
        **os.environ,
        "MODULE10_GRADER_SECRET": GRADER_SECRET,
        "TMPDIR": str(temporary),
        "GRADEWRIGHT_SECRET": "attacks",
        "GRADEWRIGHT_ZYGOTE": "on" if request.param == "zygote" else "off",
    }
    watched = root / "watched.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "run_and_watch.py"),
            str(watched),
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "sequences-and-attention",
            str(submissions),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--timeout",
            "2",
            "--memory",
            str(SANDBOX_MEMORY_MIB),
            "--reference",
            "numpy",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=environment,
    )
    reports = {
        path.stem: json.loads(path.read_text())
        for path in out.glob("*.json")
        if not path.name.endswith(".gradescope.json")
    }
    return {
        "completed": completed,
        "reports": reports,
        "out": out,
        "server": server,
        "tmp": temporary,
        **json.loads(watched.read_text()),
    }


def _question(report, question_id):
    return next(q for q in report["questions"] if q["id"] == question_id)


def test_batch_finishes_and_the_honest_submission_is_untouched(batch):
    completed = batch["completed"]
    assert completed.returncode == 1, completed.stderr  # the forged-frames submission could not run
    assert "Traceback" not in completed.stderr + completed.stdout
    assert "LEAK" not in completed.stderr + completed.stdout  # nothing was unpickled in the grader
    assert set(batch["reports"]) == {p.stem for p in HOSTILE.glob("*.py")}
    honest = batch["reports"]["honest"]
    assert honest["score"] == honest["max_score"] == 10


def test_files_of_the_grader_and_other_students_are_invisible(batch):
    report = batch["reports"]["read_files"]
    output = report["output"]
    assert "LEAK" not in output
    assert output.count("blocked:") == 13
    assert "root holds: ['bin', 'dev', 'lib', 'lib64', 'proc', 'tmp', 'usr']" in output
    assert GRADER_SECRET not in output and "MODULE10_GRADER_SECRET" not in output
    assert "uid: 0 " not in output
    # The cause leads the feedback: the error and the line of the student's code, no path of the grader.
    assert (
        _question(report, "positional_encoding")["feedback"]
        .splitlines()[0]
        .endswith("raised FileNotFoundError at line 22 of your code.")
    )


def test_no_network_not_even_to_the_grading_machine(batch):
    output = batch["reports"]["network"]["output"]
    assert "LEAK" not in output
    assert output.count("blocked:") == 3
    assert batch["server"].connections == 0


def test_escape_system_calls_are_refused(batch):
    output = batch["reports"]["escape_syscalls"]["output"]
    assert "LEAK" not in output
    assert output.count("blocked:") == 4
    assert "mount -> -1 (EPERM)" in output and "unshare -> -1 (EPERM)" in output


def test_fork_bombs_are_stopped_and_no_process_outlives_its_grading(batch):
    report = batch["reports"]["processes"]
    assert "blocked: fork bomb stopped after" in report["output"]
    assert _question(report, "softmax")["status"] == "passed"
    assert batch["leftovers"] == []  # nothing the grader started outlived it


def test_memory_time_and_disk_are_limited_per_question(batch):
    report = batch["reports"]["resources"]
    assert "LEAK" not in report["output"]
    assert "blocked: disk OSError" in report["output"]
    opened = int(report["output"].split("blocked: open files ")[1].split()[0])
    assert opened < 64  # the open-files limit
    lead = _question(report, "softmax")["feedback"].splitlines()[0]
    assert lead.endswith("softmax raised MemoryError at line 29 of your code.")
    attention = _question(report, "attention")
    assert attention["status"] == "timeout" and "did not return within 2 s" in attention["feedback"]
    saturation = _question(report, "saturation")  # fills memory slowly: the limit or the clock stops it
    assert saturation["status"] in {"error", "timeout"} and saturation["score"] == 0
    assert _question(report, "positional_encoding")["status"] == "passed"


def test_exits_and_floods_cost_only_the_questions_concerned(batch):
    report = batch["reports"]["exits_and_floods"]
    assert len(report["output"].encode()) <= 64 * 1024
    assert report["output"].startswith("flood flood")
    assert "softmax raised SystemExit" in _question(report, "softmax")["feedback"]
    assert "worker exited with status 3" in _question(report, "attention")["feedback"]
    assert "killed by SIGKILL" in _question(report, "saturation")["feedback"]
    assert _question(report, "positional_encoding")["status"] == "passed"


def test_only_plain_data_comes_back(batch):
    report = batch["reports"]["tampered_values"]
    feedback = {q["id"]: q["feedback"] for q in report["questions"]}
    assert "returned an ndarray subclass, not a plain numpy array" in feedback["softmax"]
    assert "returned a numpy array of dtype object" in feedback["attention"]
    # The class's name is the submission's to choose, so it is never quoted.
    assert (
        "returned an object of a class of its own" in feedback["saturation"] and "Sneaky" not in feedback["saturation"]
    )
    assert "crashed" in feedback["self_attention"]
    assert "nested more than 32 levels deep" in feedback["multi_head"]
    assert report["score"] == 0


def test_hidden_inputs_never_reach_feedback(batch):
    texts = [path.read_text() for path in batch["out"].iterdir() if path.suffix in {".json", ".txt"}]
    assert texts and not any("SECRET" in text for text in texts)
    report = batch["reports"]["leak_inputs"]
    assert "softmax raised ValueError at line 15 of your code" in _question(report, "softmax")["feedback"]
    assert "an exception of the submission's own class" in _question(report, "attention")["feedback"]


def test_hidden_test_source_never_reaches_feedback(batch):
    hidden = (ASSIGNMENTS / "sequences-and-attention" / "hidden").glob("*.py")
    # Each check's text (its docstring's first paragraph) is shown by design; nothing else of the suite.
    shown = " ".join(
        label["description"]
        for label in hidden_suite(load_assignment(ASSIGNMENTS / "sequences-and-attention")).plugin.labels.values()
    )
    lines = {line.strip() for path in hidden for line in path.read_text().splitlines() if len(line.strip()) > 30}
    lines = {line for line in lines if line.strip('"') not in shown}
    for path in batch["out"].iterdir():
        if path.suffix in {".json", ".txt"}:
            text = path.read_text()
            assert [line for line in lines if line in text] == []


def test_forged_frames_make_the_submission_unrunnable_not_the_grader(batch):
    report = batch["reports"]["forged_frames"]
    assert report["ran"] is False and report["score"] == 0
    assert all(q["status"] == "error" for q in report["questions"])


def test_forged_answers_cost_their_question_and_never_the_graders_memory(batch):
    report = batch["reports"]["forged_answers"]
    feedback = {q["id"]: q["feedback"] for q in report["questions"]}
    assert "an array used twice" in feedback["softmax"]
    assert "an array whose header does not match its data" in feedback["attention"]
    assert "saturation raised an exception" in feedback["saturation"]
    assert "does not hold numbers" in feedback["self_attention"]
    assert "an object of a class of its own" in feedback["multi_head"]
    assert _question(report, "positional_encoding")["status"] == "passed"
    assert report["ran"] is True and report["score"] == 1  # recorded as the student's own result
    assert "forged_answers" in (batch["out"] / "grades.csv").read_text()
    # Decoded naively, softmax's answer alone would take 3 GB; every process of the batch stayed small.
    assert batch["peak_kib"] < 1024 * 1024, batch["peak_kib"]


def test_broken_frames_end_in_a_verdict_never_a_hang(batch):
    report = batch["reports"]["broken_frames"]
    feedback = {q["id"]: q["feedback"] for q in report["questions"]}
    for question in ("softmax", "attention", "saturation"):
        assert _question(report, question)["status"] == "error"
        assert "the answer could not be read" in feedback[question]
    assert "a malformed frame" in feedback["softmax"] and "a malformed frame" in feedback["saturation"]
    assert "a frame of more than" in feedback["attention"]
    for question in ("self_attention", "multi_head"):  # half a frame, then silence; a frame trickled forever
        assert _question(report, question)["status"] == "timeout"
        assert "did not return within 2 s" in feedback[question]
    assert _question(report, "positional_encoding")["status"] == "passed"


def test_writable_places_are_few_and_small(batch):
    output = batch["reports"]["fill_writable"]["output"]
    written = dict(line.split(": wrote ") for line in output.splitlines() if ": wrote " in line)
    mib = {place: int(text.split()[0]) for place, text in written.items()}
    assert 0 < mib["/tmp"] <= 16 and 0 < mib["/dev/shm"] <= 16
    assert all(mib[place] == 0 for place in mib if place not in {"/tmp", "/dev/shm", "in all"})
    assert mib["in all"] <= 32


def test_feedback_never_quotes_a_returned_string_or_a_large_shape(batch):
    report = batch["reports"]["shapes_and_strings"]
    feedback = {q["id"]: q["feedback"] for q in report["questions"]}
    # Every check's message, folded into the feedback or not: the large shape was met and described.
    messages = [test["message"] for test in _question(report, "softmax")["tests"]]
    assert any("the wrong size along axis 0." in message for message in messages)
    assert not any(
        len(word.strip("(),.;")) >= 5 and word.strip("(),.;").isdigit()
        for text in (feedback["softmax"], *messages)
        for word in text.split()
    )
    assert "but got a string" in feedback["positional_encoding"]
    assert "SECRET" not in json.dumps(report)


def test_text_no_file_can_hold_is_stored_escaped(batch):
    report = batch["reports"]["unencodable"]
    assert any("cannot encode \\ud800 this" in error for error in report["errors"])
    assert _question(report, "softmax")["status"] == "failed"
    feedback = (batch["out"] / "unencodable.feedback.txt").read_text()
    assert "\x1b" not in feedback and "\r" not in feedback
    assert "\\x1b[2J" in feedback  # shown, not acted on
    completed = batch["completed"]
    assert "\x1b" not in completed.stdout + completed.stderr


def test_the_grader_leaves_no_files_behind(batch):
    assert list(batch["tmp"].iterdir()) == []


# Words that would tell a submission it is being graded, not run by its student ("autograder" too: the
# student's notebook imports it, so the file of its own import of it is the one place it may show).
GIVEAWAYS = (
    "grad",
    "sandbox",
    "hidden",
    "test",
    "worker",
    "zygote",
    "bwrap",
    "bubblewrap",
    "seccomp",
    "runtime",
    "judge",
    "secret",
)


def test_a_submission_cannot_tell_it_is_being_graded(batch):
    report = batch["reports"]["identity"]
    output = report["output"]
    assert "LEAK" not in output and "blocked: no sign of grading" in output
    seen = json.loads(output.split("SEEN: ", 1)[1].split("\n", 1)[0])
    # What it saw is what a script run by hand on an unnamed machine shows.
    assert seen["hostname"] == "localhost" == seen["uname"][1]
    assert seen["cwd"] == "/tmp" and seen["file"] is None  # a notebook's cell has no __file__
    assert seen["argv"] == ["/usr/local/main.py"] and seen["executable"] == "/usr/local/bin/python3"  # no arguments
    assert (
        seen["numpy"]
        == f"/usr/local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages/numpy/__init__.py"
    )
    assert seen["root"] == ["bin", "dev", "lib", "lib64", "proc", "tmp", "usr"]
    assert seen["check"] == "True"
    assert len(seen["processes"]) == 2 and all(
        p["cmdline"].startswith("/usr/local/bin/python3 ") for p in seen["processes"].values()
    )
    assert seen["self"]["cmdline"] and seen["self"]["parent"] == seen["processes"]["1"]["cmdline"]
    # Modules by their libraries' names only (matplotlib's include PIL.GimpGradientFile): none of the grader's.
    assert not {"autograder", "worker", "zygote", "main", "run"} & set(seen["modules"])
    assert seen["main"][:2] == [None, None]  # __main__ is the submission's own module, as a script's is
    text = json.dumps({key: value for key, value in seen.items() if key not in {"checks", "modules"}}).lower()
    assert [word for word in (*GIVEAWAYS, "autograder") if word in text] == []
    assert set(seen["environment"]) <= {
        "PATH",
        "HOME",
        "PWD",
        "LC_CTYPE",
        "LD_LIBRARY_PATH",
        "MPLBACKEND",
        "MPLCONFIGDIR",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
    }
    # And so it answered as it would for its student, during the graded calls too.
    assert _question(report, "softmax")["status"] == "passed"


def test_what_a_worker_reports_is_checked_and_the_graders_own_work_is_bounded(batch):
    report = batch["reports"]["forged_reports"]
    feedback = {q["id"]: q["feedback"] for q in report["questions"]}
    # A line the worker reports is shown only when it is a line of code in the submission's own source.
    assert feedback["softmax"].splitlines()[0].endswith("softmax raised ValueError.")
    assert "at line" not in feedback["softmax"]
    assert "scaled_dot_product_attention raised ValueError." in feedback["attention"]
    assert "at line" not in feedback["attention"]
    # A million tiny values are refused before they are read, not decoded one by one.
    assert "the answer could not be read: a frame of more than 512 KiB of header" in feedback["saturation"]
    # The reference's work on the rerun's 3 GB request ran in a budget of its own: no cause is named,
    # and the batch's processes stayed small (test_forged_answers... checks the peak of them all).
    assert "these failures may come from" in feedback["self_attention"]
    assert _question(report, "positional_encoding")["status"] == "passed"
    assert batch["peak_kib"] < 1024 * 1024, batch["peak_kib"]
