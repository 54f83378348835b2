"""The ``autograder`` command. Its commands (release, grade, check) arrive with the assignments
and the sandboxed grader; for now it only answers --help and --version."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description="Release and grade Module 10 assignments.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.parse_args(argv)
    parser.print_help()
    return 0


def _version() -> str:
    try:
        return version("module10-autograder")
    except PackageNotFoundError:
        return "unknown"
