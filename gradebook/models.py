"""The gradebook's tables. Every hand-in is kept, as it happened: one submission row per hand-in,
with its own time, whatever its bytes (a regrade grades a submission again: never a new row); and
every choice the staff made of the submission that counts. A student's current grade is derived
(the submission that counts by the assignment's rule or the staff's choice, plus the marks given by
hand, less the late penalty: ``grades.py``), never stored."""

from __future__ import annotations

from django.db import models
from django.utils.formats import date_format
from django.utils.timezone import localtime

from course.wording import plural

# The student ids under which the course's staff try the grading service: their submissions are kept
# like any other, and never counted in grades, statistics or grade files.
STAFF_PREFIX = "staff:"


class Student(models.Model):
    # The id the course knows the student by: the roster's student_id, else the name their
    # submission folder or file gave (any text).
    student_id = models.CharField(max_length=400, unique=True)
    name = models.CharField(max_length=400, blank=True)
    email = models.CharField(max_length=400, blank=True)
    canvas_id = models.CharField(max_length=100, blank=True, db_index=True)
    moodle_id = models.CharField(max_length=100, blank=True, db_index=True)
    sis_id = models.CharField(max_length=100, blank=True)
    on_roster = models.BooleanField(default=False)
    # When the course's platform last said the student left the course (removed, Inactive or Deleted
    # in its membership): off the roster and the grade files, their grades kept and shown as dropped.
    # Nullable with no default, so that adding it keeps the table (SQLite remakes a table, and drops
    # its triggers, for a column with a default).
    dropped_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.student_id


class Assignment(models.Model):
    name = models.CharField(max_length=200, unique=True)
    title = models.CharField(max_length=400, blank=True)
    max_score = models.FloatField(default=0)
    # Canvas's id of its assignment for this one, as its launches say ($Canvas.assignment.id), for the
    # grade file's "Title (id)" column; assignment.toml's canvas_assignment_id wins where it is set.
    canvas_assignment_id = models.PositiveBigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class Question(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="questions")
    question_id = models.CharField(max_length=200)
    title = models.CharField(max_length=400, blank=True)
    points = models.FloatField()
    manual = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "question_id"], name="one_question_per_id")]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.assignment}: question {self.question_id}"


class Submission(models.Model):
    """One hand-in: the file a student handed in at one time, and its latest grading (a regrade
    replaces its results and its ``graded_at``; its hand-in time never changes)."""

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="submissions")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="submissions")
    sha256 = models.CharField(max_length=64)
    file = models.TextField(blank=True)  # the path it was graded from
    submitted_at = models.DateTimeField(null=True)  # the file's time in the platform's download, or the upload's
    # When it was graded last: the hand-in's grading, or a regrade's (the staff's, not a hand-in).
    graded_at = models.DateTimeField()
    graded_by = models.CharField(max_length=200, blank=True)  # the account that ran the grader
    grader_version = models.CharField(max_length=100, blank=True)
    reference = models.CharField(max_length=100, blank=True)
    sandbox = models.CharField(max_length=100, blank=True)
    ran = models.BooleanField(default=True)
    seconds = models.FloatField(null=True)  # how long its grading took
    errors = models.JSONField(default=list)
    output = models.TextField(blank=True)
    # A notebook of one's own (autograder.own_values): the report's ``own_values``, the values drawn
    # for the student beside those the notebook held; empty for an assignment without parameters.
    own_values = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [models.Index(fields=["assignment", "student"])]

    def __str__(self) -> str:
        return f"{self.student} on {self.assignment}, submission {self.pk}"


class CountedChoice(models.Model):
    """The staff's choice of the submission that counts for a student's grade on an assignment, or
    its undoing (``submission`` None: the assignment's rule decides again). Never changed nor
    deleted: the latest choice stands (``gradebook.grades.counting_submission``), and every one is
    kept, with who and why, in the student's history."""

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="counted_choices")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="counted_choices")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, null=True, related_name="choices")
    chosen_at = models.DateTimeField()
    chosen_by = models.CharField(max_length=200, blank=True)
    reason = models.TextField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["assignment", "student"], name="gradebook_counted_by_student")]

    def __str__(self) -> str:
        what = f"submission {self.submission_id} is the one that counts" if self.submission_id else "the rule decides"
        return f"{self.student} on {self.assignment}: {what}"


