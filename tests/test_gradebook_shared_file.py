"""An SQLite gradebook that several processes use at once (the service, and the instructor's
`autograder roster import` on the same file): what one process writes, the others read, whatever
they open and close meanwhile."""

from __future__ import annotations

import subprocess
import sys

import pytest

OTHER_PROCESS = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
if len(sys.argv) > 2:
    columns = "student_id, name, email, canvas_id, moodle_id, sis_id, on_roster"
    connection.execute(f"INSERT INTO gradebook_student ({columns}) VALUES (?, '', '', '', '', '', 0)", [sys.argv[2]])
print(",".join(row[0] for row in connection.execute("SELECT student_id FROM gradebook_student ORDER BY 1")))
connection.close()
"""


def _other_process(path, *insert: str) -> str:
    """What another process reads (after writing ``insert``), before it closes the file, as the
    service does at the end of every request."""
    done = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(path), *insert], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.timeout(120)
def test_an_opened_gradebooks_writes_reach_other_processes_that_open_and_close_it_meanwhile(tmp_path):
    from gradebook.database import close_database, open_database
    from gradebook.models import Student

    path = tmp_path / "gradebook.db"
    close_database(open_database(path)[0])  # made before, as the service's is before the instructor's command
    alias, _ = open_database(path)
    try:
        Student.objects.using(alias).create(student_id="a-first")
        assert _other_process(path, "b-theirs") == "a-first,b-theirs"
        # Once the opener had closed a descriptor of the file, this process held no lock on it: the
        # other process, closing, took itself for the file's last user and removed the WAL, and
        # what this process wrote next went to the removed file, which no one else reads.
        Student.objects.using(alias).create(student_id="c-second")
        assert _other_process(path) == "a-first,b-theirs,c-second"
    finally:
        close_database(alias)
    assert path.stat().st_mode & 0o777 == 0o600  # grades are their owner's alone
