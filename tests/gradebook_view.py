"""What a gradebook holds, read through the gradebook's own models (for assertions)."""

from __future__ import annotations

from pathlib import Path

from gradebook.book import Gradebook


def recorded(where: Path | str) -> dict[str, list[tuple[float, int]]]:
    """{student: [(score, number of question results) per submission, earliest first]} in the
    gradebook at a path, or at a database URL."""
    url = where if isinstance(where, str) and "://" in where else None
    with Gradebook.open(None if url else Path(where), url) as book:
        from gradebook.models import Submission

        table: dict[str, list[tuple[float, int]]] = {}
        for submission in book.objects(Submission).select_related("student").order_by("submitted_at", "id"):
            results = list(submission.results.using(book.alias).all())
            table.setdefault(submission.student.student_id, []).append(
                (sum(result.score for result in results), len(results))
            )
        return table


def hashes(path: Path, student: str) -> list[str]:
    with Gradebook.open(path) as book:
        from gradebook.models import Submission

        rows = book.objects(Submission).filter(student__student_id=student).order_by("submitted_at", "id")
        return [row.sha256 for row in rows]