class Result(models.Model):
    """A question's automatic result for one submission (a manual question's holds its answers)."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="results")
    question_id = models.CharField(max_length=200)
    score = models.FloatField()
    max_score = models.FloatField()
    status = models.CharField(max_length=20)
    feedback = models.TextField(blank=True)
    tests = models.JSONField(default=list)  # the hidden tests' outcomes, as the report has them
    answers = models.JSONField(default=dict)  # written answers by cell grade_id, for hand grading

    class Meta:
        constraints = [models.UniqueConstraint(fields=["submission", "question_id"], name="one_result_per_question")]

    def __str__(self) -> str:
        return f"{self.submission}: question {self.question_id}"


class Mark(models.Model):
    """A score given by hand to a student's question, for the submission it was given for."""

    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="marks")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="marks")
    question_id = models.CharField(max_length=200)
    submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, related_name="marks")
    score = models.FloatField()  # the score given, when no rubric item was applied
    comment = models.TextField(blank=True)
    # The rubric items applied (their ids) and an adjustment: the score is then derived from the
    # items' current points (gradebook.marking.marks.mark_score), so changing an item regrades every mark.
    rubric = models.JSONField(default=list)
    adjustment = models.FloatField(default=0)
    marked_at = models.DateTimeField()
    marked_by = models.CharField(max_length=200, blank=True)
    # Given through an answer group (gradebook.marking.groups): the key the group's marks share, one
    # per save of the group page; empty for a mark given to this answer alone.
    group = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["student", "assignment", "question_id"], name="one_mark_per_question")
        ]

    def __str__(self) -> str:
        return f"{self.student} on {self.assignment}, question {self.question_id}: marked by hand"


class Extension(models.Model):
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="extensions")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="extensions")
    until = models.DateTimeField()
    granted_at = models.DateTimeField()
    granted_by = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["student", "assignment"], name="one_extension_per_assignment")]

    def __str__(self) -> str:
        return f"{self.student} on {self.assignment}: until {date_format(localtime(self.until), 'DATETIME_FORMAT')}"


class ExamExtension(models.Model):
    """A student's own terms on an exam taken online (an accommodation): more minutes, a later close
    of their own, more attempts. The exam is named as course.toml lists it (its folder's name)."""

    exam = models.CharField(max_length=200)
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="exam_extensions")
    extra_minutes = models.FloatField(default=0)
    until = models.DateTimeField(null=True, blank=True)  # their own close, when later than the exam's
    attempts = models.PositiveIntegerField(default=1)
    granted_at = models.DateTimeField()
    granted_by = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exam", "student"], name="one_extension_per_exam")]

    def __str__(self) -> str:
        return f"{self.student} on {self.exam}: {plural(self.extra_minutes, 'more minute', 'more minutes')}"


class ExamResult(models.Model):
    """One student's result on an exam: the graded sheet's score, and the open questions marked by hand."""

    exam = models.CharField(max_length=400)
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="exam_results")
    score = models.FloatField()
    max_score = models.FloatField()
    graded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exam", "student"], name="one_result_per_exam")]

    def __str__(self) -> str:
        return f"{self.student} on {self.exam}"


class ExamMark(models.Model):
    exam = models.CharField(max_length=400)
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="exam_marks")
    question = models.CharField(max_length=200)
    score = models.FloatField()
    max_score = models.FloatField()
    comment = models.TextField(blank=True)
    marked_at = models.DateTimeField()
    marked_by = models.CharField(max_length=200, blank=True, default="")
    group = models.CharField(max_length=64, blank=True, default="")  # as Mark.group

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exam", "student", "question"], name="one_exam_mark")]

    def __str__(self) -> str:
        return f"{self.student} on {self.exam}, question {self.question}"


