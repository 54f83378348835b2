"""The tables of exams taken online (README "Exams"): an exam's settings, the students' attempts,
each answer as last saved, and the attempt's log (a student's accommodations are the gradebook's
exam extensions). An exam is known
by its name in course.toml (its folder's name); its questions and key stay in the folder."""

from __future__ import annotations

from django.db import models

from gradebook.models import Student


class OnlineExam(models.Model):
    """How an exam folder is taken online: its window, its time limit, how its questions are shown,
    when its results are, and what a proctored room asks (an access code, the room's networks)."""

    # When a student sees their results (issue #51; sessions.ResultsRule is the one rule; a question's own
    # setting, ExamQuestionResults, wins over this one): during the attempt, each saved answer's; when
    # their attempt ends; when the exam closes for everyone; when the staff publish them on the exam's
    # page; or never on this site.
    DURING, AT_SUBMIT, AFTER_CLOSE, PUBLISHED, NEVER = "during", "at_submit", "after_close", "published", "never"
    RESULTS = [
        (DURING, "during the exam, each answer's as it is saved"),
        (AT_SUBMIT, "when the attempt ends"),
        (AFTER_CLOSE, "after the exam closes"),
        (PUBLISHED, "when the staff publish them"),
        (NEVER, "never"),
    ]

    name = models.CharField(max_length=200, unique=True)
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    minutes = models.FloatField()  # the time limit of one attempt
    one_at_a_time = models.BooleanField(default=False)
    results = models.CharField(max_length=20, choices=RESULTS, default=AFTER_CLOSE)
    access_code = models.CharField(max_length=100, blank=True)
    networks = models.TextField(blank=True)  # allowed address ranges, one a line (CIDR); none: anywhere
    trial = models.BooleanField(default=False)  # the staff's own accounts may take it now, outside the window
    published_at = models.DateTimeField(null=True, blank=True)  # results published (None: not, or withdrawn)
    published_by = models.CharField(max_length=150, blank=True)  # who published or last withdrew them
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name


class ExamQuestionResults(models.Model):
    """One question's own results setting on an online exam, over the exam's (issue #51): a question
    named as the exam's key names it (a generated question by the question it is drawn from), so it
    holds for every student's variant of it; and its own publishing, kept with who and when (an open
    question's marks published once marked, before the rest)."""

    exam = models.ForeignKey(OnlineExam, on_delete=models.CASCADE, related_name="question_results")
    question = models.CharField(max_length=200)
    results = models.CharField(max_length=20, choices=OnlineExam.RESULTS, blank=True)  # "": the exam's
    published_at = models.DateTimeField(null=True, blank=True)  # published alone (None: not, or withdrawn)
    published_by = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["exam", "question"], name="one_results_per_question")]

    def __str__(self) -> str:
        return f"{self.exam}: {self.question}'s results"


class ExamAttempt(models.Model):
    SUBMITTED, TIME_LIMIT, CLOSED = "submitted", "time limit", "exam closed"

    exam = models.CharField(max_length=200, db_index=True)
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="exam_attempts")
    number = models.PositiveIntegerField(default=1)
    trial = models.BooleanField(default=False)  # the staff's own: never counted
    started_at = models.DateTimeField()
    ends_at = models.DateTimeField()  # the server's deadline, fixed at the start
    deadline_reason = models.CharField(max_length=20)  # what ends_at is: the time limit or the close
    ended_at = models.DateTimeField(null=True)
    ended_reason = models.CharField(max_length=20, blank=True)
    correct = models.IntegerField(null=True)  # check questions right, set when it ends
    automatic = models.IntegerField(null=True)
    # Not stored, known to this request only (a class's start is 2,000 requests within seconds: every
    # query spared counts): True on the attempt sessions.start has just made, whose page reads no answers;
    # after a save, how many of its questions have an answer, as the save's commit counted them.
    fresh = False
    answered_now: int | None = None

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["exam", "student", "number"], name="one_attempt_number")]

    def __str__(self) -> str:
        return f"{self.exam}: attempt {self.number} by {self.student}"


class ExamAnswer(models.Model):
    """An answer as last saved: a letter of the student's variant, or an open question's text."""

    attempt = models.ForeignKey(ExamAttempt, on_delete=models.CASCADE, related_name="answers")
    position = models.PositiveIntegerField()
    value = models.TextField()
    saved_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["attempt", "position"], name="one_answer_per_position")]

    def __str__(self) -> str:
        return f"answer to question {self.position}"


class ExamLogEntry(models.Model):
    """What happened to an attempt, and from which address: every start, save, refusal and end."""

    attempt = models.ForeignKey(ExamAttempt, on_delete=models.CASCADE, related_name="log")
    at = models.DateTimeField()
    action = models.CharField(max_length=20)
    address = models.CharField(max_length=100, blank=True)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.action} at {self.at:%H:%M:%S}"


class ExamGrading(models.Model):
    """An online exam's grading, asked for on its staff page and done by a worker (a job, not a web
    request: a class's attempts, feedback files and item analysis take a while). Claimed by the one
    lease rule (gradebook.leases)."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]

    exam = models.CharField(max_length=200, db_index=True)
    state = models.CharField(max_length=20, choices=STATES, default=QUEUED, db_index=True)
    requested_at = models.DateTimeField(auto_now_add=True)
    requested_by = models.CharField(max_length=150, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    lease = models.CharField(max_length=32, blank=True)
    lease_expires_at = models.DateTimeField(null=True)
    attempts = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True)
    graded = models.PositiveIntegerField(default=0)  # attempts graded into the gradebook
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.exam}: grading {self.state}"
