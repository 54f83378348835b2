"""Errors of the ``service`` package; each message is one line.

ServiceError          base
 ├── ServiceSetupError  the service cannot start here (no course, a state folder it cannot write)
 ├── UploadRefused      a hand-in refused before anything runs (too large, not a notebook, over
 │   │                  the submission limit), or a run of the practice checks; shown to the student
 │   └── TooManyHandIns over an hourly limit (of hand-ins, or of runs of the practice checks):
 │                      an OverLimit too (below)
 ├── UploadUnreadable   a job's stored upload cannot be read (gone, or not readable after a
 │                      restore): the job fails with why, and no grade is changed
 ├── ClientError        ``autograder login`` / ``submit``: the server cannot be reached or refused
 │   └── HandInWarned   ``submit`` without --anyway, where the server warns of the hand-in (late,
 │                      replacing a better or an on-time grade): nothing was handed in
 ├── LtiError           a platform's registration is incomplete, or a platform's service refused
 │                      (pylti1p3's LtiException is translated here, in service/lti/)
 ├── OverLimit          a student over a rolling limit (service/core/limits.py): 429 Too Many
 │   │                  Requests, Retry-After its seconds
 │   ├── TooManyHandIns (also an UploadRefused, above)
 │   └── TooManyAnswers a student's answers to lessons' check questions over the limit a minute
 │                      (service/lessons/answers.py), the page saying when to try again
 └── ExamRefused        an online exam's start, save or submit refused (not open, ended, wrong
     │                  code, not from the room's network); the message says why, to the student
     ├── WrongCode      the access code wrong, or too many wrong ones lately (exam_sessions.check_code)
     └── StaleAnswer    a save from a page that read the answer before another tab or device saved
                        it: nothing is overwritten; it carries the newer answer and its version
"""

from __future__ import annotations


class ServiceError(Exception):
    pass


class ServiceSetupError(ServiceError):
    pass


class UploadRefused(ServiceError):
    pass


class UploadUnreadable(ServiceError):
    pass


class OverLimit(ServiceError):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)  # seconds until the limit lets one more in


class TooManyHandIns(UploadRefused, OverLimit):
    pass


class ClientError(ServiceError):
    pass


class HandInWarned(ClientError):
    """Not handed in: the server's warnings (``hand_in_warnings``), each a whole sentence."""

    def __init__(self, warnings: list[str]) -> None:
        super().__init__("nothing was handed in: " + " ".join(warnings) + " Hand in all the same with --anyway.")
        self.warnings = warnings


class LtiError(ServiceError):
    pass


class TooManyAnswers(OverLimit):
    pass


class ExamRefused(ServiceError):
    pass


class WrongCode(ExamRefused):
    """An exam's access code wrong, or too many wrong ones given lately."""


class StaleAnswer(ExamRefused):
    def __init__(self, message: str, value: str, version: str) -> None:
        super().__init__(message)
        self.value = value  # the answer saved meanwhile ("" for none: cleared)
        self.version = version  # its version (exam_saves.version_of), "" for none
