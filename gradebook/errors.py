"""Errors of the ``gradebook`` package: each message is one line for the instructor.

    GradebookError             base
     ├── GradebookUnavailable  not a gradebook, a damaged one, a newer one, an older format, locked,
     │                         or a database server that cannot be reached
     ├── NotFound              a student or assignment the gradebook does not know
     ├── BadFile               a roster, marks or grades file that cannot be used as a whole
     │                         (repeated ids, another assignment's marks, missing columns)
     ├── LeaseLost             a queue's row finished by a holder whose lease another took (gradebook.leases)
     └── BadEdit               a change the staff asked for that cannot be made (a mark's score
                               outside 0..the question's points, from marks.give_mark; a rubric
                               item out of bounds, for a question not graded by hand; an exam mark
                               out of range, or for a question not on the student's variant)

A row of a file that cannot be used is not an error: it is reported with its row number and the
other rows are kept. Django's and the database drivers' errors become these in one place,
``dependency_error``.
"""

from __future__ import annotations


class GradebookError(Exception):
    """Base of the gradebook's errors; the message is a single user-facing line."""


class GradebookUnavailable(GradebookError):
    pass


class NotFound(GradebookError):
    pass


class BadFile(GradebookError):
    pass


class BadEdit(GradebookError):
    pass


def dependency_error(exc: BaseException, where: str) -> GradebookError | None:
    """A database error about the gradebook at ``where``, in our words (one line), or None."""
    from django.db import utils

    text = " ".join(str(exc).split())
    if isinstance(exc, utils.OperationalError) and "locked" in text:
        return GradebookUnavailable(f"{where}: the gradebook is locked by another grader; try again when it is done")
    if isinstance(exc, utils.OperationalError) and ("connect" in text or "connection" in text):
        return GradebookUnavailable(f"{where}: cannot reach the gradebook's database ({text[:200]})")
    if isinstance(exc, utils.DatabaseError):
        return GradebookUnavailable(f"{where}: not a gradebook, or a damaged one ({text[:200]}); nothing was changed")
    return None


class LeaseLost(GradebookError):
    """A queue's row finished by a holder that no longer held its lease (gradebook.leases): nothing
    it wrote in that transaction is kept."""
