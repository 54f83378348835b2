"""Reference values remembered on disk: the same values in a later process, never a wrong one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from autograder.remembered import remembered

pytestmark = pytest.mark.timeout(120)

REFERENCE = """
from autograder.remembered import remembered

calls = []

@remembered
def mean_of(n, scale=1.0):
    calls.append(n)
    return sum(range(n)) * scale / n
"""


def _reference(tmp_path, source=REFERENCE):
    path = tmp_path / "reference.py"
    path.write_text(source)
    return path


def _run(path, cache, code):
    program = textwrap.dedent(f"""
        import importlib.util, json
        spec = importlib.util.spec_from_file_location("reference", {str(path)!r})
        reference = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(reference)
        {code}
        print(json.dumps(reference.calls))
    """)
    completed = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={
            "GRADEWRIGHT_REFERENCE_CACHE": str(cache),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(__import__("pathlib").Path(__file__).parent.parent),
        },
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    *printed, calls = completed.stdout.splitlines()
    return printed, json.loads(calls)


def test_a_later_process_gets_the_values_without_computing_them(tmp_path):
    path, cache = _reference(tmp_path), tmp_path / "cache"
    printed, calls = _run(
        path, cache, "print(reference.mean_of(10), reference.mean_of(10), reference.mean_of(4, scale=2.0))"
    )
    assert printed == ["4.5 4.5 3.0"] and calls == [10, 4]  # once each, in memory the second time
    printed, calls = _run(
        path, cache, "print(reference.mean_of(10), reference.mean_of(4, scale=2.0), reference.mean_of(6))"
    )
    assert printed == ["4.5 3.0 2.5"] and calls == [6]  # the first two from disk
    (stored,) = cache.glob("*.json")
    assert len(json.loads(stored.read_text())) == 3
    assert oct(cache.stat().st_mode & 0o777) == "0o700"


def test_an_edited_reference_computes_afresh(tmp_path):
    cache = tmp_path / "cache"
    _run(_reference(tmp_path), cache, "reference.mean_of(10)")
    edited = _reference(tmp_path, REFERENCE.replace("* scale / n", "* scale / n + 1"))
    printed, calls = _run(edited, cache, "print(reference.mean_of(10))")
    assert printed == ["5.5"] and calls == [10]
    assert len(list(cache.glob("*.json"))) == 2


@pytest.mark.parametrize("content", ["not json {", '["a list"]', ""])
def test_a_damaged_file_is_ignored_and_rewritten(tmp_path, content):
    path, cache = _reference(tmp_path), tmp_path / "cache"
    _run(path, cache, "reference.mean_of(10)")
    (stored,) = cache.glob("*.json")
    stored.write_text(content)
    printed, calls = _run(path, cache, "print(reference.mean_of(10))")
    assert printed == ["4.5"] and calls == [10]
    assert json.loads(stored.read_text()) == {json.dumps([[10], []]): 4.5}


def test_values_that_json_cannot_give_back_are_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADEWRIGHT_REFERENCE_CACHE", str(tmp_path / "cache"))
    seen = []

    @remembered
    def echo(value):
        seen.append(value)
        return value if not isinstance(value, float) else (value, value)

    # A tuple, as an argument or a result, would come back a list (and share a list's key): computed
    # each time. A list, in and out, is remembered.
    assert echo((1, 2)) == (1, 2) and echo((1, 2)) == (1, 2)
    assert echo(0.5) == (0.5, 0.5) and echo(0.5) == (0.5, 0.5)
    assert echo([1, 2]) == [1, 2] and echo([1, 2]) == [1, 2]
    assert seen == [(1, 2), (1, 2), 0.5, 0.5, [1, 2]]


def test_an_unwritable_folder_leaves_grading_as_it_was(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("GRADEWRIGHT_REFERENCE_CACHE", str(blocked / "cache"))

    @remembered
    def double(n):
        return 2 * n

    assert double(3) == 6 and double(3) == 6