class RubricEdit(models.Model):
    """A rubric item as the staff set it on the marking page: it replaces the manifest's item of the
    same id (its text and points), or adds one. Marks follow the items' current points."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="rubric_edits")
    question_id = models.CharField(max_length=200)
    item_id = models.CharField(max_length=100)
    text = models.TextField()
    points = models.FloatField()
    edited_at = models.DateTimeField()
    edited_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "question_id", "item_id"], name="one_edit_per_rubric_item")
        ]


class Publication(models.Model):
    """The staff publishing an assignment's grades (``question_id`` blank), or one hand-graded
    question's marks, or (``published`` false) undoing it: each an event with who, when and why,
    never an edit; what is published now is the latest of each (gradebook.publishing)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="publications")
    question_id = models.CharField(max_length=200, blank=True)
    published = models.BooleanField()
    at = models.DateTimeField()
    by = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        what = f"question {self.question_id}" if self.question_id else "grades"
        return f"{self.assignment}: {what} {'published' if self.published else 'unpublished'}"


class Fingerprint(models.Model):
    """A graded file's code fingerprint (``gradebook.similarity.fingerprints``), by the file's sha256: kept when
    it is graded, so that similarity compares fingerprints and never reads or tokenizes files again."""

    sha256 = models.CharField(max_length=64, unique=True)
    scheme = models.PositiveSmallIntegerField()  # how it was computed (fingerprints.SCHEME)
    hashes = models.BinaryField()  # int64 little-endian: the hash of every k-gram of the filtered code, in order
    filtered_length = models.PositiveIntegerField()
    code = models.BinaryField()  # the code itself, zlib-compressed: the shared regions are highlighted in it
    unreadable = models.TextField(blank=True)  # why the file could not be read
    # copydetect's offsets of the filtered code back into the raw (int32 pairs, zlib): a pair's shared
    # regions are highlighted with no tokenizing again; NULL in rows kept before them.
    offsets = models.BinaryField(null=True)


class SimilarityRun(models.Model):
    """One similarity report of an assignment: queued from the staff's page (a worker computes it) or
    computed by ``autograder similarity``; its progress while it runs, then the report itself."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]

    assignment = models.CharField(max_length=200, db_index=True)
    threshold = models.FloatField()
    state = models.CharField(max_length=20, choices=STATES, default=QUEUED, db_index=True)
    requested_at = models.DateTimeField()
    requested_by = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)
    heartbeat_at = models.DateTimeField(null=True)  # its worker's last progress: long silent, it is run again
    worker = models.CharField(max_length=200, blank=True)
    lease = models.CharField(max_length=32, blank=True)  # the claim's token (gradebook.leases)
    lease_expires_at = models.DateTimeField(null=True)  # renewed with each heartbeat; past it, run again
    done = models.PositiveIntegerField(default=0)  # candidate pairs compared so far ...
    total = models.PositiveIntegerField(default=0)  # ... of these
    report = models.JSONField(null=True)  # similarity.SimilarityReport, once done
    error = models.TextField(blank=True)


class DataVersion(models.Model):
    """One row: the grades' version, a new random value on every write to the tables a grade is
    derived from, set by the database's triggers (``gradebook.versions``)."""

    value = models.BigIntegerField()


class DataChange(models.Model):
    """The change log: one entry per row written to a table a grade is derived from, naming the
    student (a ``Student`` pk; NULL: everyone, as a rubric edit), written by the same database
    triggers as the version (``gradebook.versions``): a kept grade table is updated for only the
    students written since it was computed. Pruned to the last few thousand entries (on PostgreSQL
    with an entry for everyone by the pruning transaction: a table older than it is computed anew)."""

    student_pk = models.BigIntegerField(null=True)
    # PostgreSQL: the writing transaction's id (entries' ids are not in commit order there); SQLite:
    # a random value, telling a rolled-back entry from a later one given the same id.
    tag = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["tag"], name="gradebook_datachange_tag")]
