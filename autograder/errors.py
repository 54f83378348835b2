"""Errors of the ``autograder`` package.

Two families, kept apart on purpose:

    AutograderError              an instructor's mistake or an infrastructure fault; one line for stderr
     ├── AssignmentError         an assignment folder or manifest that cannot be used
     ├── SubmissionError         a submission path that does not exist or holds nothing gradable
     ├── SandboxUnavailable      the sandbox cannot start here (names what is missing)
     ├── LimitsTooLow            limits too low for the sandbox's runtime to start (names the option)
     ├── ReleaseError            a source notebook that cannot be released
     └── ClusterUnfit            a Dask cluster (a worker, the scheduler) that cannot grade

    StudentFault                 something a student's code did; becomes data in the report
     ├── MissingFunction         the function the test calls is not defined
     ├── StudentRaised           the function raised (only its class and line are kept)
     ├── BadReturn               it returned something that is not plain data
     ├── StudentTimeout          it ran past the time limit
     └── WorkerCrashed           the worker died (exit, signal, memory)

A StudentFault is raised inside a hidden test when a call into the sandbox fails, and the pytest
plugin turns it into the question's status; it never reaches a user as an exception.
"""

from __future__ import annotations

from typing import Literal


class AutograderError(Exception):
    """Base of the instructor-facing errors; the message is a single user-facing line."""


class AssignmentError(AutograderError):
    pass


class SubmissionError(AutograderError):
    pass


class SandboxUnavailable(AutograderError):
    pass


class LimitsTooLow(AutograderError):
    pass


class ReleaseError(AutograderError):
    pass


class ClusterUnfit(AutograderError):
    """Names the cluster, the part that cannot grade, what it lacks and how to fix it."""


class StudentFault(Exception):
    """A failure of the student's code, with a message that is safe to show the student."""

    status: Literal["error", "timeout"] = "error"


class MissingFunction(StudentFault):
    pass


class StudentRaised(StudentFault):
    pass


class BadReturn(StudentFault):
    pass


class StudentTimeout(StudentFault):
    status: Literal["error", "timeout"] = "timeout"


class WorkerCrashed(StudentFault):
    pass
