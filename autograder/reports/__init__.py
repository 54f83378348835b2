"""Reports: the model every writer and the gradebook read (``model.py``), and the formats. Each other
module writes one kind of file from a grading Report:
``write(report, folder) -> Path``. The batch writes every format in ``PER_STUDENT`` for each
student, and ``grades_csv`` once from the gradebook."""

from __future__ import annotations

from . import feedback, gradescope, json_report

PER_STUDENT = {
    "json": json_report.write,
    "feedback": feedback.write,
    "gradescope": gradescope.write,
}
