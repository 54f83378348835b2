"""Files that hold secrets or personal data are their owner's only (0600) wherever they land, even
where a file of the same name was there before, readable by everyone (course/private_files.py):
live sign-in links, grade exports in every format, the marks sheet, an exam's scores and feedback,
the tokens ``autograder login`` keeps."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from course.private_files import write_private
from gradebook.exports import FORMATS
from gradebook.models import Student

from .test_gradebook import ASSIGNMENT, _roster, cli

pytestmark = pytest.mark.usefixtures("empty_queue")


def _world_readable(path: Path) -> Path:
    """A file already there, as an older version or another program left it: 0644."""
    path.write_text("last week's file\n", encoding="utf-8")
    path.chmod(0o644)
    return path


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_sign_in_links_file_is_its_owners_only(tmp_path):
    from service.accounts.members import sign_in_links

    name = f"p{uuid.uuid4().hex[:8]}"
    Student.objects.create(student_id=name, name="Pat Private", email=f"{name}@example.edu", on_roster=True)
    out = _world_readable(tmp_path / "links.csv")
    assert sign_in_links("http://course.example/", out) >= 1
    assert _mode(out) == 0o600 and "/welcome/" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", list(FORMATS))
def test_every_grade_export_is_its_owners_only(tmp_path, capsys, kind):
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    assert cli(capsys, "roster", "import", _roster(tmp_path), *book)[0] == 0
    out = _world_readable(tmp_path / f"grades.{kind}.csv")
    code, _, err = cli(capsys, "grades", "export", ASSIGNMENT, "--format", kind, "--out", out, *book)
    assert code == 0, err
    assert _mode(out) == 0o600 and "Ada Lovelace" in out.read_text(encoding="utf-8")


def test_the_marks_sheet_is_its_owners_only(tmp_path, capsys):
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    assert cli(capsys, "roster", "import", _roster(tmp_path), *book)[0] == 0
    out = _world_readable(tmp_path / "marks.csv")
    code, _, err = cli(capsys, "marks", "export", ASSIGNMENT, "--out", out, *book)
    assert code == 0, err
    assert _mode(out) == 0o600


def test_what_is_not_a_plain_file_is_written_as_it_is(tmp_path):
    import os

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe, 0o644)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_private(pipe, "through\n")
        assert os.read(reader, 100) == b"through\n" and _mode(pipe) == 0o644
    finally:
        os.close(reader)
