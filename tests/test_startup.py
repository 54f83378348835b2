"""Commands start at once: `--help` and `--version` import nothing heavy (checked in sys.modules,
never by a clock; the times are in docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import ROOT

HEAVY = (
    "jsonschema",
    "rfc3987_syntax",
    "nbgrader",
    "nbformat",
    "matplotlib",
    "numpy",
    "pytest",
    "torch",
    "lxml",
    "dask",
    "latex2mathml",
    "django",
    "psycopg",
)
PROBE = """
import json, sys
from {module} import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted({{name.split(".")[0] for name in sys.modules}})), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "module, argv",
    [
        ("commands.course", ["--version"]),
        ("commands.course", ["--help"]),
        ("commands.course", ["export", "checks", "--help"]),
        ("commands.autograder", ["--version"]),
        ("commands.autograder", ["--help"]),
        ("commands.autograder", ["grade", "--help"]),
    ],
)
def test_help_and_version_import_nothing_heavy(module, argv):
    completed = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, argv=argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    loaded = set(json.loads(completed.stderr.strip().splitlines()[-1]))
    assert completed.stdout.strip()  # it did print its help or version
    assert sorted(loaded & set(HEAVY)) == []


def test_validating_lessons_does_not_build_the_iri_grammar():
    probe = (
        "import sys\nfrom commands.course import main\nmain(['validate', 'lesson_data'])\n"
        "print('rfc3987_syntax' in sys.modules, file=sys.stderr)\nimport jsonschema\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert completed.stderr.strip().splitlines()[-1] == "False"


def test_auto_reference_is_decided_without_importing_torch_where_there_is_no_gpu():
    probe = (
        "import sys\nfrom autograder.assignment import load_assignment\nfrom autograder.references import "
        "resolve_reference, nvidia_gpu_present\nchoice = resolve_reference('auto', "
        "load_assignment('assignments/sequences-and-attention'))\n"
        "print(choice, nvidia_gpu_present(), 'torch' in sys.modules, file=sys.stderr)\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    choice, gpu, torch_imported = completed.stderr.split()
    if gpu == "False":
        assert (choice, torch_imported) == ("numpy", "False")
    else:  # a machine with a GPU asks torch whether CUDA works
        assert choice in {"torch", "numpy"}
