"""The commands stay thin and small: no module of ``commands/`` over 400 lines, both CLIs' ``main()``
the one in ``commands/common.py``, and the choices a command offers taken from the library's
registries, never a list of their own."""

from __future__ import annotations

import argparse
import ast

import pytest

from commands import common
from commands.autograder import build_parser as autograder_parser
from commands.autograder import main as autograder_main
from commands.course import build_parser as course_parser
from commands.course import main as course_main

from .conftest import ROOT

LIMIT = 400
COMMANDS = ROOT / "commands"


def test_no_module_of_the_commands_is_over_400_lines():
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(COMMANDS.rglob("*.py"))
    }
    assert len(sizes) >= 8  # the walk found the package (common, course, autograder/...)
    assert {path: lines for path, lines in sizes.items() if lines > LIMIT} == {}


def test_each_command_group_defines_its_subcommands_beside_their_handlers():
    """Every handler a group's parser names is a function of that same module."""
    for path in [COMMANDS / "course.py", *sorted((COMMANDS / "autograder").glob("*.py"))]:
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        named = {
            keyword.value.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            for keyword in node.keywords
            if keyword.arg == "handler" and isinstance(keyword.value, ast.Name)
        }
        assert named, path.name
        assert named <= defined, (path.name, named - defined)


def _subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*prefix, name))


def _choices(parser: argparse.ArgumentParser, path: tuple[str, ...], option: str) -> list[str]:
    command = dict(_subcommands(parser))[path]
    (action,) = [action for action in command._actions if option in action.option_strings]
    return list(action.choices)


def test_the_grade_file_formats_are_the_exporters_registry():
    from gradebook.exports import FORMATS, WARNINGS
    from gradebook.formats import GRADE_FORMATS, MISSING

    assert _choices(autograder_parser(), ("grades", "export"), "--format") == list(GRADE_FORMATS) == list(FORMATS)
    assert set(WARNINGS) == {"canvas", "moodle"}  # the writers that say what their platform makes of the file
    assert (
        _choices(autograder_parser(), ("grades", "export"), "--missing") == list(MISSING) == ["empty", "zero", "skip"]
    )


def test_the_check_export_formats_are_the_course_registry():
    from course.formats import EXPORT_FORMATS

    assert _choices(course_parser(), ("export", "checks"), "--format") == list(EXPORT_FORMATS)


@pytest.mark.parametrize("main, prog", [(autograder_main, "autograder"), (course_main, "course")])
def test_both_commands_give_a_usage_error_as_one_line(main, prog, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["frobnicate"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"{prog}: error: argument COMMAND: invalid choice: 'frobnicate'")
    assert err.endswith(f"(see {prog} --help)\n")


@pytest.mark.parametrize("prog", ["autograder", "course"])
def test_an_error_of_any_package_is_one_line_and_exit_2(prog, capsys):
    """Every package's error tree (``untrusted``'s too) is the user's, for both commands alike."""
    from untrusted.errors import UnreadableTable

    assert issubclass(UnreadableTable, common.USER_ERRORS)

    def fail(args: argparse.Namespace) -> int:
        raise UnreadableTable("roster.csv: row 3: no student_id\nsecond line")

    def parser() -> argparse.ArgumentParser:
        made = common.parser(prog, "a test")
        made.set_defaults(handler=fail)
        return made

    assert common.run(prog, parser, [], "interrupted") == 2
    assert capsys.readouterr().err == f"{prog}: roster.csv: row 3: no student_id\\x0asecond line\n"


def test_a_bug_is_one_line_naming_it_and_an_interruption_is_128_plus_the_signal(capsys):
    def bug(args: argparse.Namespace) -> int:
        raise KeyError("oops")

    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    for handler, code, said in (
        (bug, 2, "course: internal error (KeyError: 'oops'); please report it\n"),
        (interrupted, 130, "course: interrupted\n"),
    ):

        def parser(handler=handler) -> argparse.ArgumentParser:
            made = common.parser("course", "a test")
            made.set_defaults(handler=handler)
            return made

        assert common.run("course", parser, [], "interrupted") == code
        assert capsys.readouterr().err == said


def test_both_commands_say_the_same_version(capsys):
    from autograder.version import grader_version

    for main, prog in ((autograder_main, "autograder"), (course_main, "course")):
        with pytest.raises(SystemExit):
            main(["--version"])
        assert capsys.readouterr().out == f"{prog} {grader_version()}\n"
