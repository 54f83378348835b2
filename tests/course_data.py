"""A course's grades made at once, for the page tests and the page benchmarks: rows written straight
into the gradebook's tables (bulk_create), as grading 2,000 notebooks would leave them, in seconds.

Each student hands in twice; every question has a result with a few checks (the second submission
scores higher); the hand-graded question has an answer, marked by hand for every other student on
their first submission, and that answer changes in the second submission for every third student
(so some marks show "answer changed since marked")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from autograder.assignment import Assignment as AssignmentSpec

CHECKS = 4  # per question


@dataclass
class Seeded:
    prefix: str
    students: list[str]  # their student ids, in order
    scores: dict[str, float]  # each student's final score (their latest submission; marks included)


def question_score(index: int, position: int, points: float, latest: bool) -> float:
    """Student ``index``'s automatic score on the question at ``position``: a spread of scores."""
    share = ((index % 5) + position % 2) / 5
    return points * share if latest else points * share / 2


def seed(spec: AssignmentSpec, count: int, prefix: str, accounts: bool = True) -> Seeded:
    """``count`` students on the roster (ids ``prefix00000``...), each with two graded submissions of
    ``spec``, in the service's database; with ``accounts``, every other one has a course account."""
    from django.contrib.auth.models import User

    from gradebook.models import Mark, Result, Student, Submission
    from service.accounts.models import Member
    from service.core.access import book

    assignment = book().sync_assignment(spec)
    names = [f"{prefix}{n:05d}" for n in range(count)]
    Student.objects.bulk_create(
        [
            Student(student_id=name, name=f"Student {name}", email=f"{name}@example.edu", on_roster=True)
            for name in names
        ],
        ignore_conflicts=True,  # the same students may hand in another assignment
    )
    students = list(Student.objects.filter(student_id__startswith=prefix).order_by("student_id"))[:count]
    if accounts:
        users = User.objects.bulk_create([User(username=f"u-{name}", password="!") for name in names[::2]])
        if users and users[0].pk is None:
            users = list(User.objects.filter(username__in=[u.username for u in users]).order_by("username"))
        Member.objects.bulk_create(
            [
                Member(user=user, role=Member.STUDENT, student=student)
                for user, student in zip(users, students[::2], strict=True)
            ]
        )
    start = datetime(2026, 11, 1, 9, tzinfo=UTC)
    rows = []
    for n, student in enumerate(students):
        for attempt in (0, 1):
            moment = start + timedelta(minutes=n, hours=attempt * 24)
            rows.append(
                Submission(
                    student=student,
                    assignment=assignment,
                    sha256=f"{n:032x}{attempt:032x}",
                    file=f"/submissions/{student.student_id}/{attempt}.ipynb",
                    submitted_at=moment,
                    graded_at=moment + timedelta(seconds=5),
                    graded_by="bench",
                    seconds=1.5,
                    grader_version="seeded",
                    reference="numpy",
                    sandbox="bubblewrap",
                )
            )
    Submission.objects.bulk_create(rows, batch_size=500)
    submissions = {
        (row.student_id, row.sha256[-1]): row.id
        for row in Submission.objects.filter(student__in=students, assignment=assignment).only(
            "id", "student_id", "sha256"
        )
    }
    results, marks, scores = [], [], {}
    manual = next((q for q in spec.questions if q.manual), None)
    for n, student in enumerate(students):
        total = 0.0
        for attempt in (0, 1):
            submission_id = submissions[(student.pk, str(attempt))]
            for position, question in enumerate(spec.questions):
                score = question_score(n, position, question.points, latest=attempt == 1)
                tests = [
                    {
                        "question": question.id,
                        "name": f"test_{question.id}_{c}",
                        "description": f"check {c}",
                        "status": "passed" if c < CHECKS * score / question.points else "failed",
                        "message": "" if c < CHECKS * score / question.points else "expected a different value",
                    }
                    for c in range(CHECKS)
                ]
                answers = {}
                if question.manual:
                    changed = attempt == 1 and n % 3 == 0
                    answers = {
                        f"{question.id}_link": f"the answer of {student.student_id}{' (edited)' if changed else ''}"
                    }
                results.append(
                    Result(
                        submission_id=submission_id,
                        question_id=question.id,
                        score=score,
                        max_score=question.points,
                        status="manual" if question.manual else ("passed" if score == question.points else "failed"),
                        feedback=f"{question.id}: {score:g} of {question.points:g}",
                        tests=tests,
                        answers=answers,
                    )
                )
                if attempt == 1 and not question.manual:
                    total += score
        if manual is not None and n % 2 == 0:
            first = submissions[(student.pk, "0")]
            item = manual.rubric[0] if manual.rubric else None
            marks.append(
                Mark(
                    student=student,
                    assignment=assignment,
                    question_id=manual.id,
                    submission_id=first,
                    score=0.0 if item else 1.0,
                    rubric=[item.id] if item else [],
                    adjustment=0.0,
                    comment="seeded",
                    marked_at=start,
                    marked_by="ta",
                )
            )
            total += item.points if item else 1.0
        elif manual is not None:
            total += question_score(n, spec.questions.index(manual), manual.points, latest=True)
        scores[student.student_id] = total
    Result.objects.bulk_create(results, batch_size=1000)
    Mark.objects.bulk_create(marks, batch_size=1000)
    return Seeded(prefix=prefix, students=names, scores=scores)
