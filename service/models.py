"""The service's own tables, a module per concept, all of them the ``service`` app's (their tables
named ``service_<model>`` as before the split); grades themselves live in the gradebook's tables.

- ``accounts``: members of the course and their roles, API tokens, one-time sign-in links, used
  LTI launches;
- ``queue``: the jobs of hand-ins to grade, and the assignments closed to hand-ins;
- ``reviews``: review requests and their messages;
- ``lti``: the outbox of scores for the course platforms, and the placement each student launched;
- ``exams``: exams taken online (settings, accommodations, attempts, answers, their log, their gradings);
- ``lessons``: students' answers to lessons' check questions on the site (practice);
- ``workers``: the grading workers seen alive.

Every model is imported here, so that ``from service.models import Job`` reads as it always has.
"""

from .accounts.models import ApiToken, Member, SignInLink, UsedLaunch, digest
from .exams.models import ExamAnswer, ExamAttempt, ExamGrading, ExamLogEntry, ExamQuestionResults, OnlineExam
from .handin.models import ClosedAssignment, Job, PracticeJob
from .lessons.models import LessonAnswer
from .lti.models import ScorePlacement, ScoreToSend
from .marking.models import ReviewMessage, ReviewRequest
from .operations.models import WorkerSeen

__all__ = [
    "ApiToken",
    "ClosedAssignment",
    "ExamAnswer",
    "ExamAttempt",
    "ExamGrading",
    "ExamLogEntry",
    "ExamQuestionResults",
    "Job",
    "LessonAnswer",
    "Member",
    "OnlineExam",
    "PracticeJob",
    "ReviewMessage",
    "ReviewRequest",
    "ScorePlacement",
    "ScoreToSend",
    "SignInLink",
    "UsedLaunch",
    "WorkerSeen",
    "digest",
]
